"""When the reference agent re-asks the caller after a failed lookup, from what it got.

A deployed agent sees only the response of its call. So the decision to ask the caller
to spell the values it heard and try again reads that response alone: its status, its
``error_type`` and its message. It never reads the golden trace's response to the call:
the agent cannot know the outcome of a call (or of its retry) before making it.

A *mismatch* is an error that says a value the caller gave does not match: the
credentials were rejected (``authentication_failed``, ``invalid_otp``, a message "...
does not match ..."), the value has the wrong shape (``invalid_<field>_format``), or the
message names one of the heard values as the thing not found ("Reservation ZK3FFW not
found", "Visa petition EHZ3328710672 not found for EMP921414"). An error about something
else ("No I-9 record found for EMP609231", "Shift is within the 24-hour swap lockout
window") is an answer, not a mishearing: the agent relays it as its plan says.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MISMATCH_ERROR_TYPES = frozenset({"authentication_failed", "invalid_otp"})
_NO_MATCH = re.compile(r"\bdoes not match\b", re.IGNORECASE)


def is_mismatch(response: dict[str, Any], heard_values: Iterable[Any]) -> bool:
    """The call failed because a caller-supplied value did not match (see module doc)."""
    if response.get("status") != "error":
        return False
    kind = str(response.get("error_type") or "")
    message = str(response.get("message") or "")
    if kind in MISMATCH_ERROR_TYPES or _NO_MATCH.search(message):
        return True
    if kind.startswith("invalid_") and kind.endswith("_format"):
        return True
    if "not_found" not in kind:
        return False
    return any(
        re.search(rf"{re.escape(str(v))}'?\s+(was\s+)?not found", message, re.IGNORECASE)
        for v in heard_values
        if str(v).strip()
    )
