"""A parameter's format, as the domain's tool schema documents it.

What a deployed agent knows about a value before it hears it: the parameter's name and
description in the tool schema ("in the format EMP followed by 6 digits (e.g. EMP048271)",
"6-character alphanumeric booking confirmation code", "Passenger last name"). The shape of
the schema's example (:func:`tasks.voice.stt.code_shape`) or of its "N-digit" /
"N-character" phrase is the format; without one, a generic rule per kind: a name is
letters, a code has digits.

The kind (date, time, number, text) is still read from the trace value's type
(:func:`~tasks.simulate.dialogue.values.value_kind`): the schemas document it ("in
YYYY-MM-DD format", ``type: integer``), but not in one machine-readable way across the
domains. It is the parameter's type, never its content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tasks.simulate.dialogue.values import SlotKind, signature
from tasks.voice.stt import code_shape

_EXAMPLE = re.compile(r"\be\.g\.,?\s*([A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])")
_COUNTED = re.compile(r"\b(\d+)[- ](digit|character)s?\b", re.IGNORECASE)


@dataclass(frozen=True)
class ParamFormat:
    """The format of one parameter: its kind, its schema shape, whether it is a name."""

    kind: SlotKind = "text"
    shape: str | None = None  # code_shape symbols: L letter, D digit, X either, - separator
    name: bool = False
    example: str | None = None

    @property
    def example_sig(self) -> str:
        return signature(self.example) if self.example else ""

    def fits(self, sig: str) -> bool:
        """Whether a heard signature has this format (schema shape, else the kind's rule)."""
        if not sig:
            return False
        if self.shape:
            slots = self.shape.replace("-", "")
            return len(sig) == len(slots) and all(map(_fits_symbol, slots, sig))
        if self.name:
            return sig.isalpha()
        return any(c.isdigit() for c in sig)


def _fits_symbol(slot: str, ch: str) -> bool:
    return ch.isdigit() if slot == "D" else ch.isalpha() if slot == "L" else ch.isalnum()


def param_format(kind: SlotKind, name: str = "", description: str = "") -> ParamFormat:
    """The format the schema gives a parameter (``name`` and ``description``)."""
    example_match = _EXAMPLE.search(description)
    example = example_match[1] if example_match else None
    shape = code_shape(example) if example else None
    counted = _COUNTED.search(description)
    if shape is None and counted is not None:
        symbol = "D" if counted[2].lower() == "digit" else "X"
        shape = symbol * int(counted[1])
    is_name = "name" in name.lower() or "name" in description.lower()
    return ParamFormat(kind=kind, shape=shape, name=is_name and shape is None, example=example)
