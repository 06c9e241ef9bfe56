"""Failing to disambiguate (faithfulness, spec 4.3 dimension 4): acting on contradictory
input, retrying a failed lookup with other values without asking the caller, and not asking
the caller to spell or check a value after a lookup with it failed. Findings only;
``faithfulness.decide_faithfulness`` rates them."""

from __future__ import annotations

import json
import re
from typing import Any

from tasks.judges.inputs import TraceItem
from tasks.judges.offline.grounding import Sources, is_placeholder, tool_failed
from tasks.judges.offline.policy import is_read_only, self_corrected
from tasks.judges.offline.tuning import Finding

# Asking the caller to spell, re-read or confirm a value: clarification after a failure.
_VERIFY = re.compile(
    r"\b(spell|character by character|(?:letter|character) (?:by|at a) |one (?:letter|character) "
    r"at a time|double[- ]check|read (?:it|that|the \w+|me the \w+)|repeat|say (?:it|that)|"
    r"confirm (?:the|your|that|it)|(?:is|was) (?:that|it) correct|did i (?:get|hear))",
    re.IGNORECASE,
)
# A lookup that found nothing for the value (not a refusal such as "once per 180 days").
_NOT_FOUND = re.compile(r"not[ _]found|no \w+ found|does not match|mismatch|invalid|unknown")
_DIM = "failing_to_disambiguate"


def _finding(kind: str, turn: int, evidence: str) -> Finding:
    return Finding(kind=kind, dimension=_DIM, turn=turn, evidence=evidence)


def disambiguation_findings(trace: list[TraceItem], tools: list[dict[str, Any]]) -> list[Finding]:
    return _retries(trace) + _conflicts(trace, tools) + _unverified(trace, tools)


def _retries(trace: list[TraceItem]) -> list[Finding]:
    """A failed lookup followed by a retry of the same tool before the caller spoke again."""
    found = []
    for i, item in enumerate(trace):
        if item.kind != "tool_response" or not tool_failed(item.response):
            continue
        for later in trace[i + 1 :]:
            if later.kind == "user":
                break
            if later.kind == "tool_call" and later.tool_name == item.tool_name:
                why = f"{item.tool_name} failed and was retried with other values without asking"
                found.append(_finding("retry_without_asking", later.turn_id, why))
                break
    return found


def _conflicts(trace: list[TraceItem], tools: list[dict[str, Any]]) -> list[Finding]:
    """Tool calls on a turn where the caller gave two values of the same kind."""
    said: dict[int, str] = {}
    for item in trace:
        if item.kind == "user":
            said[item.turn_id] = said.get(item.turn_id, "") + " " + item.text
    found = []
    for item in trace:
        if item.kind == "tool_call" and self_corrected(said.get(item.turn_id, "")):
            kind = (
                "conflict_read" if is_read_only(item.tool_name or "", tools) else "conflict_write"
            )
            why = f"{item.tool_name} called while the caller gave conflicting values"
            found.append(_finding(kind, item.turn_id, why))
    return found


def _unverified(trace: list[TraceItem], tools: list[dict[str, Any]]) -> list[Finding]:
    """A lookup with a value the caller gave failed, and the agent's next words do not ask
    the caller to spell or check it (spec: not asking for spelling after a failed lookup)."""
    heard = Sources()
    found = []
    for i, item in enumerate(trace):
        if item.kind == "user":
            heard.add_user(item.text)
        if item.kind != "tool_call" or not is_read_only(item.tool_name or "", tools):
            continue
        response = next((r.response for r in trace[i + 1 :] if r.kind == "tool_response"), None)
        values = [v for v in item.params.values() if isinstance(v, str) and not is_placeholder(v)]
        missed = tool_failed(response) and _NOT_FOUND.search(json.dumps(response).lower())
        if not missed or not any(heard.has_text(v) for v in values):
            continue
        reply = next((t for t in trace[i + 1 :] if t.kind in ("assistant", "user")), None)
        if reply is not None and reply.kind == "assistant" and not _VERIFY.search(reply.text):
            why = f"{item.tool_name} failed with the caller's value; no spelling or check asked"
            found.append(_finding("unverified_after_failure", reply.turn_id, why))
    return found
