"""Simple arithmetic over known money figures: what an agent may compute and say.

The faithfulness rubric allows simple arithmetic on tool results and policy figures: a
change fee plus a fare difference, a fare minus a cancellation fee, a voucher per passenger
or a rate per night. :func:`amount_derivable` accepts a stated amount when it is a known
figure, a sum or difference of two or three figures, a figure times a count, or a figure
times a count plus or minus another figure. Anything further (percentages, four-term sums)
is out of reach on purpose: the more combinations a rule accepts, the more wrong amounts
it lets through.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MAX_FIGURES = 150  # distinct figures considered (largest first when there are more)
MAX_COUNT = 10  # a multiplier is a small count: passengers, nights, bags, vouchers
_COUNT_KEY = re.compile(r"count|passengers?$|nights?|num_|number_of|quantity|qty|travell?ers")
_MONEY_KEY = re.compile(
    r"fare|fee|amount|price|cost|total|paid|credit|refund|charge|collected|diff|balance|"
    r"voucher|rate|usd|dollars?|compensation|penalty|budget"
)


def money_fields(value: Any, key: str = "", inherited: bool = False) -> set[float]:
    """Numbers of a tool response stored under money-like keys (or below one: the
    per-cabin entries of ``fares: {economy: 304, ...}`` are money too)."""
    money = inherited or bool(_MONEY_KEY.search(key.lower()))
    if isinstance(value, dict):
        return {n for k, v in value.items() for n in money_fields(v, str(k), money)}
    if isinstance(value, list):
        return {n for v in value for n in money_fields(v, key, money)}
    if money and isinstance(value, int | float) and not isinstance(value, bool):
        return {abs(float(value))}
    return set()


def count_fields(value: Any, key: str = "") -> set[int]:
    """Small counts in a tool response: count-like fields and lengths of passenger lists."""
    out: set[int] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            out |= count_fields(v, str(k))
    elif isinstance(value, list):
        if re.search(r"passengers?|travell?ers|nights", key.lower()) and value:
            out.add(len(value))
        for v in value:
            out |= count_fields(v, key)
    elif isinstance(value, int) and not isinstance(value, bool) and _COUNT_KEY.search(key.lower()):
        out.add(value)
    return {n for n in out if 2 <= n <= MAX_COUNT}


def _key(x: float) -> int:
    """Cents: exact integer arithmetic, so 75 + 44.00 meets 119.0."""
    return round(x * 100)


class Figures:
    """Known money figures and counts; pair sums and differences are cached until either
    grows, because a conversation states many amounts against the same figures."""

    def __init__(self) -> None:
        self.figures: set[float] = set()
        self.counts: set[int] = set()
        self._cache: tuple[set[int], set[int], list[int]] | None = None

    def add(self, figures: Iterable[float] = (), counts: Iterable[int] = ()) -> None:
        new_figures = {abs(float(f)) for f in figures if f and abs(f) < 10_000_000}
        new_counts = {int(k) for k in counts if 2 <= k <= MAX_COUNT}
        if not (new_figures <= self.figures and new_counts <= self.counts):
            self.figures |= new_figures
            self.counts |= new_counts
            self._cache = None

    def _tables(self) -> tuple[set[int], set[int], list[int]]:
        if self._cache is None:
            pool = sorted(self.figures, reverse=True)[:MAX_FIGURES]
            keys = [_key(f) for f in pool]
            pairs = {a + b for i, a in enumerate(keys) for b in keys[i:]}
            pairs |= {a - b for i, a in enumerate(keys) for b in keys[i + 1 :]}
            self._cache = (set(keys), pairs, keys)
        return self._cache

    def derivable(self, value: float) -> bool:
        """``value`` is a figure, a +/- combination of two or three figures, ``k * figure``
        or ``k * figure +/- figure`` for a count ``k`` (see the module docstring)."""
        singles, pairs, keys = self._tables()
        target = _key(abs(value))
        if target in singles or target in pairs:
            return True
        # Three figures: value = x +/- c where x is a pair sum or difference.
        if any(target - c in pairs or target + c in pairs for c in keys):
            return True
        for k in self.counts:
            scaled = {k * x for x in keys}
            if target in scaled or any(target - c in scaled or target + c in scaled for c in keys):
                return True
        return False


def amount_derivable(value: float, figures: Iterable[float], counts: Iterable[int] = ()) -> bool:
    """One-off form of :meth:`Figures.derivable`."""
    table = Figures()
    table.add(figures, counts)
    return table.derivable(value)
