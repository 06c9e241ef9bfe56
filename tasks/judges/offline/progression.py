"""Offline rule of ``conversation_progression`` (spec 4.4): findings per dimension, rated
with fitted parameters (``ProgressionParams``).

Measuring (:func:`measure_progression`) lists what the conversation contains; deciding
(:func:`decide_progression`) keeps the findings whose measures pass the fitted thresholds,
rates each dimension (the worst finding; 1 once there are "many") and combines them with the
spec's rule: 1 if any dimension is 1 or three are flagged, 2 if any is flagged, else 3.
The speech checks (information loss, redundancy) are in ``progression_speech``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from tasks.judges.base import JudgeTask
from tasks.judges.inputs import ConversationInput, TraceItem
from tasks.judges.offline import OfflineAnswer, offline_rule
from tasks.judges.offline.entities import compact
from tasks.judges.offline.grounding import is_placeholder, tool_failed
from tasks.judges.offline.params import ProgressionParams
from tasks.judges.offline.policy import (
    is_read_only,
    is_write_tool,
    self_corrected,
    unconfirmed_writes,
)
from tasks.judges.offline.progression_speech import information_findings, redundancy_findings
from tasks.judges.offline.tuning import Finding

PROGRESSION_DIMENSIONS = (
    "unnecessary_tool_calls",
    "information_loss",
    "redundant_statements",
    "question_quality",
)
_MANY = {
    "unnecessary_tool_calls": "many_tool_calls",
    "information_loss": "many_information_loss",
    "redundant_statements": "many_redundant",
    "question_quality": "many_questions",
}
# kind -> (measure, threshold field): the finding counts when measure >= threshold.
_THRESHOLDS = {
    "known_data_call": ("known", "known_share"),
    "repeated_sentence": ("similarity", "similarity"),
    "repeated_in_turn": ("similarity", "similarity"),
    "restated_figures": ("figures", "restated_min"),
    "bundled_questions": ("questions", "questions_min"),
}
_VAGUE = re.compile(
    r"\b(anything else|any other (?:preferences|concerns|questions|details)|general concerns|"
    r"on your mind)\b",
    re.IGNORECASE,
)
_BEFORE = re.compile(r"before (?:we|i)\b", re.IGNORECASE)
_BOOKKEEPING = {"status", "message", "success", "error", "error_type", "is_error"}

SCOPE = """Rule-based conversation-progression check (findings rated by parameters fitted
to human labels, ProgressionParams). unnecessary_tool_calls: identical calls repeated after
a success (a repeated write is severe) or with no caller turn since a failure, calls with
placeholder or empty arguments, lookups whose answer was already known from earlier tool
results. information_loss: asking again for an item a tool already used or the caller
already gave (not after a failed lookup), asking the caller to repeat what they said.
redundant_statements: agent sentences repeated nearly verbatim (in a later turn or the same
one), announced repetitions ('just to repeat'), several figures restated in a later turn;
never in the final turn or when the caller asked for a repeat. question_quality: several
questions in one turn, a write executed while the caller corrected itself between two
values of the same kind, an irreversible write without the caller's agreement, an
open-ended question ('anything else on your mind?') while the request is pending. It cannot
judge other vagueness, whether a question was needed, or whether options were withheld."""


def _response_of(trace: list[TraceItem], index: int) -> Any:
    return next((r.response for r in trace[index + 1 :] if r.kind == "tool_response"), None)


def _ok(response: Any) -> bool:
    return isinstance(response, dict) and not tool_failed(response)


def _leaves(value: Any, key: str = "") -> set[str]:
    """Informative leaf values of a tool response (bookkeeping fields and flags left out)."""
    if isinstance(value, dict):
        return {v for k, sub in value.items() if k not in _BOOKKEEPING for v in _leaves(sub, k)}
    if isinstance(value, list):
        return {v for sub in value for v in _leaves(sub, key)}
    if value is None or isinstance(value, bool) or str(value).strip() == "":
        return set()
    return {compact(str(value))}


def _repeat_kind(key: str, name: str, done: set[str], tools: list[dict[str, Any]]) -> str:
    if key not in done:
        return "repeat_without_news"
    return "repeat_write" if is_write_tool(name, tools) else "repeat_after_success"


def tool_findings(trace: list[TraceItem], tools: list[dict[str, Any]]) -> list[Finding]:
    """Identical calls repeated after a success (or with nothing new from the caller since
    a failure), calls with placeholder arguments nothing in the conversation supplied, and
    lookups that returned only what earlier tool results had already said."""
    found: list[Finding] = []
    done: set[str] = set()
    tried: dict[str, int] = {}  # call key -> number of caller utterances when it was made
    heard, known = "", set[str]()  # what a placeholder may come from; values tools returned
    utterances = 0
    for i, item in enumerate(trace):
        if item.kind == "user":
            heard += " " + compact(item.text)
            utterances += 1
        elif item.kind == "tool_response":
            heard += " " + compact(json.dumps(item.response, default=str))
        if item.kind != "tool_call":
            continue
        name = item.tool_name or ""
        key = f"{name}:{json.dumps(item.params, sort_keys=True, default=str)}"
        response = _response_of(trace, i)
        where = f"turn {item.turn_id}: {name}"
        if key in done or tried.get(key) == utterances:
            kind = _repeat_kind(key, name, done, tools)
            found.append(_tool(kind, item, f"{where} repeated with identical arguments"))
        elif any(
            isinstance(v, str) and is_placeholder(v) and not (compact(v) and compact(v) in heard)
            for v in item.params.values()
        ):
            found.append(_tool("placeholder_call", item, f"{where} with placeholder arguments"))
        elif _ok(response) and known and is_read_only(name, tools):
            leaves = _leaves(response)
            share = len(leaves & known) / len(leaves) if len(leaves) >= 3 else 0.0
            if share > 0:
                why = f"{where} returned {share:.0%} already known from earlier results"
                found.append(_tool("known_data_call", item, why, known=share))
        tried[key] = utterances
        if _ok(response):
            done.add(key)
            known |= _leaves(response)
    return found


def _tool(kind: str, item: TraceItem, evidence: str, **measures: float) -> Finding:
    return Finding(
        kind=kind,
        dimension="unnecessary_tool_calls",
        turn=item.turn_id,
        evidence=evidence,
        measures=measures,
    )


def question_findings(trace: list[TraceItem], tools: list[dict[str, Any]]) -> list[Finding]:
    """Bundled questions, writes on a self-correcting caller turn, unconfirmed writes."""
    found = [
        Finding(
            kind="bundled_questions",
            dimension="question_quality",
            turn=item.turn_id,
            evidence=f"turn {item.turn_id}: {item.text.count('?')} questions in one turn",
            measures={"questions": float(item.text.count("?"))},
        )
        for item in trace
        if item.kind == "assistant" and item.text.count("?") >= 2
    ]
    said: dict[int, str] = {}
    for item in trace:
        if item.kind == "user":
            said[item.turn_id] = said.get(item.turn_id, "") + " " + item.text
    for item in trace:
        write = item.kind == "tool_call" and is_write_tool(item.tool_name or "", tools)
        if write and self_corrected(said.get(item.turn_id, "")):
            found.append(
                Finding(
                    kind="write_amid_correction",
                    dimension="question_quality",
                    turn=item.turn_id,
                    evidence=f"turn {item.turn_id}: {item.tool_name} executed while the "
                    "caller gave conflicting values",
                )
            )
    found += _vague_questions(trace)
    for issue in unconfirmed_writes(trace, tools):
        found.append(issue.model_copy(update={"kind": "unconfirmed_write"}))
    return [f.model_copy(update={"dimension": "question_quality"}) for f in found]


def _vague_questions(trace: list[TraceItem]) -> list[Finding]:
    """An open-ended question ("anything else on your mind?") while the caller's request is
    still to be acted on (spec: vague questions when action was possible)."""
    found = []
    for i, item in enumerate(trace):
        if item.kind != "assistant":
            continue
        pending = any(t.kind == "tool_call" for t in trace[i + 1 :])
        for question in re.findall(r"[^.!?]*\?", item.text):
            if _VAGUE.search(question) and (pending or _BEFORE.match(question.strip())):
                why = f"turn {item.turn_id}: open-ended question with the request pending"
                found.append(
                    Finding(
                        kind="vague_question",
                        dimension="question_quality",
                        turn=item.turn_id,
                        evidence=why,
                    )
                )
    return found


def measure_progression(inp: ConversationInput) -> list[Finding]:
    """Everything the rule can see, before any parameter decides what counts."""
    return (
        tool_findings(inp.trace, inp.tools)
        + information_findings(inp.trace)
        + redundancy_findings(inp.trace)
        + question_findings(inp.trace, inp.tools)
    )


def counts(finding: Finding, p: ProgressionParams) -> bool:
    """The finding is rated (not 3) and its measure reaches its fitted threshold."""
    if getattr(p, finding.kind) == 3:
        return False
    if finding.kind not in _THRESHOLDS:
        return True
    measure, field = _THRESHOLDS[finding.kind]
    return finding.measures.get(measure, 0.0) >= getattr(p, field)


def decide_progression(findings: list[Finding], p: ProgressionParams) -> dict[str, Any]:
    dims = {}
    for dim in PROGRESSION_DIMENSIONS:
        mine = [f for f in findings if f.dimension == dim and counts(f, p)]
        rating = min((getattr(p, f.kind) for f in mine), default=3)
        if mine and len(mine) >= getattr(p, _MANY[dim]):
            rating = 1
        dims[dim] = {
            "evidence": "; ".join(f.evidence for f in mine[:5]) or "Nothing measurable found.",
            "flagged": bool(mine),
            "rating": rating,
        }
    ratings = [d["rating"] for d in dims.values()]
    flagged = sum(1 for d in dims.values() if d["flagged"])
    overall = 1 if (1 in ratings or flagged >= 3) else (2 if flagged else 3)
    return {"dimensions": dims, "rating": overall}


@offline_rule("conversation_progression", SCOPE)
def progression_rule(task: JudgeTask, params: Mapping[str, Any]) -> OfflineAnswer:
    if not isinstance(task.inputs, ConversationInput):
        return OfflineAnswer(error=f"expected ConversationInput, got {type(task.inputs).__name__}")
    p = ProgressionParams.resolve("conversation_progression", params)
    return OfflineAnswer(output=decide_progression(measure_progression(task.inputs), p))
