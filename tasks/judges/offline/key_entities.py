"""Offline rule of ``transcription_accuracy_key_entities``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from difflib import SequenceMatcher
from typing import Any

from tasks.judges.base import JudgeTask
from tasks.judges.inputs import KeyEntityInput, TraceItem
from tasks.judges.offline import OfflineAnswer, offline_rule
from tasks.judges.offline.dates import spoken_dates
from tasks.judges.offline.entities import (
    CallerEntity,
    canonical,
    compact,
    find_entities,
    heard_as,
    spoken_norm,
    text_forms,
    time_variants,
)
from tasks.judges.offline.params import KeyEntityParams
from tasks.spoken.words import MONTHS

SCOPE = """Rule-based key-entity transcription check. Turns mode: extracts concrete entities
from the caller's intended text (spelled and phonetic codes, names and places from
capitalisation, airport codes, flight numbers, seats, gates, dates, month-years, clock
times, amounts, durations, phone digit runs, emails) and marks each correct when its
canonical value (spoken digits = digits, date/time/amount formats unified,
case-insensitive) appears in a canonical reading of the agent's transcript of that turn
(whole, clause by clause, ISO dates as month and day) or of an adjacent one; text after an
interruption tag is skipped. Tool-call mode: each identifier-like argument that no earlier
tool response supplied is compared with what the caller said, as a value of its kind:
dates, clock times and numbers in any spoken form, codes whole or said in pieces, names
also when the agent completed them; only a similar said value of the same kind makes an
argument wrong. It cannot judge phonetic name variants (a different spelling of a name is
an error), lower-case names, entities that need world knowledge (city vs airport names),
or meaning-preserving paraphrases of numbers it cannot parse."""

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


def judge_turns(inp: KeyEntityInput, p: KeyEntityParams | None = None) -> list[dict[str, Any]]:
    """One answer item per unit; adjacent transcripts tolerate drift across turns (when
    ``p.adjacent_drift``); only the entity kinds ``p`` reports."""
    p = p or KeyEntityParams()
    heard_by_id = {u.unit_id: u.transcribed for u in inp.units}
    out = []
    for unit in inp.units:
        spoken, unspoken = _spoken_and_unspoken(unit.expected)
        neighbours = [heard_by_id.get(unit.unit_id + d, "") for d in (-1, 1)]
        rows = []
        for entity in (e for e in find_entities(spoken) if p.reports(e.type)):
            correct, heard = heard_as(entity, unit.transcribed)
            # Drift: the value slid into the next/previous transcript segment. Only when this
            # turn holds nothing resembling it; a similar but wrong span is a mishearing.
            drifted = (
                p.adjacent_drift
                and not heard
                and any(heard_as(entity, t)[0] for t in neighbours if t)
            )
            if not correct and drifted:
                correct, heard = True, "(heard in an adjacent turn)"
            rows.append(_entity_row(entity, correct, heard, skipped=False))
        known = {compact(r["value"]) for r in rows}
        for entity in find_entities(unspoken) if unspoken.strip() else []:
            if compact(entity.value) not in known and p.reports(entity.type):
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
    heard = ""
    tool_seen = ""
    call_no = 0
    for item in trace:
        if item.kind == "user":
            text = _ANY_TAG.sub(" ", item.text)
            said.extend(find_entities(text))
            heard += " | " + text_forms(text) + " " + _said_dates(text)
        elif item.kind == "tool_response":
            tool_seen += " " + compact(_tool_text(item.response))
        elif item.kind == "tool_call":
            call_no += 1
            rows = _argument_rows(item, said, heard, tool_seen)
            out.append(
                {
                    "tool_call_id": call_no,
                    "entities": rows,
                    "summary": f"{sum(r['correct'] for r in rows)} of {len(rows)} arguments match",
                }
            )
    return out


def _said_dates(text: str) -> str:
    """ISO forms of the dates a caller said (with their year when one was said)."""
    return " ".join(d.isoformat() for d in spoken_dates(spoken_norm(text)))


def _argument_rows(
    call: TraceItem, said: list[CallerEntity], heard: str, tool_seen: str
) -> list[dict[str, Any]]:
    rows = []
    for name, raw in call.params.items():
        value = str(raw)
        if not isinstance(raw, str | int) or not _looks_like_identifier(value):
            continue
        key = compact(value)
        if not key or key in tool_seen:
            continue  # supplied by an earlier tool response, not by the caller
        row = _typed_row(name, value, said, heard)
        if row is None and not _ISO_DATE.match(value) and not _CLOCK.fullmatch(value):
            row = _code_row(name, value, key, said, heard)
        if row is not None:
            rows.append(row)
    return rows


_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_CLOCK = re.compile(r"\d{1,2}:\d{2}(?::00)?")


def _typed_row(
    name: str, value: str, said: list[CallerEntity], heard: str
) -> dict[str, Any] | None:
    """Dates, clock times and plain numbers are compared as values of their kind, in any
    spoken form: "April fourth, two thousand" is 2000-04-04, "ten AM" is 10:00, "ten
    people" is 10. Only a said value of the same kind can make such an argument wrong."""
    tokens = f" {heard} "
    if m := _ISO_DATE.match(value):
        iso, month_day = m.group(0), f"{MONTHS[int(m.group(2)) - 1]} {int(m.group(3))}"
        if iso in heard or f" {month_day} " in tokens:
            return _arg_row(name, _said("date", month_day), value, True)
        dates = [e for e in said if e.type == "date"]
        return _arg_row(name, dates[-1], value, False) if dates else None
    if _CLOCK.fullmatch(value):
        if any(f" {v} " in tokens for v in time_variants(canonical(value))):
            return _arg_row(name, _said("time", value), value, True)
        times = [e for e in said if e.type == "time"]
        return _arg_row(name, times[-1], value, False) if times else None
    if re.fullmatch(r"\d{1,6}(?:\.\d+)?", value):
        number = canonical(value)
        return (
            _arg_row(name, _said("number", value), value, True) if f" {number} " in tokens else None
        )
    return None


def _said(kind: str, value: str) -> CallerEntity:
    return CallerEntity(type=kind, value=value, canonical=canonical(value))


def _code_row(
    name: str, value: str, key: str, said: list[CallerEntity], heard: str
) -> dict[str, Any] | None:
    """Identifiers and names: said as one entity, or in pieces ("K Q H K dash five one F"
    over two clauses), or a name the agent completed ("IntelliJ" -> "IntelliJ IDEA").
    Only a similar value the caller said makes the argument wrong."""
    codes = [e for e in said if e.type not in ("date", "time", "month_year", "duration")]
    exact = next((e for e in codes if compact(e.value) == key), None)
    if exact is not None:
        return _arg_row(name, exact, value, True)
    if len(key) >= 4 and key in re.sub(r"[^a-z0-9@]", "", heard):
        return _arg_row(name, _said("code", value), value, True)
    if re.fullmatch(r"[A-Za-z][A-Za-z' -]*", value):
        words = {w for w in re.findall(r"[a-z]{3,}", value.lower())}
        if words & set(re.findall(r"[a-z]{3,}", heard)):
            return _arg_row(name, _said("name", value), value, True)
        threshold = 0.75  # a misspelt name, not a different one
    else:
        threshold = 0.6
    near = max(codes, key=lambda e: _similarity(compact(e.value), key), default=None)
    if len(key) >= 4 and near is not None and _similarity(compact(near.value), key) >= threshold:
        return _arg_row(name, near, value, False)
    return None


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
    p = KeyEntityParams.resolve("transcription_accuracy_key_entities", params)
    return OfflineAnswer(output=judge_turns(inp, p))
