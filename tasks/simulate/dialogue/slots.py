"""Reading caller-supplied values out of what the agent heard.

The reference agent follows a golden trace, but every value the caller supplies must come
from the heard text. The trace is used for two things only:

- *where* the value sits in a caller line the trace scripted: :meth:`SlotReader.locate`
  finds the trace value in the trace's own user sentence and :meth:`extract_aligned`
  reads the heard words aligned with that place. This is the documented oracle part of
  the reference agent (README, "What the reference agent is"): it knows which sentence
  carries which value, never what the heard words say.
- the *layout* of a value whose content came from heard words (:meth:`format_like`):
  separators, letter case and type of the parameter ("bld3" -> "BLD3", "march 10" ->
  "2026-03-10"), and the letter prefix of a code said as a word ("floor 3" -> "FL3").
  A heard value with the trace value's content yields its exact spelling; a misheard one
  stays misheard.

Choosing *which* heard words are the value in an answer to the agent's own question
(:meth:`extract_candidates`) never looks at the trace value: it ranks by what a deployed
agent knows, the parameter's format from the tool schema
(:mod:`tasks.simulate.dialogue.formats`), spelled-ness and the domain's alias table.

Values are compared in the canonical forms of :mod:`tasks.simulate.dialogue.values`.
"""

from __future__ import annotations

import difflib
import re
from datetime import date
from typing import Any

from tasks.simulate.dialogue.formats import ParamFormat
from tasks.simulate.dialogue.values import (
    ANSWER_STOPWORDS,
    FILLER_WORDS,
    MAX_WINDOW,
    SlotKind,
    alias_table,
    canonical,
    sentence_tokens,
    signature,
    tokens,
    value_kind,
    window_value,
)

__all__ = [
    "ParamFormat",
    "SlotKind",
    "SlotReader",
    "alias_table",
    "align_span",
    "canonical",
    "signature",
    "tokens",
    "value_kind",
    "window_value",
]


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
    number. Returns the code's letters with the heard number, or None. ``target`` is a
    code of the format (the schema's example, or the trace's sentence at ``locate``): only
    its letters are used, the number is the heard one."""
    match = re.fullmatch(r"([a-z]+)(\d+)", target)
    if len(window) != 2 or match is None or not window[1].isdigit():
        return None
    letters, word = match[1], window[0].lower()
    if word[:1] != letters[:1] or not _is_subsequence(letters, word):
        return None
    return letters + window[1]


# "the one", "another one", "one of them": the pronoun, not the number a caller gives.
_BEFORE_PRONOUN_ONE = frozenset({"the", "another", "that", "this", "which", "each", "any"})


def _pronoun_one(toks: list[str], i: int, j: int) -> bool:
    if j != i + 1 or toks[i] not in ("1", "one"):
        return False
    return (i > 0 and toks[i - 1] in _BEFORE_PRONOUN_ONE) or toks[i + 1 : i + 2] == ["of"]


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
    """Finds and reads values in caller text, for one scenario's date and its domain's
    alias table (spoken alias signature -> canonical name)."""

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
                    toks[j - 1] not in FILLER_WORDS
                    and not _pronoun_one(toks, i, j)
                    and window_value(toks[i:j], kind, self.today) == target
                ):
                    found.append((i, j))
        return found

    def _locate_text(self, target: str, toks: list[str]) -> list[tuple[int, int]]:
        names = {a for a, name in self.aliases.items() if signature(name) == target}
        longest = max([len(target), *(len(a) for a in names)])
        sigs = ["" if t in FILLER_WORDS else signature(t) for t in toks]
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

    def extract_candidates(
        self, heard: str, fmt: ParamFormat, enum: list[Any] | None = None
    ) -> list[str]:
        """Windows of ``heard`` that could be a value of the parameter's format, best first.

        For answers to the agent's own questions ("could you spell your last name?"),
        where there is no trace sentence to align with. Ranked only by what a deployed
        agent knows (module doc): a schema enum option or a domain alias, then the schema's format (or the
        generic rule of the kind), spelled (upper-case) tokens before plain words, and
        within a rank the longest window first (an answer says the whole value). When
        nothing fits, the whole answer is the candidate (the lookup will tell).
        """
        sentences = [[t for t in s if t not in ANSWER_STOPWORDS] for s in sentence_tokens(heard)]
        toks = [t for s in sentences for t in s]
        windows = [
            s[i:j]
            for s in sentences
            for i in range(len(s))
            for j in range(i + 1, min(len(s), i + MAX_WINDOW) + 1)
        ]
        if fmt.kind != "text":
            return [" ".join(w) for w in windows if window_value(w, fmt.kind, self.today)]
        options = {signature(o) for o in enum or []}
        tiers: list[list[list[str]]] = [[], [], [], []]
        for window in windows:
            got = window_value(window, "text", self.today) or ""
            got = _abbreviation(window, fmt.example_sig) or got  # "floor 3" for FL3
            spelled = all(t.isupper() or any(c.isdigit() for c in t) for t in window)
            if got in self.aliases or got in options:
                tiers[0].append(window)
            elif fmt.fits(got):
                tiers[1 if spelled else 2].append(window)
            elif spelled:
                tiers[3].append(window)
        found = [" ".join(w) for tier in tiers for w in sorted(tier, key=lambda w: -len(w))]
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
        sig = "".join(signature(t) for t in toks if t not in FILLER_WORDS)
        if enum:
            return next((o for o in enum if signature(o) == sig), heard)
        abbreviated = _abbreviation(toks, target)
        if abbreviated is not None:
            toks = [abbreviated.upper()]
        if sig == target or abbreviated == target:
            return text_template
        if sig in self.aliases:
            return self.aliases[sig]  # the domain's name for the alias the caller said
        if target.isdigit():
            # A number read digit by digit: words around it are not part of it.
            toks = [t for t in toks if signature(t).isdigit()] or toks
        elif " " not in text_template and any(c.isdigit() for c in target):
            # A code is spelled: plain words next to it were heard around it, not in it.
            toks = [t for t in toks if t.isupper() or any(c.isdigit() for c in t)] or toks
        sig = "".join(signature(t) for t in toks if t not in FILLER_WORDS)
        if sig == target:
            return text_template
        if len(sig) == len(target) and not re.search(r"\s", text_template):
            return _rebuild_like(sig, text_template)
        words = " ".join(t for t in toks if t not in FILLER_WORDS)
        if text_template.islower():
            return words.lower()
        if text_template.isupper():
            return words.upper()
        return " ".join(w.capitalize() for w in words.split())
