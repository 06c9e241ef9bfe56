"""Offline rule of ``transcription_accuracy_key_entities``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from difflib import SequenceMatcher
from typing import Any

from tasks.judges.base import JudgeTask
from tasks.judges.inputs import KeyEntityInput, TraceItem
from tasks.judges.offline import OfflineAnswer, offline_rule
from tasks.judges.offline.entities import CallerEntity, compact, find_entities, heard_as

SCOPE = """Rule-based key-entity transcription check. Turns mode: extracts concrete entities
from the caller's intended text (spelled and phonetic codes, names and places from
capitalisation, airport codes, flight numbers, seats, gates, dates, clock times, amounts,
durations, phone digit runs, emails) and marks each correct when its canonical value
(spoken digits = digits, date/time/amount formats unified, case-insensitive) appears in
the agent's transcript of that turn or an adjacent one; text after an interruption tag is
skipped. Tool-call mode: each identifier-like argument that no earlier tool response
supplied is compared with the entities the caller said. It cannot judge phonetic name
variants (a different spelling of a name is an error), lower-case names, entities that
need world knowledge (city vs airport names), or meaning-preserving paraphrases of
numbers it cannot parse."""

_CUT_TAGS = re.compile(
    r"\[(?:likely cut off by assistant|likely cut off by user|speaker likely cut itself off)\]",
    re.IGNORECASE,
)
_ANY_TAG = re.compile(r"\[[a-z ]+\]", re.IGNORECASE)


def _spoken_and_unspoken(text: str) -> tuple[str, str]:
    """Text before the first cut-off tag (heard) and after it (probably not spoken)."""
    parts = _CUT_TAGS.split(text, maxsplit=1)
    spoken = _ANY_TAG.sub(" ", parts[0])
    rest = _ANY_TAG.sub(" ", parts[1]) if len(parts) > 1 else ""
    return spoken, rest


def _entity_row(entity: CallerEntity, correct: bool, heard: str, skipped: bool) -> dict[str, Any]:
    if skipped:
        analysis = "In a region the interruption tags mark as not spoken."
    elif correct:
        analysis = "Canonical value found in the transcript."
    else:
        analysis = f"Not found; closest transcribed text: {heard!r}" if heard else "Not found."
    return {
        "type": entity.type,
        "value": entity.value,
        "transcribed_value": heard,
        "analysis": analysis,
        "correct": correct,
        "skipped": skipped,
    }


def judge_turns(inp: KeyEntityInput) -> list[dict[str, Any]]:
    """One answer item per unit; adjacent transcripts tolerate drift across turns."""
    heard_by_id = {u.unit_id: u.transcribed for u in inp.units}
    out = []
    for unit in inp.units:
        spoken, unspoken = _spoken_and_unspoken(unit.expected)
        neighbours = [heard_by_id.get(unit.unit_id + d, "") for d in (-1, 1)]
        rows = []
        for entity in find_entities(spoken):
            correct, heard = heard_as(entity, unit.transcribed)
            # Drift: the value slid into the next/previous transcript segment. Only when this
            # turn holds nothing resembling it; a similar but wrong span is a mishearing.
            drifted = not heard and any(heard_as(entity, t)[0] for t in neighbours if t)
            if not correct and drifted:
                correct, heard = True, "(heard in an adjacent turn)"
            rows.append(_entity_row(entity, correct, heard, skipped=False))
        known = {compact(r["value"]) for r in rows}
        for entity in find_entities(unspoken) if unspoken.strip() else []:
            if compact(entity.value) not in known:
                rows.append(_entity_row(entity, False, "", skipped=True))
        n_ok = sum(1 for r in rows if r["correct"])
        n_rated = sum(1 for r in rows if not r["skipped"])
        out.append(
            {
                "turn_id": unit.unit_id,
                "entities": rows,
                "summary": f"{n_ok} of {n_rated} entities kept" if rows else "No entities.",
            }
        )
    return out


def _tool_text(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(_tool_text(v) for v in value.values())
    if isinstance(value, list):
        return " ".join(_tool_text(v) for v in value)
    return str(value)


def _looks_like_identifier(value: str) -> bool:
    return bool(re.search(r"\d", value)) or bool(re.fullmatch(r"[A-Z][a-zA-Z'\- ]{1,40}", value))


def judge_tool_calls(trace: list[TraceItem]) -> list[dict[str, Any]]:
    """Audio-native mode: caller-sourced tool arguments vs what the caller said."""
    out = []
    said: list[CallerEntity] = []
    tool_seen = ""
    call_no = 0
    for item in trace:
        if item.kind == "user":
            said.extend(find_entities(_ANY_TAG.sub(" ", item.text)))
        elif item.kind == "tool_response":
            tool_seen += " " + compact(_tool_text(item.response))
        elif item.kind == "tool_call":
            call_no += 1
            rows = _argument_rows(item, said, tool_seen)
            out.append(
                {
                    "tool_call_id": call_no,
                    "entities": rows,
                    "summary": f"{sum(r['correct'] for r in rows)} of {len(rows)} arguments match",
                }
            )
    return out


def _argument_rows(
    call: TraceItem, said: list[CallerEntity], tool_seen: str
) -> list[dict[str, Any]]:
    rows = []
    for name, raw in call.params.items():
        value = str(raw)
        if not isinstance(raw, str | int) or not _looks_like_identifier(value):
            continue
        key = compact(value)
        if not key or key in tool_seen:
            continue  # supplied by an earlier tool response, not by the caller
        exact = next((e for e in said if compact(e.value) == key), None)
        if exact is not None:
            rows.append(_arg_row(name, exact, value, True))
            continue
        near = max(said, key=lambda e: _similarity(compact(e.value), key), default=None)
        if near is not None and _similarity(compact(near.value), key) >= 0.6:
            rows.append(_arg_row(name, near, value, False))
    return rows


def _similarity(a: str, b: str) -> float:
    return SequenceMatcher(None, a, b).ratio()


def _arg_row(param: str, entity: CallerEntity, value: str, correct: bool) -> dict[str, Any]:
    verdict = "matches" if correct else "differs from"
    return {
        "type": entity.type,
        "value": entity.value,
        "transcribed_value": value,
        "analysis": f"Argument {param}={value!r} {verdict} what the caller said.",
        "correct": correct,
        "skipped": False,
    }


@offline_rule("transcription_accuracy_key_entities", SCOPE)
def key_entities_rule(task: JudgeTask, params: Mapping[str, Any]) -> OfflineAnswer:
    inp = task.inputs
    if not isinstance(inp, KeyEntityInput):
        return OfflineAnswer(error=f"expected KeyEntityInput, got {type(inp).__name__}")
    if inp.mode == "tool_calls":
        return OfflineAnswer(output=judge_tool_calls(inp.trace))
    return OfflineAnswer(output=judge_turns(inp))
