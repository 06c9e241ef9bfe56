"""The number, letter and calendar vocabulary of ``tasks.spoken``: the tables live once,
in :mod:`scenarios.spoken_forms` (the scenario generator says values the same way)."""

from __future__ import annotations

from scenarios.spoken_forms import (
    CARDINAL_VALUES,
    DIGIT_WORDS,
    MONTH_ABBREVIATIONS,
    MONTHS,
    NATO,
    ONES,
    ORDINAL_ONES,
    ORDINAL_VALUES,
    SCALES,
    SPOKEN_VOCABULARY,
    TENS,
)

__all__ = [
    "CARDINAL_VALUES",
    "DIGIT_WORDS",
    "MONTHS",
    "MONTH_ABBREVIATIONS",
    "NATO",
    "ONES",
    "ORDINAL_ONES",
    "ORDINAL_VALUES",
    "SCALES",
    "SPOKEN_VOCABULARY",
    "TENS",
]
