"""Which offered option the caller chose, read from what the agent heard.

A tool response that lists options (rebooking flights, free desks, open shifts) leaves
the choice to the caller. The golden trace books the option its caller picked; the
reference agent may follow that only if it *heard* the caller pick it. So for a write
parameter taken from one option of such a list, the agent looks at what tells the options
apart (flight number, departure time, code: leaves whose values differ between options),
finds which of those the trace's caller said when choosing, and reads the same property
in the heard words: the option whose value it heard is the one it books, whichever the
trace booked. When the trace's caller named none of them, the choice was not the caller's
to make (the agent picked, as its plan says).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

Leaf = tuple[str, Any]
MAX_FEATURE_CHARS = 24  # longer text is a description, not what a caller names an option by


def leaves(value: Any, path: str = "") -> list[Leaf]:
    """(path, scalar) pairs of a JSON value, paths like ``segments[0].flight_number``."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in leaves(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in leaves(v, f"{path}[{i}]")]
    return [(path, value)]


def _lists(value: Any) -> Iterator[list[dict[str, Any]]]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _lists(v)
    elif isinstance(value, list):
        if len(value) >= 2 and all(isinstance(v, dict) for v in value):
            yield value
        for v in value:
            yield from _lists(v)


def find_option(value: Any, response: Any) -> tuple[list[dict[str, Any]], int] | None:
    """The option list of ``response`` holding ``value`` in exactly one option, and which."""
    for options in _lists(response):
        holders = [i for i, o in enumerate(options) if any(v == value for _, v in leaves(o))]
        if len(holders) == 1:
            return options, holders[0]
    return None


def features(options: list[dict[str, Any]]) -> list[list[Any]]:
    """Per distinguishing leaf path, its value in each option (all options distinct)."""
    tables = [dict(leaves(o)) for o in options]
    out = []
    for path in tables[0]:
        column = [t.get(path) for t in tables]
        if not all(isinstance(v, str | int) and not isinstance(v, bool) for v in column):
            continue
        if len({str(v) for v in column}) == len(column) and all(
            len(str(v)) <= MAX_FEATURE_CHARS for v in column
        ):
            out.append(column)
    return out


def same_place(value: Any, chosen: dict[str, Any], other: dict[str, Any]) -> Any:
    """The value at ``value``'s path in ``chosen``, read in ``other``."""
    path = next(p for p, v in leaves(chosen) if v == value)
    return dict(leaves(other)).get(path, value)


Locator = Callable[[Any, str], bool]


def heard_choice(
    options: list[dict[str, Any]],
    index: int,
    said_lines: list[str],
    heard_lines: list[str],
    says: Locator,
) -> int | None:
    """Which option the caller chose as the agent heard it.

    ``said_lines``: the trace caller's lines since the options were offered; ``heard_lines``:
    what the agent heard at those turns; ``says(value, text)``: the text says the value.
    Returns ``index`` when the choice was not the caller's (the trace's caller named no
    distinguishing property) or when what it heard agrees with the trace's caller's words:
    it heard some of the properties they named and none they did not (the same words mean
    the same choice, however they read: "the July 27 return, keep the July 20 one").
    Otherwise the option that every property it heard named alone points to, or None when
    the agent did not hear which one.
    """
    named = [col for col in features(options) if any(says(col[index], s) for s in said_lines)]
    if not named:
        return index

    def mentioned(lines: list[str]) -> list[set[int]]:
        return [{j for j, v in enumerate(col) if any(says(v, t) for t in lines)} for col in named]

    heard, said = mentioned(heard_lines), mentioned(said_lines)
    if any(heard) and all(h <= s for h, s in zip(heard, said, strict=True)):
        return index
    votes = {next(iter(picks)) for picks in heard if len(picks) == 1}
    return votes.pop() if len(votes) == 1 else None
