"""Evidence an agent may rely on, and checks that a stated value comes from it.

A :class:`Sources` collects, in conversation order, what the caller said, what the tools
returned and what the policy text says, in canonical and compact forms, plus every number
they contain. A value is *grounded* when its compact form appears in those sources, or (for
amounts) when it is one of their numbers or the sum/difference of two of them.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from tasks.judges.offline.entities import canonical, written_canonical
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
_ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")


def flatten(value: Any) -> list[str]:
    """Every scalar inside a JSON-like value, as text."""
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [str(k), *flatten(v)]]
    if isinstance(value, list):
        return [s for v in value for s in flatten(v)]
    return [] if value is None else [str(value)]


def numbers_in(text: str) -> set[float]:
    return {float(n) for n in _NUMBER.findall(text.replace(",", ""))}


def month_day_forms(text: str) -> str:
    """'march 20' for every ISO date in ``text``, so tool dates meet spoken dates."""
    return " ".join(_month_day(m) for m in _ISO_DATE.finditer(text))


def _month_day(match: re.Match[str]) -> str:
    month = int(match.group(2))
    return f"{MONTHS[month - 1]} {int(match.group(3))}" if 1 <= month <= 12 else ""


def _squeeze(text: str) -> str:
    """Compact form with zero padding inside identifiers dropped: 'B06' == 'B6'."""
    return re.sub(r"(?<=[a-z])0+(?=\d)", "", re.sub(r"[^a-z0-9@]", "", text.lower()))


_MONEY_FIELD = re.compile(
    r"fare|fee|amount|price|cost|total|paid|credit|refund|charge|collected|diff"
)


def money_fields(value: Any, key: str = "") -> set[float]:
    """Numbers stored under money-like keys of a tool response."""
    if isinstance(value, dict):
        return {n for k, v in value.items() for n in money_fields(v, str(k))}
    if isinstance(value, list):
        return {n for v in value for n in money_fields(v, key)}
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and _MONEY_FIELD.search(key.lower())
    ):
        return {abs(float(value))}
    return set()


def is_placeholder(value: Any) -> bool:
    text = str(value).strip().lower()
    return text in PLACEHOLDERS or bool(re.fullmatch(r"(.)\1{3,}", text))


class Sources:
    """Grounding evidence accumulated over the conversation."""

    def __init__(self, policy: str = "", current_date_time: str = "") -> None:
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
        self.policy_money = {
            float(n.replace(",", "")) for n in re.findall(r"\$(\d[\d,]*(?:\.\d+)?)", policy)
        }
        self.money: set[float] = set()
        self.today = _parse_day(current_date_time)
        if self.today:
            self.add_tool_text(self.today.isoformat())

    def add_user(self, text: str) -> None:
        self.user_raw += " " + text
        canon = canonical(text)
        self.user_canonical += " " + canon
        self.user_compact += " " + _squeeze(canon)
        self.numbers |= numbers_in(canon)
        self.money |= {n for n in numbers_in(canon) if n >= 1}

    def add_tool_response(self, response: Any) -> None:
        self.add_tool_text(" ; ".join(flatten(response)))
        self.money |= money_fields(response)

    def add_tool_text(self, text: str) -> None:
        self.tool_raw += " " + text
        canon = f"{written_canonical(text)} {month_day_forms(text)}"
        self.tool_canonical += " " + canon
        self.tool_compact += " " + " ".join(_squeeze(tok) for tok in re.split(r"[;,\s]+", text))
        self.numbers |= numbers_in(text)

    def has_text(self, value: str, include_policy: bool = True) -> bool:
        """The value's compact form occurs in caller text, tool results (or the policy).
        Substring semantics on purpose: spoken identifiers are split and joined unevenly."""
        key = _squeeze(canonical(value))
        if not key:
            return False
        if key in self.user_compact.replace(" ", "") or key in self.tool_compact.replace(" ", ""):
            return True
        return include_policy and len(key) >= 3 and key in self.policy_compact

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
        """An amount is grounded when it is a known figure, or up to three money figures
        (tool fields named like fares/fees/totals, dollar figures of the policy, amounts the
        caller said) added or subtracted."""
        if self.has_number(value, derived=False):
            return True
        money = sorted(self.money | self.policy_money)[:60]
        for i, a in enumerate(money):
            for j, b in enumerate(money[i:], i):
                for combo in (a + b, abs(a - b)):
                    if abs(combo - value) < 0.005:
                        return True
                for c in money[j:]:
                    for combo in (a + b + c, a + b - c, a - b + c, b + c - a):
                        if abs(abs(combo) - value) < 0.005:
                            return True
        return False

    def date_grounded(self, iso: str) -> bool:
        """A date the caller said, a tool returned, or one day either side of such a date
        or of today (next-day and previous-day searches are ordinary)."""
        day = _parse_day(iso)
        if day is None:
            return self.has_text(iso)
        spoken = f"{MONTHS[day.month - 1]} {day.day}"
        if iso in self.tool_raw or f" {spoken} " in f" {self.user_canonical} ":
            return True
        known = {d for m in _ISO_DATE.finditer(self.tool_raw) if (d := _parse_day(m.group(0)))}
        if self.today:
            known.add(self.today)
        return any(abs((day - other).days) <= 1 for other in known)


def _parse_day(text: str) -> date | None:
    match = _ISO_DATE.search(text or "")
    if not match:
        return None
    try:
        return date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None
