"""Key entities: what the caller supplied (per the trace) vs what the agent put in its calls.

Computed by the harness from the tool-call log, so it works for any agent: a caller value
is a leaf of a trace tool call that the caller said in an earlier line (or that is part
of ``information_required``) and that no earlier trace response provided. The agent's
version is the same parameter of its matching call to the same tool (the
nth call of that tool, a retry after a failed lookup counting with the call it repeats).
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any

from scenarios.models import Scenario
from tasks.records import EntityRecord, ToolCallRecord
from tasks.simulate.dialogue.script import build_script
from tasks.simulate.dialogue.slots import (
    SlotReader,
    alias_table,
    canonical,
    signature,
    tokens,
    value_kind,
)


def _leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaves(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _leaves(v, f"{path}[{i}]")]
    return [(path, value)]


def entity_type(path: str, value: Any) -> str:
    name = path.lower()
    text = str(value)
    kind = value_kind(value)
    if kind in ("date", "datetime", "time"):
        return kind
    if re.fullmatch(r"EMP\d+", text):
        return "employee_id"
    if "name" in name:
        return "name"
    if "phone" in name:
        return "phone"
    if kind == "number":
        return "amount" if re.search(r"amount|fare|cost|price|fee", name) else "number"
    if text.isdigit():
        return "digits"
    if any(c.isdigit() for c in text):
        return "code"
    return "text"


def _same(expected: Any, got: Any) -> bool:
    kind = value_kind(expected)
    try:
        return canonical(expected, kind) == canonical(got, kind)
    except (TypeError, ValueError):
        return False


def caller_entities(scenario: Scenario) -> list[tuple[str, int, str, Any]]:
    """(tool, nth call of that tool, param path, trace value) of each caller-supplied value.

    Only a value's first use counts; later uses repeat what the agent already has.
    """
    script = build_script(scenario)
    today_text = scenario.initial_db.get("_current_date") or scenario.current_date_time[:10]
    reader = SlotReader(date.fromisoformat(str(today_text)), alias_table(scenario.initial_db))
    info = scenario.user_goal.get("information_required") or {}
    info_sigs = {signature(v) for _, v in _leaves(info) if signature(v)}
    line_tokens = [tokens(line) for line in script.user_lines]
    seen_in_responses: set[str] = set()
    calls_per_tool: dict[str, int] = {}
    found: dict[str, tuple[str, int, str, Any]] = {}
    for block_index, block in enumerate(script.blocks):
        for step in block:
            if step.kind != "call":
                continue
            nth = calls_per_tool.get(step.tool, 0)
            calls_per_tool[step.tool] = nth + 1
            for path, value in _leaves(step.params):
                key = json.dumps(value, sort_keys=True)
                if value is None or isinstance(value, bool) or key in found:
                    continue
                if key in seen_in_responses:
                    continue
                said = any(reader.locate(value, line_tokens[m]) for m in range(block_index))
                if said or signature(value) in info_sigs:
                    found[key] = (step.tool, nth, path, value)
            for _, value in _leaves(step.trace_response or {}):
                seen_in_responses.add(json.dumps(value, sort_keys=True))
    return list(found.values())


def _match_calls(scenario: Scenario, calls: list[ToolCallRecord]) -> dict[tuple[str, int], Any]:
    """The agent's call for the nth trace call of each tool, in order.

    An agent call that failed where the trace's succeeded, followed by another call of the
    same tool with the same parameter names, is a retry: both stand for one trace call,
    and the first one is what the agent heard first.
    """
    expected_ok: dict[str, list[bool]] = {}
    for block in build_script(scenario).blocks:
        for step in block:
            if step.kind == "call":
                ok = step.trace_response is None or step.trace_response.get("status") != "error"
                expected_ok.setdefault(step.tool, []).append(ok)
    matched: dict[tuple[str, int], Any] = {}
    by_tool: dict[str, list[ToolCallRecord]] = {}
    for call in calls:
        by_tool.setdefault(call.tool_name, []).append(call)
    for tool, made in by_tool.items():
        i = 0
        for nth, ok in enumerate(expected_ok.get(tool, [])):
            if i >= len(made):
                break
            matched[(tool, nth)] = made[i]
            retried = (
                ok
                and made[i].status == "error"
                and i + 1 < len(made)
                and made[i + 1].params.keys() == made[i].params.keys()
            )
            i += 2 if retried else 1
    return matched


def entity_records(scenario: Scenario, calls: list[ToolCallRecord]) -> list[EntityRecord]:
    """Expected vs heard for each caller-supplied value (see the module docstring)."""
    matched = _match_calls(scenario, calls)
    records = []
    for tool, nth, path, expected in caller_entities(scenario):
        actual = matched.get((tool, nth))
        got = dict(_leaves(actual.params)).get(path) if actual is not None else None
        records.append(
            EntityRecord(
                turn_id=actual.turn_id if actual is not None else 0,
                type=entity_type(path, expected),
                expected=str(expected),
                heard=None if got is None else str(got),
                correct=got is not None and _same(expected, got),
            )
        )
    return records
