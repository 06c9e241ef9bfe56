"""Plausible wrong versions of one entity in an intended sentence, for forced-choice checks.

``variant_sentences(text, entity)`` writes the sentence again with that entity changed a
little, each variant one change: one letter or digit of a code replaced (by a symbol of the
same kind), the month or the day of a date changed, an amount off by 1, 10 or 100 or by one
digit, a clock time's hour, minute digit or half of the day changed. These are the errors a
speaker (or a TTS front end) makes; the speech judge asks the decoder whether the audio
fits one of them better than the intended value (``tasks.voice.verify``). Entities this
module cannot locate or vary (emails, names) get no variants and keep the transcript check.
"""

from __future__ import annotations

import calendar
import re
import string
from collections.abc import Iterator

from tasks.judges.offline.entities import CallerEntity

_SYMBOLIC = {"code", "spelled", "flight_number", "seat", "gate", "phone", "airport_code"}
_MONTHS = list(calendar.month_name)[1:]
_MONTH_DAY = re.compile(
    r"\b(" + "|".join(_MONTHS) + r")\s+(\d{1,2})(st|nd|rd|th)?\b", re.IGNORECASE
)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_AMOUNT = re.compile(r"\$?\d[\d,]*(?:\.\d+)?")
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})(\s*[AaPp]\.?[Mm]\.?)?")
# Days a month may have in any year (February 29 exists in leap years).
_DAYS_IN = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def _swap(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def _symbol_variants(span: str) -> Iterator[str]:
    for i, char in enumerate(span):
        if char.isdigit():
            pool = string.digits
        elif char.isalpha():
            pool = string.ascii_uppercase if char.isupper() else string.ascii_lowercase
        else:
            continue
        for other in pool:
            if other != char:
                yield span[:i] + other + span[i + 1 :]


def _locate_symbols(text: str, entity: CallerEntity) -> re.Match[str] | None:
    symbols = re.sub(r"[^0-9a-z]", "", entity.canonical.lower())
    if not symbols:
        return None
    pattern = r"(?<![0-9A-Za-z])" + r"[\s-]?".join(map(re.escape, symbols)) + r"(?![0-9A-Za-z])"
    return re.search(pattern, text, re.IGNORECASE)


def _code_variants(text: str, entity: CallerEntity) -> list[str]:
    match = _locate_symbols(text, entity)
    if match is None:
        return []
    return [_swap(text, *match.span(), v) for v in _symbol_variants(match.group(0))]


def _amount_variants(text: str, entity: CallerEntity) -> list[str]:
    want = entity.canonical.replace(",", "")
    for match in _AMOUNT.finditer(text):
        written = match.group(0)
        if written.replace(",", "").lstrip("$") != want:
            continue
        whole, _, cents = want.partition(".")
        n = int(whole)
        others = {n + d for d in (-100, -10, -1, 1, 10, 100)} | {n * 10, n // 10}
        others |= {int(v) for v in _symbol_variants(whole) if not v.startswith("0") or v == "0"}
        dollar = "$" if written.startswith("$") else ""
        tail = f".{cents}" if cents else ""
        return [
            _swap(text, *match.span(), f"{dollar}{m}{tail}")
            for m in sorted(others)
            if m > 0 and m != n
        ]
    return []


def _day_month_pairs(month: int, day: int) -> Iterator[tuple[int, int]]:
    for other in range(1, 13):
        if other != month and day <= _DAYS_IN[other - 1]:
            yield other, day
    for other in range(1, _DAYS_IN[month - 1] + 1):
        if other != day:
            yield month, other


def _date_variants(text: str, entity: CallerEntity) -> list[str]:
    for match in _MONTH_DAY.finditer(text):
        month = [m.lower() for m in _MONTHS].index(match.group(1).lower()) + 1
        day = int(match.group(2))
        if f"{match.group(1).lower()} {day}" != entity.canonical or day > _DAYS_IN[month - 1]:
            continue
        return [
            _swap(text, *match.span(), f"{_MONTHS[m - 1]} {d}")
            for m, d in _day_month_pairs(month, day)
        ]
    for match in _ISO.finditer(text):
        year, month, day = (int(g) for g in match.groups())
        if " ".join(match.groups()) != entity.canonical or not 1 <= month <= 12:
            continue
        return [
            _swap(text, *match.span(), f"{year:04d}-{m:02d}-{d:02d}")
            for m, d in _day_month_pairs(month, day)
        ]
    return []


def _time_variants(text: str, entity: CallerEntity) -> list[str]:
    for match in _CLOCK.finditer(text):
        hour, minute, half = int(match.group(1)), match.group(2), match.group(3) or ""
        clock = hour + (12 if "p" in half.lower() and hour < 12 else 0)
        clock -= 12 if "a" in half.lower() and hour == 12 else 0
        if f"{clock}:{minute}" != entity.canonical:
            continue
        top = 12 if half else 23
        out = [f"{h}:{minute}{half}" for h in range(0 if top == 23 else 1, top + 1) if h != hour]
        out += [f"{hour}:{m}{half}" for m in _symbol_variants(minute) if int(m) < 60]
        if half:
            flip = half.translate(str.maketrans("AaPp", "PpAa"))
            out.append(f"{hour}:{minute}{flip}")
        return [_swap(text, *match.span(), v) for v in out]
    return []


def variant_sentences(text: str, entity: CallerEntity) -> list[str]:
    """``text`` with ``entity`` changed in one plausible way, one sentence per variant
    (empty when the entity is of a kind not varied here or cannot be found in ``text``)."""
    if entity.type in _SYMBOLIC:
        found = _code_variants(text, entity)
    elif entity.type == "amount":
        found = _amount_variants(text, entity)
    elif entity.type == "date":
        found = _date_variants(text, entity)
    elif entity.type == "time":
        found = _time_variants(text, entity)
    else:
        found = []
    return [v for v in dict.fromkeys(found) if v != text]
