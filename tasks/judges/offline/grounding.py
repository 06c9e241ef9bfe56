"""Evidence an agent may rely on, and checks that a stated value comes from it.

A :class:`Sources` collects, in conversation order, what the caller said, what the tools
returned and what the policy text says, in canonical and compact forms, plus every number
they contain. A value is *grounded* when its compact form appears in those sources; an
amount also when simple arithmetic on known money figures gives it
(:mod:`~tasks.judges.offline.arithmetic`), a date also when date arithmetic on known dates
and periods gives it (:mod:`~tasks.judges.offline.dates`).
"""

from __future__ import annotations

import re
from datetime import timedelta
from functools import lru_cache
from typing import Any

from tasks.judges.offline.arithmetic import Figures, count_fields, money_fields
from tasks.judges.offline.dates import Calendar, month_day, month_day_forms, parse_day, spoken_dates
from tasks.judges.offline.entities import canonical, spoken_norm, written_canonical
from tasks.spoken.words import MONTHS

PLACEHOLDERS = {
    "",
    "unknown",
    "?",
    "??",
    "n/a",
    "na",
    "none",
    "null",
    "placeholder",
    "tbd",
    "xxx",
    "xxxxxx",
    "abc123",
    "123456",
    "000000",
    "test",
    "string",
    "unknown_user",
    "not_provided",
}
RELATIVE_DAYS = re.compile(
    r"\b(today|tonight|tomorrow|yesterday|this (morning|afternoon|evening))\b"
)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")


def flatten(value: Any) -> list[str]:
    """Every scalar inside a JSON-like value, as text."""
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [str(k), *flatten(v)]]
    if isinstance(value, list):
        return [s for v in value for s in flatten(v)]
    return [] if value is None else [str(value)]


def numbers_in(text: str) -> set[float]:
    return {float(n) for n in _NUMBER.findall(text.replace(",", ""))}


def _squeeze(text: str) -> str:
    """Compact form with zero padding inside identifiers dropped: 'B06' == 'B6'."""
    return re.sub(r"(?<=[a-z])0+(?=\d)", "", re.sub(r"[^a-z0-9@]", "", text.lower()))


def tool_failed(response: Any) -> bool:
    """A tool response reporting an error (``"status": "error"`` or ``"is_error": true``)."""
    if not isinstance(response, dict):
        return False
    return str(response.get("status", "")).lower() == "error" or response.get("is_error") is True


def is_placeholder(value: Any) -> bool:
    text = str(value).strip().lower()
    return text in PLACEHOLDERS or bool(re.fullmatch(r"(.)\1{3,}", text))


@lru_cache(maxsize=64)
def policy_amounts(policy: str) -> frozenset[float]:
    """Dollar figures of a policy text, written ("$75") or spoken ("75 dollars")."""
    text = policy + " " + spoken_norm(policy)
    return frozenset(float(n.replace(",", "")) for n in re.findall(r"\$(\d[\d,]*(?:\.\d+)?)", text))


def _amounts(norm: str) -> set[float]:
    return {float(n) for n in re.findall(r"\$(\d+(?:\.\d+)?)", norm)}


