"""Pack-wide: no answer reaches the reference agent unmarked (issue 32).

Every built-in pack record in text mode. For every parameter value of every tool call the
agent made, checked from the stored attempt alone (heard turns, received responses,
events), not from the policy's own bookkeeping:

- a value the caller owns (its ``information_required``) was heard in a caller turn
  before the call;
- a value of the golden trace's earlier responses was in a response the agent really
  received before the call, or heard;
- anything else was heard, received, or carries an ``oracle_value`` event naming the
  tool, parameter and value (the trace's value, used as the trace has it).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import scenarios
from scenarios.loader import load_scenario_dir
from scenarios.models import Scenario
from tasks.records import AttemptRecord
from tasks.simulate import SimulationConfig, simulate_text
from tasks.simulate.reference.choices import leaves
from tasks.simulate.reference.oracle import ORACLE_EVENT
from tasks.spoken import normalize_spoken

PACK_DIR = Path(scenarios.__file__).resolve().parent / "pack"
MONTHS = "january february march april may june july august september october november december"


def _sig(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return re.sub(r"[^a-z0-9]", "", str(value).lower())


def said_in(value: Any, line: str) -> bool:
    """``value`` is said in ``line`` (normalized as the voice stack does)."""
    normalized = normalize_spoken(line)
    toks = [t for t in normalized.split() if t not in ("dash", "hyphen")]
    text = str(value)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}( \d{2}:\d{2})?", text):
        day, _, clock = text.partition(" ")
        month = MONTHS.split()[int(day[5:7]) - 1]
        has_day = day in toks or f"{month} {int(day[8:])}" in normalized.lower()
        return has_day and (not clock or clock.lstrip("0") in toks or clock in toks)
    target = _sig(value)
    return any(
        "".join(_sig(t) for t in toks[i:j]) == target
        for i in range(len(toks))
        for j in range(i + 1, min(len(toks), i + 8) + 1)
    )


@pytest.fixture(scope="module")
def attempts() -> list[tuple[Scenario, AttemptRecord]]:
    pack = load_scenario_dir(PACK_DIR)
    return [(s, simulate_text(s, SimulationConfig())) for s in pack]


def _from_golden_responses(scenario: Scenario) -> set[tuple[str, str]]:
    """(tool, value) of trace calls whose value an earlier trace response held."""
    before: set[str] = set()
    out = set()
    for event in scenario.expected_trace:
        if event["event_type"] == "tool_call":
            for _, value in leaves(event["params"]):
                if _sig(value) in before:
                    out.add((event["tool_name"], _sig(value)))
        elif event["event_type"] == "tool_response":
            before |= {_sig(v) for _, v in leaves(event.get("response") or {})}
    return out


def _unsupported(scenario: Scenario, record: AttemptRecord) -> list[tuple[str, str, Any, str]]:
    owned = {_sig(v) for _, v in leaves(scenario.user_goal.get("information_required") or {})}
    golden = _from_golden_responses(scenario)
    marked = {
        (e.data["tool"], e.data["param"], _sig(e.data["value"]))
        for e in record.events
        if e.kind == ORACLE_EVENT
    }
    problems = []
    for call in record.tool_calls:
        heard = [t.heard_text or "" for t in record.turns if t.role == "user"]
        heard = [h for t, h in zip(
            [t for t in record.turns if t.role == "user"], heard, strict=True
        ) if t.turn_id <= call.turn_id]  # fmt: skip
        received = {_sig(v) for c in record.tool_calls[: call.index] for _, v in leaves(c.response)}
        for path, value in leaves(call.params):
            if value is None or isinstance(value, bool) or not _sig(value):
                continue
            sig = _sig(value)
            if any(said_in(value, line) for line in heard) or sig in received:
                continue
            if sig in owned:
                problems.append((call.tool_name, path, value, "caller value unheard"))
            elif (call.tool_name, sig) in golden:
                problems.append((call.tool_name, path, value, "response value never received"))
            elif (call.tool_name, path, sig) not in marked:
                problems.append((call.tool_name, path, value, "trace value unmarked"))
    return problems


def test_no_caller_or_unseen_response_value_is_used_unheard(
    attempts: list[tuple[Scenario, AttemptRecord]],
) -> None:
    assert len(attempts) >= 44
    found = {s.key: p for s, r in attempts if (p := _unsupported(s, r))}
    assert found == {}


def test_trace_values_are_marked_and_none_is_the_callers(
    attempts: list[tuple[Scenario, AttemptRecord]],
) -> None:
    events = [(s, e) for s, r in attempts for e in r.events if e.kind == ORACLE_EVENT]
    assert events  # the pack has agent choices (notification types, rebooking types)
    for scenario, event in events:
        owned = {_sig(v) for _, v in leaves(scenario.user_goal["information_required"])}
        assert _sig(event.data["value"]) not in owned, (scenario.key, event.data)
        assert event.data["reason"] in ("agent_choice", "trace_value")


def test_the_check_catches_a_value_the_agent_never_heard(
    attempts: list[tuple[Scenario, AttemptRecord]],
) -> None:
    """Not a check that cannot fail: a record whose caller never said its employee ID."""
    scenario, record = next((s, r) for s, r in attempts if s.domain == "medical_hr")
    deaf = record.model_copy(deep=True)
    for turn in deaf.turns:
        if turn.role == "user":
            turn.heard_text = ""
    assert any(p[3] == "caller value unheard" for p in _unsupported(scenario, deaf))
    unmarked = record.model_copy(deep=True)
    unmarked.events = [e for e in unmarked.events if e.kind != ORACLE_EVENT]
    choices = [e for e in record.events if e.kind == ORACLE_EVENT]
    if choices:
        assert any(p[3] == "trace value unmarked" for p in _unsupported(scenario, unmarked))
