"""Reading caller-supplied values out of what the agent heard.

The reference agent follows a golden trace, but every value the caller supplies must come
from the heard text. The trace value is used only for two things that a real agent also
knows: *where* in the caller's sentence the value sits (the trace's own user utterance)
and the parameter's *format* (date, time, number, code with separators, letter case).
Its content always comes from the heard words: a misheard code stays misheard.

Everything works on the token form of ``tasks.spoken.normalize_spoken`` (spelled codes
collapsed, number words to digits, dates ISO), so written and spoken input meet.
"""

from __future__ import annotations

import difflib
import re
from datetime import date, timedelta
from functools import lru_cache
from typing import Any, Literal

from tasks.spoken import normalize_spoken

SlotKind = Literal["date", "datetime", "time", "number", "text"]

_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_ISO_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{1,2}:\d{2}$")
_TIME = re.compile(r"^(\d{1,2}):(\d{2})$")
_NUMBER = re.compile(r"^\$?(\d+(?:\.\d+)?)$")
_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
# Words people put between the symbols of a code; they carry no symbol.
_FILLER = frozenset({"dash", "hyphen", "pause", "space", "slash"})
_STOPWORDS = frozenset(
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


@lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[str, ...]:
    text = _SYMBOL_COMMA.sub(lambda m: m[1] + "\n", text)
    return tuple(
        tok for chunk in _SENTENCE_BREAK.split(text) for tok in normalize_spoken(chunk).split()
    )


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
    kept = [t for t in toks if t not in _FILLER]
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


def align_span(src: list[str], dst: list[str], i: int, j: int) -> tuple[int, int] | None:
    """Where the window ``src[i:j]`` ended up in ``dst`` (word alignment)."""
    matcher = difflib.SequenceMatcher(None, src, dst, autojunk=False)
    start = end = None
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if a2 <= i or a1 >= j or tag not in ("equal", "replace"):
            continue
        lo, hi = max(a1, i), min(a2, j)
        if tag == "equal":
            s, e = b1 + (lo - a1), b1 + (hi - a1)
        else:
            scale = (b2 - b1) / (a2 - a1)
            s = b1 + int((lo - a1) * scale)
            e = min(max(s + 1, b1 + round((hi - a1) * scale)), b2)
        start = s if start is None else min(start, s)
        end = e if end is None else max(end, e)
    if start is None or end is None or end <= start:
        return None
    return start, end


def _class_pattern(sig: str) -> str:
    return "".join("D" if c.isdigit() else "L" for c in sig)


def _is_subsequence(short: str, long: str) -> bool:
    rest = iter(long)
    return all(ch in rest for ch in short)


def _abbreviation(window: list[str], target: str) -> str | None:
    """ "floor 3" is how people say "FL3": a word the code's letters abbreviate, then a
    number. Returns the code's signature with the heard number, or None."""
    match = re.fullmatch(r"([a-z]+)(\d+)", target)
    if len(window) != 2 or match is None or not window[1].isdigit():
        return None
    letters, word = match[1], window[0].lower()
    if word[:1] != letters[:1] or not _is_subsequence(letters, word):
        return None
    return letters + window[1]


def _rebuild_like(sig: str, template: str) -> str:
    """Put ``sig``'s symbols into ``template``'s layout (separators and letter case)."""
    out, k = [], 0
    for ch in template:
        if ch.isalnum():
            sym = sig[k]
            out.append(sym.upper() if ch.isupper() else sym.lower())
            k += 1
        else:
            out.append(ch)
    return "".join(out)


class SlotReader:
    """Finds and reads values in caller text, for one scenario (its date and aliases)."""

    def __init__(self, today: date, aliases: dict[str, str] | None = None) -> None:
        self.today = today
        self.aliases = aliases or {}

    def locate(self, value: Any, toks: list[str]) -> list[tuple[int, int]]:
        """Token windows ``[i, j)`` of ``toks`` that say ``value``."""
        kind = value_kind(value)
        target = canonical(value, kind)
        if target in (None, ""):
            return []
        if kind == "text":
            return self._locate_text(str(target), toks)
        found = []
        for i in range(len(toks)):
            for j in range(i + 1, min(len(toks), i + 4) + 1):
                if (
                    toks[j - 1] not in _FILLER
                    and window_value(toks[i:j], kind, self.today) == target
                ):
                    found.append((i, j))
        return found

    def _locate_text(self, target: str, toks: list[str]) -> list[tuple[int, int]]:
        names = {a for a, name in self.aliases.items() if signature(name) == target}
        longest = max([len(target), *(len(a) for a in names)])
        sigs = ["" if t in _FILLER else signature(t) for t in toks]
        found = []
        for i in range(len(toks)):
            joined = ""
            for j in range(i, min(len(toks), i + MAX_WINDOW)):
                joined += sigs[j]
                if len(joined) > longest:
                    break
                if sigs[j] and (joined == target or joined in names):
                    found.append((i, j + 1))
            if _abbreviation(toks[i : i + 2], target) == target:
                found.append((i, i + 2))
        return found

    def extract_aligned(self, value: Any, intended: str, heard: str) -> str | None:
        """The heard words at the place where the intended utterance said ``value``."""
        src, dst = tokens(intended), tokens(heard)
        windows = self.locate(value, src)
        if not windows:
            return None
        span = align_span(src, dst, *windows[-1])
        if span is None:
            return None
        heard_window = dst[span[0] : span[1]]
        kind = value_kind(value)
        if kind == "text":
            return " ".join(heard_window)
        # The aligned window may be off by a word; take the value-shaped sub-window.
        for width in range(1, len(heard_window) + 1):
            for k in range(len(heard_window) - width + 1):
                if window_value(heard_window[k : k + width], kind, self.today) is not None:
                    return " ".join(heard_window[k : k + width])
        return None

    def extract_candidates(self, value: Any, heard: str) -> list[str]:
        """Windows of ``heard`` that could be a value of the same format, best first.

        For answers to the agent's own questions ("could you spell your last name?"),
        where there is no trace sentence to align with. Spelled (upper-case) tokens win
        over plain words: a caller who spells means the spelled version. When nothing has
        the format, the whole answer is the candidate (the lookup will tell).
        """
        toks = [t for t in tokens(heard) if t not in _STOPWORDS]
        kind = value_kind(value)
        windows = [
            toks[i:j]
            for i in range(len(toks))
            for j in range(i + 1, min(len(toks), i + MAX_WINDOW) + 1)
        ]
        if kind != "text":
            return [" ".join(w) for w in windows if window_value(w, kind, self.today)]
        sig = signature(value)
        tiers: list[list[str]] = [[], [], [], [], []]
        for window in windows:
            got = window_value(window, "text", self.today) or ""
            spelled = all(t.isupper() or any(c.isdigit() for c in t) for t in window)
            if got in self.aliases or _abbreviation(window, sig):
                tiers[0].append(" ".join(window))
            elif _class_pattern(got) == _class_pattern(sig):
                tiers[1 if spelled else 2].append(" ".join(window))
            elif len(got) == len(sig):
                tiers[3 if spelled else 4].append(" ".join(window))
        found = [c for tier in tiers for c in tier]
        return found or ([" ".join(toks)] if toks else [])

    def format_like(self, heard: str, template: Any, enum: list[Any] | None) -> Any:
        """Render a heard value in the parameter's format, taken from the trace value.

        Content comes from ``heard``; only layout (separators, letter case, type) comes
        from ``template``. A heard value with the template's content therefore yields the
        template's exact spelling, and a misheard one stays wrong.
        """
        kind = value_kind(template)
        toks = heard.split()
        if kind != "text":
            got = window_value(toks, kind, self.today)
            if got is None:
                return heard
            if kind == "number":
                whole = isinstance(template, int) and float(got).is_integer()
                return int(got) if whole else got
            return got
        text_template = str(template)
        target = signature(text_template)
        if target.isdigit():
            # A number read digit by digit: words around it are not part of it.
            toks = [t for t in toks if signature(t).isdigit()] or toks
        sig = "".join(signature(t) for t in toks if t not in _FILLER)
        if enum:
            return next((o for o in enum if signature(o) == sig), heard)
        if sig == target or signature(self.aliases.get(sig, "")) == target:
            return text_template
        sig = _abbreviation(toks, target) or sig
        if sig == target:
            return text_template
        if len(sig) == len(target) and not re.search(r"\s", text_template):
            return _rebuild_like(sig, text_template)
        words = " ".join(t for t in toks if t not in _FILLER)
        if text_template.islower():
            return words.lower()
        if text_template.isupper():
            return words.upper()
        return " ".join(w.capitalize() for w in words.split())
