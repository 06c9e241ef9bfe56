"""Which of an agent turn's entities the reference's agent speech fidelity judges.

EVA spec 4.3 (agent_speech_fidelity): the judge reads a redacted trace (caller entries
verbatim, tool responses verbatim, every assistant turn replaced by "[Assistant speaks]")
and rates, per assistant turn, whether "every entity that appears in the trace (codes,
record IDs, amounts, seat numbers, reference IDs, times, dates, names) and that the agent
speaks" is articulated correctly. An entity the agent says that appears in neither the
caller's turns nor a tool response is not judged. The caller entries are the trace's: for
audio-native pipelines what the caller said (spec 4.2), not what a recogniser heard.

Appearing means literally (its canonical or compact form, a number among the numbers, a
date's month and day, a clock time in any of its readings), never derived by arithmetic
and never from the policy text: those are faithfulness questions, not articulation ones.

An s2s agent may report no text of its own; its turn is then the caller side's transcript
of its audio, where a code it said with one symbol wrong reads as a code of no source.
Spec 4.3 (c) calls such single-character slips in long identifiers articulation, not
faithfulness: an identifier of five or more symbols one substitution away from exactly one
identifier of the context is judged as that identifier, in the transcript's sentence with
the value put right, so the audio decides between the two.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tasks.judges.inputs import TraceItem
from tasks.judges.offline.entities import (
    CallerEntity,
    canonical,
    compact,
    find_entities,
    prepare,
    time_variants,
)
from tasks.judges.offline.grounding import Sources, flatten, numbers_in
from tasks.spoken import normalize_spoken

IDENTIFIERS = frozenset({"code", "spelled", "flight_number", "phone"})
MIN_SLIP_SYMBOLS = 5
# A tool value that is an identifier: upper-case letters, digits and dashes (not a date).
_TOOL_ID = re.compile(r"[A-Z0-9][A-Z0-9-]*")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def context_sources(trace: list[TraceItem]) -> Sources:
    """The caller's turns and the tool responses of ``trace`` (no policy, no date)."""
    src = Sources()
    for item in trace:
        if item.kind == "user":
            src.add_user(item.text)
        elif item.kind == "tool_response":
            src.add_tool_response(item.response)
    return src


def in_context(entity: CallerEntity, src: Sources) -> bool:
    """``entity`` appears in the caller's turns or a tool response."""
    kind, canon = entity.type, entity.canonical
    if kind == "amount":
        numbers = numbers_in(canon)
        return bool(numbers) and all(src.has_number(n, derived=False) for n in numbers)
    if kind == "time":
        return any(src.has_tokens(v) for v in time_variants(canon))
    if kind == "date":
        return src.has_tokens(entity.value) or src.has_tokens(canon)
    return src.has_text(entity.value, include_policy=False)


def context_identifiers(trace: Iterable[TraceItem]) -> dict[str, str]:
    """Compact form -> written value of every identifier of five or more symbols the caller
    said or a tool returned."""
    found: dict[str, str] = {}
    for item in trace:
        if item.kind == "user":
            values = [e.value for e in find_entities(item.text) if e.type in IDENTIFIERS]
        elif item.kind == "tool_response":
            scalars = flatten(item.response)
            values = [v for v in scalars if _TOOL_ID.fullmatch(v) and not _ISO_DATE.match(v)]
        else:
            continue
        for value in values:
            key = compact(value)
            if len(key) >= MIN_SLIP_SYMBOLS:
                found.setdefault(key, value.replace("-", ""))
    return found


def _one_substitution(a: str, b: str) -> bool:
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b, strict=True)) == 1


def slip_of(value: str, identifiers: dict[str, str]) -> str | None:
    """The context identifier ``value`` is a one-symbol slip of (five or more symbols, one
    substitution, exactly one candidate), or None."""
    key = compact(value)
    if len(key) < MIN_SLIP_SYMBOLS or key in identifiers:
        return None
    near = [k for k in identifiers if _one_substitution(key, k)]
    return identifiers[near[0]] if len(near) == 1 else None


def _locate(text: str, symbols: str) -> re.Match[str] | None:
    pattern = r"(?<![0-9A-Za-z])" + r"[\s-]?".join(map(re.escape, symbols)) + r"(?![0-9A-Za-z])"
    return re.search(pattern, text, re.IGNORECASE)


class ContextRule:
    """The reference's choice of entities for one attempt's agent turns (module docstring)."""

    def __init__(self, trace: list[TraceItem], transcribed_turns: Iterable[int] = ()) -> None:
        self.sources = context_sources(trace)
        self.identifiers = context_identifiers(trace)
        self.transcribed = frozenset(transcribed_turns)

    def keep(self, entity: CallerEntity) -> bool:
        """``entity`` of a turn's text appears in the context, so it is judged."""
        return in_context(entity, self.sources)

    def slips(self, turn: int, text: str) -> list[tuple[CallerEntity, str]]:
        """For a transcript turn: (context identifier, sentence saying it) for each code of
        the transcript one symbol away from exactly one identifier of the context."""
        if turn not in self.transcribed:
            return []
        sentence = normalize_spoken(prepare(text))
        out: list[tuple[CallerEntity, str]] = []
        for entity in find_entities(text):
            if entity.type not in IDENTIFIERS or self.keep(entity):
                continue
            right = slip_of(entity.value, self.identifiers)
            match = _locate(sentence, compact(entity.value)) if right else None
            if right is None or match is None:
                continue
            said = sentence[: match.start()] + right + sentence[match.end() :]
            out.append(
                (CallerEntity(type=entity.type, value=right, canonical=canonical(right)), said)
            )
        return out
