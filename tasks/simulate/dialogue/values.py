"""Values in caller speech: canonical tokens, and what a run of tokens denotes.

Everything works on the token form of ``tasks.spoken.normalize_spoken`` (spelled codes
collapsed, number words to digits, dates ISO), so written and spoken input meet. A trace
value and a window of heard tokens are compared in one canonical form per kind: ISO dates,
``HH:MM`` times, numbers, and for everything else the lower-case alphanumeric signature.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from functools import lru_cache
from typing import Any, Literal

from tasks.spoken import normalize_spoken
from tasks.spoken.words import MONTHS as _MONTHS

SlotKind = Literal["date", "datetime", "time", "number", "text"]

_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_ISO_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{1,2}:\d{2}$")
_TIME = re.compile(r"^(\d{1,2}):(\d{2})$")
_NUMBER = re.compile(r"^\$?(\d+(?:\.\d+)?)$")
# Words people put between the symbols of a code; they carry no symbol.
FILLER_WORDS = frozenset({"dash", "hyphen", "pause", "space", "slash"})
ANSWER_STOPWORDS = frozenset(
    [
        "it's",
        "its",
        "it",
        "is",
        "my",
        "the",
        "a",
        "an",
        "and",
        "of",
        "to",
        "for",
        "my",
        "name",
        "number",
        "code",
        "yes",
        "no",
        "that's",
    ]
)
MAX_WINDOW = 8
# A date said without a year is the next such date, unless it is at most this far back.
PAST_GRACE_DAYS = 60


def signature(value: Any) -> str:
    """Lower-case alphanumerics only: the content of a value, without its formatting."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return re.sub(r"[^a-z0-9]", "", str(value).lower())


def value_kind(value: Any) -> SlotKind:
    if isinstance(value, bool):
        return "text"
    if isinstance(value, int | float):
        return "number"
    text = str(value)
    if _ISO_DATE.match(text):
        return "date"
    if _ISO_DATETIME.match(text):
        return "datetime"
    if _TIME.match(text):
        return "time"
    return "text"


_SYMBOL_WORD = r"(?:[A-Za-z]|zero|one|two|three|four|five|six|seven|eight|nine|oh|\d)"
# Sentence ends always end a spelled run; a comma only between spelled symbols
# ("B L D three, F L three"), not inside a date ("September first, twenty twenty-six").
_SENTENCE_BREAK = re.compile(r"(?<=[.;:!?])\s+|\n+")
_SYMBOL_COMMA = re.compile(rf"\b({_SYMBOL_WORD}),\s+(?={_SYMBOL_WORD}\b)", re.IGNORECASE)


def tokens(text: str) -> list[str]:
    """Canonical tokens of ``normalize_spoken``, with pauses ending spelled runs."""
    return list(_tokens(text))


def sentence_tokens(text: str) -> list[list[str]]:
    """:func:`tokens` per sentence or spelled run: a value never spans a pause."""
    return [list(chunk) for chunk in _chunks(text)]


@lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(tok for chunk in _chunks(text) for tok in chunk)


@lru_cache(maxsize=8192)
def _chunks(text: str) -> tuple[tuple[str, ...], ...]:
    text = _SYMBOL_COMMA.sub(lambda m: m[1] + "\n", text)
    chunks = (tuple(normalize_spoken(chunk).split()) for chunk in _SENTENCE_BREAK.split(text))
    return tuple(chunk for chunk in chunks if chunk)


def alias_table(db: Any) -> dict[str, str]:
    """Spoken aliases of named things in a scenario DB -> their canonical name."""
    table: dict[str, str] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            name = node.get("name")
            if isinstance(name, str) and isinstance(node.get("name_aliases"), list):
                for alias in [name, *node["name_aliases"]]:
                    table.setdefault(signature(alias), name)
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(db)
    return table


def _infer_year(month: int, day: int, today: date) -> str | None:
    for year in (today.year, today.year + 1):
        try:
            when = date(year, month, day)
        except ValueError:
            return None
        if when >= today - timedelta(days=PAST_GRACE_DAYS):
            return when.isoformat()
    return None


def _parse_date(toks: list[str], today: date) -> str | None:
    if len(toks) == 1:
        tok = toks[0]
        digits = tok if re.fullmatch(r"\d{8}", tok) else None
        if _ISO_DATE.match(tok) or digits:
            raw = digits or tok.replace("-", "")
            try:
                return date(int(raw[:4]), int(raw[4:6]), int(raw[6:])).isoformat()
            except ValueError:
                return None
        return None
    if len(toks) in (2, 3) and toks[0] in _MONTHS:
        day = re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)?", toks[1])
        if not day:
            return None
        month = _MONTHS.index(toks[0]) + 1
        if len(toks) == 2:
            return _infer_year(month, int(day[1]), today)
        return _safe_date(toks[2], month, day[1])
    if len(toks) == 3 and re.fullmatch(r"\d{4} \d{1,2} \d{1,2}", " ".join(toks)):
        return _safe_date(toks[0], toks[1], toks[2])
    return None


def _safe_date(year: Any, month: Any, day: Any) -> str | None:
    try:
        return date(int(year), int(month), int(day)).isoformat()
    except ValueError:
        return None


def _parse_time(toks: list[str]) -> str | None:
    if len(toks) != 1:
        return None
    match = _TIME.match(toks[0])
    if not match or int(match[1]) > 23 or int(match[2]) > 59:
        return None
    return f"{int(match[1]):02d}:{match[2]}"


def _parse_number(toks: list[str]) -> float | None:
    if len(toks) != 1:
        return None
    match = _NUMBER.match(toks[0].replace(",", ""))
    return float(match[1]) if match else None


def _parse_datetime(toks: list[str], today: date) -> str | None:
    """ "<date> [at] <time>" or "<time> [on] <date>"."""
    for cut in range(1, len(toks)):
        head, tail = toks[:cut], toks[cut:]
        if tail and tail[0] in ("at", "on"):
            tail = tail[1:]
        day, clock = _parse_date(head, today), _parse_time(tail)
        if day is None:
            clock, day = _parse_time(head), _parse_date(tail, today)
        if day and clock:
            return f"{day} {clock}"
    return None


def window_value(toks: list[str], kind: SlotKind, today: date) -> Any:
    """The canonical value a token window denotes for ``kind`` (None if it denotes none)."""
    if not toks:
        return None
    if kind == "date":
        return _parse_date(toks, today)
    if kind == "time":
        return _parse_time(toks)
    if kind == "number":
        return _parse_number(toks)
    if kind == "datetime":
        return _parse_datetime(toks, today)
    kept = [t for t in toks if t not in FILLER_WORDS]
    return "".join(signature(t) for t in kept) or None


def canonical(value: Any, kind: SlotKind) -> Any:
    """The canonical form of a trace value, comparable with :func:`window_value`."""
    if kind == "number":
        return float(value)
    if kind == "time":
        return _parse_time([str(value)])
    if kind in ("date", "datetime"):
        return str(value)
    return signature(value)
