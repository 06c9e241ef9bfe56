"""Offline rules of ``conciseness`` and ``conversation_progression`` (measurable features)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from tasks.judges.base import JudgeTask
from tasks.judges.inputs import ConcisenessInput, ConversationInput, TraceItem
from tasks.judges.offline import OfflineAnswer, offline_rule
from tasks.judges.offline.entities import compact, find_entities
from tasks.judges.offline.grounding import is_placeholder
from tasks.judges.offline.policy import is_write_tool
from tasks.spoken import normalize_spoken

CONCISENESS_SCOPE = """Rule-based conciseness check per assistant turn, from counts: words
(spelled codes count as one word), sentences, key figures (times, amounts, dates, flight
numbers, codes), enumerated options and filler phrases. Voice norm: at most 50 words, 4
sentences and 5 figures; up to 110 words, 7 sentences, 9 figures or 4 options is a minor
overload (rating 2), beyond is significant (rating 1); the last turn gets 15 words and one
sentence more for a wrap-up. It cannot tell whether detail was asked for, whether a long
turn was justified by the caller's question, or how content was lost to interruptions."""

PROGRESSION_SCOPE = """Rule-based conversation-progression check. unnecessary_tool_calls:
identical calls repeated after a success or with no caller turn since a failure, calls with
placeholder or empty arguments (1 for three or more, or a repeated successful write). information_loss: the agent asks again for an item (code, name, date,
email, phone, number) after a tool already succeeded with it. redundant_statements:
agent sentences of 6+ words repeated nearly verbatim in a later turn, outside the final
turn and unless the caller asked to repeat. question_quality: three or more questions in
one turn, or a write executed on a turn where the caller corrected itself between two values
of the same kind ("June 15, actually make that June 16"). It cannot judge vagueness, whether a question was needed, or whether options
were withheld."""

_TAG = re.compile(r"\[[a-z ]+\]", re.IGNORECASE)
_FILLER = re.compile(
    r"\b(great question|absolutely|i completely understand|i understand how|i apologi[sz]e for "
    r"the inconvenience|thank you for your patience|rest assured|i'?d be happy to|"
    r"i'?d be glad to|no problem at all|happy to help|bear with me)\b",
    re.IGNORECASE,
)
_ENUMERATOR = re.compile(
    r"(?:^|[.:;]\s+)(?:option\s+)?(?:one|two|three|four|five|first|second|third|fourth|fifth)"
    r"\s*[,:]|\b(?:option|choice)\s+(?:one|two|three|four|five|\d)\b",
    re.IGNORECASE,
)
_FIGURES = {"time", "amount", "date", "flight_number", "code", "seat", "gate", "phone", "email"}
CONCISENESS_MODES = (
    "verbosity_or_filler",
    "excess_information_density",
    "over_enumeration_or_list_exhaustion",
    "contextually_disproportionate_detail",
)


class TurnFeatures(BaseModel):
    words: int
    sentences: int
    figures: int
    options: int
    fillers: int


def turn_features(text: str) -> TurnFeatures:
    clean = _TAG.sub(" ", text)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", clean.strip()) if re.search(r"\w", s)]
    entities = [e for e in find_entities(clean) if e.type in _FIGURES]
    norm = normalize_spoken(clean)
    flights = max(
        sum(1 for e in entities if e.type == "flight_number"),
        len(re.findall(r"\bflights? \d", norm.lower())),
    )
    return TurnFeatures(
        words=len(norm.split()),
        sentences=len(sentences),
        figures=len(entities),
        options=max(len(_ENUMERATOR.findall(clean)), flights),
        fillers=len(_FILLER.findall(clean)),
    )


def rate_turn(f: TurnFeatures, final: bool) -> tuple[int, list[str], str]:
    """(rating, failure modes, explanation) from a turn's features."""
    extra_words, extra_sentences = (15, 1) if final else (0, 0)
    words, sentences = f.words - extra_words, f.sentences - extra_sentences
    modes = []
    if f.fillers >= 1 and words > 35:
        modes.append("verbosity_or_filler")
    if f.figures > 5:
        modes.append("excess_information_density")
    if f.options >= 3:
        modes.append("over_enumeration_or_list_exhaustion")
    if words > 50 or sentences > 4:
        modes.append("contextually_disproportionate_detail")
    severe = words > 110 or sentences > 7 or f.figures > 9 or f.options > 4
    rating = 1 if severe else (2 if modes else 3)
    explanation = (
        f"{f.words} words, {f.sentences} sentences, {f.figures} figures, {f.options} options"
        + (f", {f.fillers} filler phrases" if f.fillers else "")
    )
    return rating, modes if rating < 3 else [], explanation


