"""Written forms to canonical form: "$1,250.50", "March 25, 2026", "4:00 PM", "TOU-77A".

Runs before the spoken-word grammar in ``tasks.spoken.normalize`` so that written and
spoken input end up in the same canonical form.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tasks.spoken.words import MONTH_ABBREVIATIONS, MONTHS, SPOKEN_VOCABULARY

_MONTH_NUMBER = {m: i + 1 for i, m in enumerate(MONTHS)}


def format_amount(dollars: int, cents: int | None) -> str:
    return f"${dollars}" if not cents else f"${dollars}.{cents:02d}"


def format_date(year: int | None, month: int, day: int) -> str | None:
    if not (1 <= day <= 31 and 1 <= month <= 12):
        return None
    if year is None:
        return f"{MONTHS[month - 1]} {day}"
    return f"{year:04d}-{month:02d}-{day:02d}"


def format_time(hour: int, minute: int, ampm: str | None) -> str | None:
    if minute > 59:
        return None
    if ampm is None:
        return f"{hour:02d}:{minute:02d}" if hour <= 23 else None
    if not 1 <= hour <= 12:
        return None
    hour24 = hour % 12 + (12 if ampm.lower() == "p" else 0)
    return f"{hour24:02d}:{minute:02d}"


def _month_number(word: str) -> int:
    word = word.lower().rstrip(".")
    return _MONTH_NUMBER.get(word) or MONTH_ABBREVIATIONS[word[:3]]


_MONTH_PATTERN = "|".join(MONTHS) + "|" + "|".join(MONTH_ABBREVIATIONS)
_WRITTEN_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str | None]]] = [
    (
        re.compile(r"\$\s*(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?(?!\d)"),
        lambda m: format_amount(
            int(m[1].replace(",", "")), int(m[2].ljust(2, "0")) if m[2] else None
        ),
    ),
    (
        re.compile(
            rf"\b({_MONTH_PATTERN})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}})\b)?",
            re.IGNORECASE,
        ),
        lambda m: format_date(int(m[3]) if m[3] else None, _month_number(m[1]), int(m[2])),
    ),
    (
        re.compile(
            rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_PATTERN})\b\.?(?:,?\s+(\d{{4}})\b)?",
            re.IGNORECASE,
        ),
        lambda m: format_date(int(m[3]) if m[3] else None, _month_number(m[2]), int(m[1])),
    ),
    (
        re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b"),
        lambda m: format_date(int(m[3]), int(m[1]), int(m[2])),
    ),
    (
        re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*([AaPp])\.?\s?[Mm]\b\.?"),
        lambda m: format_time(int(m[1]), int(m[2] or 0), m[3]),
    ),
    (re.compile(r"(?<=\d),(?=\d{3}\b)"), lambda m: ""),
    # Hyphens inside digit-bearing groups are formatting ("TOU-77A", "617-555-0148"), but an
    # ISO date keeps them.
    (
        re.compile(r"(?<![A-Za-z0-9-])(?!\d{4}-\d{2}-\d{2}\b)[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+\b"),
        lambda m: m[0].replace("-", "") if re.search(r"\d", m[0]) else None,
    ),
]


def prepare_written(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u2013", "-")
    # Punctuation between "$" and its number would be stripped later, leaving "$ 0" that a
    # second pass reads as "$0"; reading it as "$0" now keeps normalisation idempotent.
    text = re.sub(r"\$(?:[.,!?;:]+\s+|\s+[.,!?;:]+)(?=\d)", "$", text)
    for pattern, rewrite in _WRITTEN_RULES:
        text = pattern.sub(lambda m, f=rewrite: _keep_if_none(m, f(m)), text)  # type: ignore[misc]
    # Spoken compounds ("twenty-five", "twenty-fifth") split into their words.
    return re.sub(
        r"\b([A-Za-z]+)-([A-Za-z]+)\b",
        lambda m: f"{m[1]} {m[2]}" if m[1].lower() in SPOKEN_VOCABULARY else m[0],
        text,
    )


def _keep_if_none(match: re.Match[str], replacement: str | None) -> str:
    return match[0] if replacement is None else replacement
