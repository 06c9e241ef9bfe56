"""Offline rule of ``user_behavioral_fidelity``: did the simulated caller corrupt the test?"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from tasks.judges.base import JudgeTask
from tasks.judges.inputs import BehaviorInput, TraceItem
from tasks.judges.offline import OfflineAnswer, offline_rule
from tasks.judges.offline.entities import canonical, compact

SCOPE = """Rule-based check of the simulated caller against its instructions, judged on what
it said (intended text). premature_ending: the caller ended the call right after the agent
asked it a question that was not a closing question, before any write tool ran, with no
failed tool call in that turn. missing_information: the agent asked for an item the caller's
instructions hold (matched by the item's key words) and no later caller turn ever gave its
value. duplicate_modifications: the same write tool ran twice with identical arguments after
the caller asked again. extra_modifications: a write tool whose name appears nowhere in the
caller's goal ran right after the caller asked for something. wrong_language: for English
runs, caller text that is mostly non-Latin script or has almost no English function words.
decision_tree_violation cannot be checked by rule and is never detected."""

KEYS = (
    "extra_modifications",
    "premature_ending",
    "missing_information",
    "duplicate_modifications",
    "decision_tree_violation",
    "wrong_language",
)
_CLOSING = re.compile(
    r"\b(anything else|something else|help you with|have a (great|good|nice))\b", re.I
)
_ENGLISH = {
    "the",
    "and",
    "is",
    "to",
    "my",
    "i",
    "a",
    "you",
    "it",
    "of",
    "on",
    "for",
    "yes",
    "no",
    "that",
    "please",
    "me",
    "can",
    "in",
    "this",
    "what",
    "with",
    "have",
}
_ASKING = re.compile(r"\b(can|could|would|please|i need|i want|i'd like|also)\b", re.I)


def _write_calls(trace: list[TraceItem], write_tools: list[str]) -> list[tuple[int, TraceItem]]:
    return [
        (i, t) for i, t in enumerate(trace) if t.kind == "tool_call" and t.tool_name in write_tools
    ]


def premature_ending(inp: BehaviorInput) -> str | None:
    if not inp.caller_ended:
        return None
    agent = [t for t in inp.trace if t.kind == "assistant"]
    if not agent or _write_calls(inp.trace, inp.write_tools):
        return None
    last = agent[-1]
    failed = any(
        t.kind == "tool_response"
        and t.turn_id == last.turn_id
        and isinstance(t.response, dict)
        and str(t.response.get("status", "")).lower() == "error"
        for t in inp.trace
    )
    question = last.text.rstrip().endswith("?") and not _CLOSING.search(last.text)
    if question and not failed:
        return (
            f"the caller hung up after the agent asked (turn {last.turn_id}): {last.text[-120:]!r}"
        )
    return None


def _info_items(goal: dict[str, Any]) -> dict[str, str]:
    info = goal.get("information_required") or {}
    if not isinstance(info, dict):
        return {}
    return {
        str(k): json.dumps(v, default=str) if not isinstance(v, str) else v for k, v in info.items()
    }


def missing_information(inp: BehaviorInput) -> str | None:
    items = _info_items(inp.user_goal)
    said = " ".join(inp.intended_user_turns.values())
    said_compact = compact(said)
    for item in inp.trace:
        if item.kind != "assistant" or "?" not in item.text:
            continue
        asked = canonical(item.text)
        for key, value in items.items():
            words = [w for w in key.lower().split("_") if len(w) > 2]
            if not words or not all(w in asked for w in words):
                continue
            value_key = compact(value)
            if value_key and value_key not in said_compact:
                return f"the agent asked for {key} (turn {item.turn_id}); the caller never gave it"
    return None


def duplicate_modifications(inp: BehaviorInput) -> str | None:
    seen: dict[str, int] = {}
    for _, call in _write_calls(inp.trace, inp.write_tools):
        key = f"{call.tool_name}:{json.dumps(call.params, sort_keys=True, default=str)}"
        if key in seen and _asked_between(inp.trace, seen[key], call.turn_id):
            return (
                f"{call.tool_name} ran twice with identical arguments after the caller asked again"
            )
        seen[key] = call.turn_id
    return None


def _asked_between(trace: list[TraceItem], first: int, second: int) -> bool:
    return any(
        t.kind == "user" and first < t.turn_id <= second and _ASKING.search(t.text) for t in trace
    )


def extra_modifications(inp: BehaviorInput) -> str | None:
    goal_text = canonical(json.dumps(inp.user_goal, default=str)).replace(" ", "")
    if not goal_text:
        return None
    for _, call in _write_calls(inp.trace, inp.write_tools):
        name = call.tool_name or ""
        words = [w for w in name.split("_") if len(w) > 3]
        if (
            words
            and not any(w in goal_text for w in words)
            and _asked_between(inp.trace, call.turn_id - 1, call.turn_id)
        ):
            return f"{name} ran after a caller request that is not in its goal"
    return None


def wrong_language(inp: BehaviorInput) -> str | None:
    if not inp.language.lower().startswith("en"):
        return None
    text = " ".join(inp.intended_user_turns.values())
    letters = re.findall(r"[^\W\d_]", text)
    if not letters:
        return None
    latin = sum(1 for c in letters if c.isascii())
    words = re.findall(r"[a-z']+", text.lower())
    english = sum(1 for w in words if w in _ENGLISH)
    if latin / len(letters) < 0.5 or (len(words) >= 20 and english / len(words) < 0.05):
        return "the caller mostly did not speak English"
    return None


CHECKS = {
    "extra_modifications": extra_modifications,
    "premature_ending": premature_ending,
    "missing_information": missing_information,
    "duplicate_modifications": duplicate_modifications,
    "wrong_language": wrong_language,
}


def judge_behavior(inp: BehaviorInput) -> dict[str, Any]:
    analysis = {}
    for key in KEYS:
        check = CHECKS.get(key)
        found = check(inp) if check else None
        note = found or ("Not checkable by rule." if check is None else "Not detected.")
        analysis[key] = {"analysis": note, "detected": bool(found)}
    corrupted = any(v["detected"] for v in analysis.values())
    return {"corruption_analysis": analysis, "rating": 0 if corrupted else 1}


@offline_rule("user_behavioral_fidelity", SCOPE)
def behavior_rule(task: JudgeTask, params: Mapping[str, Any]) -> OfflineAnswer:
    if not isinstance(task.inputs, BehaviorInput):
        return OfflineAnswer(error=f"expected BehaviorInput, got {type(task.inputs).__name__}")
    return OfflineAnswer(output=judge_behavior(task.inputs))