def judge_conciseness(trace: list[TraceItem]) -> list[dict[str, Any]]:
    turn_ids = sorted({item.turn_id for item in trace})
    texts: dict[int, str] = {}
    for item in trace:
        if item.kind == "assistant" and item.text.strip():
            texts[item.turn_id] = f"{texts.get(item.turn_id, '')} {item.text}".strip()
    last = max(texts, default=None)
    out = []
    for turn in turn_ids:
        if turn not in texts:
            out.append(
                {
                    "turn_id": turn,
                    "explanation": "No assistant speech.",
                    "failure_modes": [],
                    "rating": None,
                }
            )
            continue
        rating, modes, why = rate_turn(turn_features(texts[turn]), final=turn == last)
        out.append({"turn_id": turn, "explanation": why, "failure_modes": modes, "rating": rating})
    return out


@offline_rule("conciseness", CONCISENESS_SCOPE)
def conciseness_rule(task: JudgeTask, params: Mapping[str, Any]) -> OfflineAnswer:
    if not isinstance(task.inputs, ConcisenessInput):
        return OfflineAnswer(error=f"expected ConcisenessInput, got {type(task.inputs).__name__}")
    return OfflineAnswer(output=judge_conciseness(task.inputs.trace))


# ---------------------------------------------------------------- conversation progression

_ASK_ITEMS = {
    "confirmation": ("confirmation", "booking reference", "record locator", "reservation number"),
    "name": ("last name", "surname", "full name", "first name"),
    "email": ("email",),
    "phone": ("phone", "callback number", "mobile"),
    "date": ("date of birth", "travel date", "what date", "which date"),
    "id": ("employee id", "member id", "ticket number", "case number", "npi"),
}
_PARAM_ITEMS = {
    "confirmation": ("confirmation", "booking", "locator", "reservation"),
    "name": ("name",),
    "email": ("email",),
    "phone": ("phone",),
    "date": ("birth", "dob"),
    "id": ("employee", "member", "ticket", "case", "npi"),
}
_SELF_CORRECTION = re.compile(r"\b(actually|wait|i mean|or maybe|whichever|make that)\b", re.I)
_REPEAT_ASKED = re.compile(r"\b(repeat|again|say that|one more time|read (it )?back|recap)\b", re.I)


class _Flag(BaseModel):
    dimension: str
    rating: int
    evidence: str


def _tool_flags(trace: list[TraceItem], tools: list[dict[str, Any]]) -> list[_Flag]:
    """Identical calls repeated after a success (or with nothing new from the caller since
    a failure), and calls with placeholder arguments nothing in the conversation supplied."""
    flags: list[_Flag] = []
    done: set[str] = set()
    tried: dict[str, int] = {}  # call key -> number of caller utterances when it was made
    heard = ""  # caller text and tool results so far: a value found there is no placeholder
    utterances = 0
    for i, item in enumerate(trace):
        if item.kind == "user":
            heard += " " + compact(item.text)
            utterances += 1
        elif item.kind == "tool_response":
            heard += " " + compact(json.dumps(item.response, default=str))
        if item.kind != "tool_call":
            continue
        key = f"{item.tool_name}:{json.dumps(item.params, sort_keys=True, default=str)}"
        response = next((r.response for r in trace[i + 1 :] if r.kind == "tool_response"), None)
        ok = isinstance(response, dict) and str(response.get("status", "")).lower() != "error"
        if key in done or tried.get(key) == utterances:
            # Repeating a change that already went through risks doing it twice: severe.
            severe = key in done and is_write_tool(item.tool_name or "", tools)
            flags.append(
                _Flag(
                    dimension="unnecessary_tool_calls",
                    rating=1 if severe else 2,
                    evidence=f"turn {item.turn_id}: {item.tool_name} repeated with "
                    "identical arguments and nothing new to go on",
                )
            )
        elif any(
            isinstance(v, str) and is_placeholder(v) and not (compact(v) and compact(v) in heard)
            for v in item.params.values()
        ):
            flags.append(
                _Flag(
                    dimension="unnecessary_tool_calls",
                    rating=2,
                    evidence=f"turn {item.turn_id}: {item.tool_name} called with "
                    "placeholder or empty arguments",
                )
            )
        tried[key] = utterances
        if ok:
            done.add(key)
    if len(flags) >= 3:
        flags = [f.model_copy(update={"rating": 1}) for f in flags]
    return flags


def _known_items(call: TraceItem) -> set[str]:
    found = set()
    for param, value in call.params.items():
        if value in (None, "") or is_placeholder(value):
            continue
        for item, words in _PARAM_ITEMS.items():
            if any(w in param.lower() for w in words):
                found.add(item)
    return found


