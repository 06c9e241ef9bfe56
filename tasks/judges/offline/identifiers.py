"""Is an identifier the agent used grounded? Beyond a literal match in the sources.

Spoken-form normalising glues what was said letter by letter: "employee I D E M P eight
four..." becomes ``IDEMP84...`` and "two P T O days" ``2PTO``; two codes read one after the
other ("B L D one F L three") become one. And agents map a caller's words onto a code
format without a lookup ("floor two" -> ``FL2``), which the faithfulness rubric allows as
an unambiguous domain mapping. These rules accept such identifiers when every piece is
grounded on its own; a fabricated identifier has a piece no source holds. Long digit runs
are never accepted as a piece of their own: a request ID made up from the caller's
employee number ("REQ-SW-048271" for EMP048271) stays ungrounded.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tasks.judges.offline.grounding import Sources

_MAPPED = re.compile(r"([A-Za-z]{1,4})-?(\d{1,4})")


def code_grounded(value: str, src: Sources, context: str = "") -> bool:
    """A literal match, a format example of the tool schemas, a domain mapping of a number
    the caller said, or one of the glued forms (see the module docstring). ``context``
    holds the words around the code (its sentence, or a parameter name)."""
    token = re.sub(r"[^A-Za-z0-9]", "", value)
    if not token:
        return False
    if src.has_text(value) or src.in_schema(value) or mapped_code(token, context, src):
        return True
    return _labelled(token, src) or _counted_word(token, src) or _joined_codes(token, src, 3)


def _labelled(token: str, src: Sources) -> bool:
    """A label word the sources use, then a grounded identifier: ``ID`` + ``EMP846385``,
    ``NPI`` + ``8370987661``."""
    for cut in range(2, min(5, len(token) - 2)):
        label, rest = token[:cut], token[cut:]
        if label.isalpha() and src.has_word(label) and src.has_text(rest):
            return True
    return False


def _counted_word(token: str, src: Sources) -> bool:
    """A small number before a word the sources use: "two P T O days" -> ``2PTO``."""
    match = re.fullmatch(r"(\d{1,2})([A-Za-z]{2,6})", token)
    return match is not None and src.has_word(match.group(2))


def _joined_codes(token: str, src: Sources, pieces: int) -> bool:
    """Grounded identifiers read one after another: ``FL3`` + ``BLD1``, ``3`` + ``BLD3``."""
    if _code_piece(token, src) or pieces < 2:
        return _code_piece(token, src)
    for cut in range(1, len(token)):
        head = token[:cut]
        small_number = head.isdigit() and len(head) <= 2 and src.has_number(float(head), False)
        if (small_number or _code_piece(head, src)) and _joined_codes(token[cut:], src, pieces - 1):
            return True
    return False


def _code_piece(piece: str, src: Sources) -> bool:
    """An identifier piece: letters and digits, three symbols or more, in the sources."""
    mixed = any(c.isdigit() for c in piece) and any(c.isalpha() for c in piece)
    return mixed and len(piece) >= 3 and src.has_text(piece)


def mapped_code(token: str, context: str, src: Sources) -> bool:
    """``FL2`` for "floor 2": letters abbreviating a context word (its first letter, then a
    subsequence: FL < floor, BLD < building) and a number the caller said."""
    match = _MAPPED.fullmatch(token)
    if not match:
        return False
    letters, number = match.group(1).lower(), float(match.group(2))
    if number not in src.user_numbers:
        return False
    return any(_abbreviates(letters, word) for word in _words(context))


@lru_cache(maxsize=4096)
def _words(context: str) -> tuple[str, ...]:
    return tuple(w for w in re.findall(r"[a-z]+", context.lower()) if len(w) >= 4)


def _abbreviates(letters: str, word: str) -> bool:
    if not word.startswith(letters[0]):
        return False
    rest = iter(word[1:])
    return all(c in rest for c in letters[1:])


def email_grounded(value: str, src: Sources) -> bool:
    """An email address, or a website read as one ("the tool at netdiag dot company dot
    com" is read as tool@netdiag.company.com): grounded when the address is known, or
    when its domain is and the part before it is a plain word."""
    if src.has_text(value):
        return True
    local, _, domain = value.partition("@")
    return bool(domain) and local.isalpha() and (src.has_text(domain) or src.in_schema(domain))
