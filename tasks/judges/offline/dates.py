"""Calendar evidence for the offline judges: dates the sources give, the periods they name,
and dates an agent may derive from them.

An agent is allowed to do date arithmetic on what it was told: "eligible again 180 days
after your last change" turns a tool's ``next_eligible_date`` and the policy's 180 days into
the date of the last change; "your laptop is 38 months old" and today's date give its
purchase month. :class:`Calendar` collects the *anchors* (today, every ISO date in a tool
result or caller turn, every month-day the caller said) and the *periods* (``N days`` /
``weeks`` / ``months`` / ``years`` in the policy, tool results and caller turns, and
numeric tool fields named after such a unit), and accepts a stated date when it is an
anchor or an anchor shifted by one period or by the difference of two periods of the same
unit ("replaced after 36 months, 15 months old": 21 months from today). Day-based shifts
must land on the day; month-based ones within one month, because month counts ("15 months
old") are rounded down by whoever states them.

This module imports nothing else of the offline judges (``entities`` imports it).
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta
from typing import Any

from tasks.spoken.words import MONTHS

ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_DIGIT_DATE = re.compile(
    r"(?<![\d.])((?:19|20)\d\d)[ ,/-]{0,3}(0[1-9]|1[0-2])[ ,/-]{0,3}([0-3]\d)(?![\d.])"
)
_COMPACT_DATE = re.compile(r"(?<![\d])(20\d\d)(0[1-9]|1[0-2])([0-3]\d)(?!\d)")
_MONTH_WORDS = "|".join(MONTHS)
MONTH_YEAR = re.compile(rf"\b({_MONTH_WORDS}) (1[89]\d\d|20\d\d)\b")
_MONTH_DAY = re.compile(rf"\b({_MONTH_WORDS}) (\d{{1,2}})(?:st|nd|rd|th)?\b(?![:\d])")
_PERIOD = re.compile(
    r"(?<![\d.])(\d{1,4})[ -](?:business |calendar |working )?(day|night|week|month|year)s?\b"
)
_UNIT_KEY = re.compile(r"(?:^|_)(day|night|week|month|year)s?(?:_|$)")
_DAYS_PER_UNIT = {"day": 1, "night": 1, "week": 7}
MAX_PERIODS = 40  # per unit: enough for any conversation, bounds the pairwise sums
MONTH_SLACK = 31  # days: month counts are rounded, so a month-based date may be a month off


def parse_day(text: str) -> date | None:
    """The first ISO date in ``text`` as a date (None if there is none or it is invalid)."""
    match = ISO_DATE.search(text or "")
    return _iso(match) if match else None


def _iso(match: re.Match[str]) -> date | None:
    try:
        return date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None


def iso_dates(text: str) -> set[date]:
    return {d for m in ISO_DATE.finditer(text or "") if (d := _iso(m))}


def compact_dates(text: str) -> set[date]:
    """Dates written inside identifiers ("FL_SW254_20260413") of machine text."""
    return {d for m in _COMPACT_DATE.finditer(text or "") if (d := _iso(m))}


def spoken_dates(norm: str) -> set[date]:
    """ISO dates plus dates a caller read out as digits ("one nine nine one dash zero nine
    dash one four" normalises to 19910914, "..., zero nine, one four" to 1991 09 14)."""
    return iso_dates(norm) | {d for m in _DIGIT_DATE.finditer(norm) if (d := _iso(m))}


def month_day(day: date) -> str:
    return f"{MONTHS[day.month - 1]} {day.day}"


def month_day_forms(text: str) -> str:
    """'march 20' for every ISO date in ``text``, so written dates meet spoken ones."""
    return " ".join(month_day(d) for d in sorted(iso_dates(text)))


def fix_month_year(norm: str) -> str:
    """'july 20 23' -> 'july 2023': "July twenty twenty three" names a month of a year (a
    day would be "twentieth"); the spoken-form normaliser reads it as a day and a number."""
    return re.sub(rf"\b({_MONTH_WORDS}) (19|20) (\d\d)\b(?![:\d])", r"\1 \2\3", norm)


def month_days(norm: str) -> set[tuple[int, int]]:
    """(month, day) of every 'march 20' in normalised text (plus its ISO dates)."""
    found = {(MONTHS.index(m.group(1)) + 1, int(m.group(2))) for m in _MONTH_DAY.finditer(norm)}
    return found | {(d.month, d.day) for d in iso_dates(norm)}


def shift_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


class Calendar:
    """Anchors and periods collected over a conversation (see the module docstring)."""

    def __init__(self, today: date | None = None) -> None:
        self.today = today
        self.anchors: set[date] = {today} if today else set()
        self.spoken: set[tuple[int, int]] = set()
        self.periods: dict[str, set[int]] = {"day": set(), "month": set()}
        self._candidates: tuple[set[date], list[date]] | None = None

    def add_text(self, norm: str, *, anchors: bool = True, machine: bool = False) -> None:
        """Periods named in normalised text; its dates too when ``anchors``: dates inside
        identifiers of ``machine`` text (tool results), digit-read dates of spoken text."""
        for m in _PERIOD.finditer(norm):
            self._add_period(int(m.group(1)), m.group(2))
        if anchors:
            self.anchors |= compact_dates(norm) if machine else spoken_dates(norm)
            self.anchors |= iso_dates(norm)
            self.spoken |= month_days(norm)
        self._candidates = None

    def add_fields(self, value: Any, key: str = "") -> None:
        """Numeric tool fields named after a unit (``days_until_expiration``, ...)."""
        if isinstance(value, dict):
            for k, v in value.items():
                self.add_fields(v, str(k))
        elif isinstance(value, list):
            for v in value:
                self.add_fields(v, key)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            unit = _UNIT_KEY.search(key.lower())
            if unit and 0 < value < 10000 and float(value).is_integer():
                self._add_period(int(value), unit.group(1))
                self._candidates = None

    def _add_period(self, count: int, unit: str) -> None:
        if unit in _DAYS_PER_UNIT:
            bucket, count = "day", count * _DAYS_PER_UNIT[unit]
        else:
            bucket, count = "month", count * (12 if unit == "year" else 1)
        if count > 0 and len(self.periods[bucket]) < MAX_PERIODS:
            self.periods[bucket].add(count)

    def _offsets(self, bucket: str) -> set[int]:
        """Single periods; for months also the difference of two ("replaced after 36
        months, 15 months old": 21 more months). Day periods are taken one at a time: the
        policies name many small ones (7 days, 3 nights) whose differences would cover
        every nearby date."""
        base = sorted(n for n in self.periods[bucket] if bucket == "month" or n >= 2)
        out = set(base)
        if bucket == "month":
            out |= {b - a for i, a in enumerate(base) for b in base[i + 1 :]}
        return out

    def candidates(self) -> tuple[set[date], list[date]]:
        """Exact dates (anchors and day-based derivations) and month-based derivations
        (checked with a one-month tolerance)."""
        if self._candidates is None:
            exact = set(self.anchors)
            anchors = sorted(self.anchors | self._spoken_anchors())
            for n in self._offsets("day"):
                step = timedelta(days=n)
                exact |= {a + step for a in anchors} | {a - step for a in anchors}
            loose = [
                d
                for n in self._offsets("month")
                for a in anchors
                for s in (1, -1)
                if (d := _shift(a, s * n)) is not None
            ]
            self._candidates = (exact, loose)
        return self._candidates

    def _spoken_anchors(self) -> set[date]:
        """Month-days the caller said, placed in the year around today."""
        if self.today is None:
            return set()
        out = set()
        for month, day in self.spoken:
            for year in (self.today.year, self.today.year + 1):
                try:
                    out.add(date(year, month, day))
                except ValueError:
                    continue
        return out

    def date_grounded(self, month: int, day: int, year: int | None = None) -> bool:
        """A stated date (year optional) is an anchor, a caller's month-day, or derived."""
        if year is None and (month, day) in self.spoken:
            return True
        exact, loose = self.candidates()
        if year is not None:
            stated = _date(year, month, day)
            if stated is None:
                return False
            return stated in exact or any(abs((stated - d).days) <= MONTH_SLACK for d in loose)
        if any((d.month, d.day) == (month, day) for d in exact):
            return True
        for cand in loose:
            for y in (cand.year - 1, cand.year, cand.year + 1):
                stated = _date(y, month, day)
                if stated is not None and abs((stated - cand).days) <= MONTH_SLACK:
                    return True
        return False

    def month_grounded(self, month: int, year: int) -> bool:
        """A stated month of a year holds an exact candidate or is near a derived one."""
        first = date(year, month, 1)
        last = date(year, month, calendar.monthrange(year, month)[1])
        exact, loose = self.candidates()
        slack = timedelta(days=MONTH_SLACK)
        return any(first <= d <= last for d in exact) or any(
            first - slack <= d <= last + slack for d in loose
        )


def _shift(day: date, months: int) -> date | None:
    try:
        return shift_months(day, months)
    except ValueError:
        return None


def _date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None