def _information_flags(trace: list[TraceItem]) -> list[_Flag]:
    known: set[str] = set()
    flags = []
    for i, item in enumerate(trace):
        if item.kind == "tool_call":
            response = next((r.response for r in trace[i + 1 :] if r.kind == "tool_response"), None)
            if isinstance(response, dict) and str(response.get("status", "")).lower() != "error":
                known |= _known_items(item)
        elif item.kind == "assistant":
            questions = " ".join(q for q in re.findall(r"[^.!?]*\?", item.text.lower()))
            for name in sorted(known):
                if any(word in questions for word in _ASK_ITEMS[name]):
                    flags.append(
                        _Flag(
                            dimension="information_loss",
                            rating=2,
                            evidence=f"turn {item.turn_id}: asks again for the "
                            f"{name} a tool already used successfully",
                        )
                    )
    if len(flags) >= 2:
        flags = [f.model_copy(update={"rating": 1}) for f in flags]
    return flags


def _sentences(text: str) -> list[list[str]]:
    out = []
    for sentence in re.split(r"(?<=[.!?])\s+", _TAG.sub(" ", text)):
        words = re.findall(r"[a-z0-9']+", sentence.lower())
        if len(words) >= 6:
            out.append(words)
    return out


def _similar(a: list[str], b: list[str]) -> bool:
    sa, sb = set(a), set(b)
    return len(sa & sb) / max(1, len(sa | sb)) >= 0.8


def _redundancy_flags(trace: list[TraceItem]) -> list[_Flag]:
    turns = [i for i in trace if i.kind == "assistant"]
    final_turn = max((i.turn_id for i in turns), default=-1)
    asked = {i.turn_id for i in trace if i.kind == "user" and _REPEAT_ASKED.search(i.text)}
    seen: list[tuple[int, list[str]]] = []
    flags = []
    for item in turns:
        for sentence in _sentences(item.text):
            earlier = next(
                (t for t, s in seen if t != item.turn_id and _similar(s, sentence)), None
            )
            if earlier is not None and item.turn_id != final_turn and item.turn_id not in asked:
                flags.append(
                    _Flag(
                        dimension="redundant_statements",
                        rating=2,
                        evidence=f"turn {item.turn_id} repeats turn {earlier}: "
                        f"{' '.join(sentence[:12])}...",
                    )
                )
            seen.append((item.turn_id, sentence))
    if len(flags) >= 3:
        flags = [f.model_copy(update={"rating": 1}) for f in flags]
    return flags


def _question_flags(trace: list[TraceItem], tools: list[dict[str, Any]]) -> list[_Flag]:
    flags = []
    for item in trace:
        if item.kind == "assistant" and item.text.count("?") >= 3:
            flags.append(
                _Flag(
                    dimension="question_quality",
                    rating=2,
                    evidence=f"turn {item.turn_id}: {item.text.count('?')} questions "
                    "bundled in one turn",
                )
            )
    user_by_turn: dict[int, str] = {}
    for item in trace:
        if item.kind == "user":
            user_by_turn[item.turn_id] = user_by_turn.get(item.turn_id, "") + " " + item.text
    for item in trace:
        if item.kind == "tool_call" and is_write_tool(item.tool_name or "", tools):
            said = user_by_turn.get(item.turn_id, "")
            kinds = [e.type for e in find_entities(said)]
            corrected = _SELF_CORRECTION.search(said)
            if corrected and any(kinds.count(k) >= 2 for k in ("date", "code", "amount", "time")):
                flags.append(
                    _Flag(
                        dimension="question_quality",
                        rating=1,
                        evidence=f"turn {item.turn_id}: {item.tool_name} executed "
                        "while the caller gave conflicting values",
                    )
                )
    return flags


PROGRESSION_DIMENSIONS = (
    "unnecessary_tool_calls",
    "information_loss",
    "redundant_statements",
    "question_quality",
)


def judge_progression(inp: ConversationInput) -> dict[str, Any]:
    flags = (
        _tool_flags(inp.trace, inp.tools)
        + _information_flags(inp.trace)
        + _redundancy_flags(inp.trace)
        + _question_flags(inp.trace, inp.tools)
    )
    dims = {}
    for dim in PROGRESSION_DIMENSIONS:
        mine = [f for f in flags if f.dimension == dim]
        evidence = "; ".join(f.evidence for f in mine[:5]) or "Nothing measurable found."
        dims[dim] = {
            "evidence": evidence,
            "flagged": bool(mine),
            "rating": min((f.rating for f in mine), default=3),
        }
    ratings = [d["rating"] for d in dims.values()]
    flagged = sum(1 for d in dims.values() if d["flagged"])
    overall = 1 if (1 in ratings or flagged >= 3) else (2 if flagged else 3)
    return {"dimensions": dims, "rating": overall}


@offline_rule("conversation_progression", PROGRESSION_SCOPE)
def progression_rule(task: JudgeTask, params: Mapping[str, Any]) -> OfflineAnswer:
    if not isinstance(task.inputs, ConversationInput):
        return OfflineAnswer(error=f"expected ConversationInput, got {type(task.inputs).__name__}")
    return OfflineAnswer(output=judge_progression(task.inputs))