class Sources:
    """Grounding evidence accumulated over the conversation."""

    def __init__(self, policy: str = "", current_date_time: str = "", schema: str = "") -> None:
        self._joined_cache: dict[str, tuple[int, str]] = {}
        self.schema_compact = _squeeze(schema)
        self.user_numbers: set[float] = set()
        self.user_canonical = ""
        self.user_raw = ""
        self.tool_raw = ""
        self.tool_canonical = ""
        self.tool_compact = ""
        self.user_compact = ""
        self.numbers: set[float] = set()
        self.policy_canonical = canonical(policy) if policy else ""
        self.policy_compact = re.sub(r"[^a-z0-9]", "", self.policy_canonical)
        self.policy_numbers = numbers_in(self.policy_canonical)
        self.policy_money = set(policy_amounts(policy)) if policy else set()
        self.money = Figures()
        self.money.add(self.policy_money)
        self.today = parse_day(current_date_time)
        self.calendar = Calendar(self.today)
        self.calendar.add_text(self.policy_canonical, anchors=False)
        if self.today:
            self.add_tool_text(self.today.isoformat())

    def add_user(self, text: str) -> None:
        self.user_raw += " " + text
        norm = spoken_norm(text)
        canon = canonical(text)
        said_dates = " ".join(month_day(d) for d in sorted(spoken_dates(norm)))
        self.user_canonical += f" {canon} {said_dates}"
        # Squeezed token by token: "are 0608" must keep the zero of "0608".
        self.user_compact += " " + " ".join(_squeeze(tok) for tok in norm.split())
        self.numbers |= numbers_in(canon)
        self.user_numbers |= numbers_in(canon)
        self.money.add(_amounts(norm), {int(n) for n in numbers_in(canon) if n.is_integer()})
        self.calendar.add_text(norm)

    def add_tool_response(self, response: Any) -> None:
        self.add_tool_text(" ; ".join(flatten(response)))
        self.money.add(money_fields(response), count_fields(response))
        self.calendar.add_fields(response)

    def add_tool_text(self, text: str) -> None:
        self.tool_raw += " " + text
        # Clock times inside ISO date-times ("2026-07-13T10:15:00") are times said aloud.
        clocks = " ".join(re.findall(r"(?<=\dT)\d{2}:\d{2}", text))
        canon = f"{written_canonical(text)} {month_day_forms(text)} {written_canonical(clocks)}"
        self.tool_canonical += " " + canon
        self.tool_compact += " " + " ".join(_squeeze(tok) for tok in re.split(r"[;,\s]+", text))
        self.numbers |= numbers_in(text)
        self.calendar.add_text(text.lower(), machine=True)

    def has_text(self, value: str, include_policy: bool = True) -> bool:
        """The value's compact form occurs in caller text, tool results (or the policy).
        Substring semantics on purpose: spoken identifiers are split and joined unevenly."""
        key = _squeeze(canonical(value))
        if not key:
            return False
        if key in self._joined("user_compact") or key in self._joined("tool_compact"):
            return True
        return include_policy and len(key) >= 3 and key in self.policy_compact

    def in_schema(self, value: str) -> bool:
        """The value occurs in the tool schemas (format examples such as "MGH-04B")."""
        key = _squeeze(canonical(value))
        return len(key) >= 3 and key in self.schema_compact

    def _joined(self, name: str) -> str:
        """A compact haystack without its separators, rebuilt only after it grew."""
        text = getattr(self, name)
        cached = self._joined_cache.get(name)
        if cached is None or cached[0] != len(text):
            cached = (len(text), text.replace(" ", ""))
            self._joined_cache[name] = cached
        return cached[1]

    def has_word(self, word: str) -> bool:
        """``word`` is a token of caller text, tool results or the policy."""
        needle = f" {word.lower()} "
        haystacks = (self.user_canonical, self.tool_canonical, self.policy_canonical)
        return any(needle in f" {h} " for h in haystacks) or bool(
            re.search(rf"(?:^|[\W_]){re.escape(word.lower())}(?:[\W_]|$)", self.tool_raw.lower())
        )

    def has_tokens(self, value: str) -> bool:
        """The canonical token run occurs in caller text, tool results or the policy."""
        needle = f" {canonical(value)} "
        haystacks = (self.user_canonical, self.tool_canonical, self.policy_canonical)
        return any(needle in f" {h} " for h in haystacks)

    def has_number(self, value: float, derived: bool = True) -> bool:
        pool = self.numbers | self.policy_numbers
        if any(abs(value - n) < 0.005 for n in pool):
            return True
        if not derived:
            return False
        candidates = sorted(n for n in pool if 0 < abs(n) < 100000)[:300]
        targets = {round(value, 2)}
        for i, a in enumerate(candidates):
            for b in candidates[i:]:
                if round(a + b, 2) in targets or round(abs(a - b), 2) in targets:
                    return True
        return False

    def has_amount(self, value: float) -> bool:
        """An amount is grounded when it is a known number, or simple arithmetic on money
        figures (tool fields named like fares/fees/totals, dollar figures of the policy,
        amounts the caller said) and counts gives it (:mod:`.arithmetic`)."""
        return self.has_number(value, derived=False) or self.money.derivable(value)

    def date_grounded(self, iso: str, slack: bool = True) -> bool:
        """A date argument: one the caller said, a tool returned or the calendar derives,
        or (with ``slack``) one day either side of such a date or of today: next-day and
        previous-day searches are ordinary, a birth date one day off is not."""
        day = parse_day(iso)
        if day is None:
            return self.has_text(iso)
        spoken = f"{MONTHS[day.month - 1]} {day.day}"
        if iso in self.tool_raw or f" {spoken} " in f" {self.user_canonical} ":
            return True
        nearby = (day, day - _ONE_DAY, day + _ONE_DAY) if slack else (day,)
        return any(self.calendar.date_grounded(d.month, d.day, d.year) for d in nearby)

    def stated_date_grounded(self, month: int, day: int, year: int | None = None) -> bool:
        """A date the agent states: a known or derived date (no one-day slack)."""
        return self.calendar.date_grounded(month, day, year)

    def month_grounded(self, month: int, year: int) -> bool:
        return self.calendar.month_grounded(month, year)


_ONE_DAY = timedelta(days=1)
