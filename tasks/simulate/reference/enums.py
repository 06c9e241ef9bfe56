"""Which schema enum option the caller named, read by normalized words.

A tool schema's enum options are identifiers (``LIST_A``, ``PERM_RESIDENT_CARD``,
``initial_verification``); a caller says them as words ("LIST A.", "perm resident card",
"a permanent resident card", "initial verification"). A deployed agent knows the options
from the schema (agent configuration), so it may match what it heard against them; it
never needs the trace's value for that. Words are compared in normalized form
(lower-case alphanumerics, ``_``/``-``/spaces as word breaks) and a whole option matches:

1. a window of heard words whose letters join to the option's (``"LIST A"``, ``"U.S.
   passport"``, ``"list-a"``), or
2. as many heard words as the option has, each the option's word or one of them an
   abbreviation of the other of at least three letters (``"permanent"``/``"PERM"``,
   ``"certificate"``/``"CERT"``), or
3. for a one-word option of 3-5 letters, words whose initials spell it (``"employment
   authorization document"`` for ``EAD``).

Only when no option matches whole, a run of an option's words (each at least four
letters) that belongs to that option alone names it ("passport" for ``US_PASSPORT``).
Several options named equally well, or one whole and another by its own words ("window or
aisle seat"), is no answer: the agent asks again rather than guess.
Stop words are never removed first: the ``A`` of ``LIST A`` is the value, not an article.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

MIN_ABBREVIATION = 3
MIN_PARTIAL_WORD = 4
_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")


def heard_words(text: str) -> list[str]:
    """Normalized words of heard text ("Driver's" -> "drivers", "U.S." -> "u", "s")."""
    return [re.sub(r"[^a-z0-9]", "", w.lower()) for w in _WORD.findall(text)]


def option_words(option: Any) -> list[str]:
    """Normalized words of an enum option (``PERM_RESIDENT_CARD`` -> perm, resident, card)."""
    return [w for w in re.split(r"[^a-z0-9]+", str(option).lower()) if w]


def _same_word(heard: str, said: str) -> bool:
    if heard == said:
        return True
    short, long = sorted((heard, said), key=len)
    return len(short) >= MIN_ABBREVIATION and long.startswith(short)


def _whole(window: Sequence[str], words: list[str]) -> bool:
    if "".join(window) == "".join(words):
        return True
    if len(window) == len(words) and all(map(_same_word, window, words)):
        return True
    acronym = words[0] if len(words) == 1 else ""
    return (
        acronym.isalpha()
        and 3 <= len(acronym) <= 5
        and len(window) == len(acronym)
        and "".join(w[0] for w in window) == acronym
    )


def _runs(words: list[str]) -> set[tuple[str, ...]]:
    return {
        tuple(words[i:j])
        for i in range(len(words))
        for j in range(i + 1, len(words) + 1)
        if (i, j) != (0, len(words)) and all(len(w) >= MIN_PARTIAL_WORD for w in words[i:j])
    }


def _best(named: dict[Any, int]) -> Any:
    if not named:
        return None
    top = max(named.values())
    best = [o for o, width in named.items() if width == top]
    return best[0] if len(best) == 1 else None


def match_option(heard: str, enum: Sequence[Any] | None) -> Any:
    """The enum option the heard text names (module doc), or None when none or unclear."""
    if not enum:
        return None
    said = heard_words(heard)
    spans = [said[i:j] for i in range(len(said)) for j in range(i + 1, min(len(said), i + 6) + 1)]
    whole: dict[Any, int] = {}
    for option in enum:
        words = option_words(option)
        widths = [len(w) for w in spans if words and _whole(w, words)]
        if widths:
            whole[option] = max(widths)
    runs = {option: _runs(option_words(option)) for option in enum}
    partial: dict[Any, int] = {}
    for option, mine in runs.items():
        others = set().union(*(r for o, r in runs.items() if o != option))
        widths = [len(w) for w in spans if tuple(w) in mine - others]
        if widths:
            partial[option] = max(widths)
    if not whole:
        return _best(partial)
    best = _best(whole)
    # "window or aisle seat" names two options, however one of them is said in full.
    return None if set(partial) - {best} else best


def is_option(value: Any, enum: Sequence[Any] | None) -> bool:
    """``value`` is one of the options, in whatever layout the trace gives it (30 for "30")."""
    return _sig(value) in {_sig(o) for o in enum or []}


def named_options(enum: Sequence[Any] | None) -> bool:
    """Options a caller names in words (strings); numbers are read as numbers."""
    return bool(enum) and all(isinstance(o, str) for o in enum or [])


def _sig(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return re.sub(r"[^a-z0-9]", "", str(value).lower())
