"""ID chaining: stale trace IDs are swapped for the IDs the engine produced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scenarios.chaining import IdChainer, is_identifier, replay_trace
from scenarios.executor import ToolEngine
from scenarios.loader import load_scenario_dir
from scenarios.models import Scenario
from tests.scenarios.conftest import STALE_ID


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("INC0048271", True),
        ("REQ-FAC-0ddb46f41d67", True),
        ("CAL-048271", True),
        ("Marcus", False),
        ("2026-03-10", False),
        ("Booked BLD1-FL3-RM301. ID: REQ-1", False),
        ("7294", False),
        (12345, False),
    ],
)
def test_identifier_shape(value: Any, expected: bool) -> None:
    assert is_identifier(value) is expected


def test_chainer_maps_stale_ids_only() -> None:
    chainer = IdChainer()
    learned = chainer.feed(
        {"status": "success", "request_id": "REQ-HW-048271", "name": "Marcus", "on": "2026-03-01"},
        {
            "status": "success",
            "request_id": "REQ-HW-7d67dd4e049f",
            "name": "marcus",
            "on": "2026-04-01",
        },
    )
    assert learned == {"REQ-HW-048271": "REQ-HW-7d67dd4e049f"}
    params = {"request_id": "REQ-HW-048271", "ids": ["REQ-HW-048271", "X1"], "n": 3}
    assert chainer.apply(params) == {
        "request_id": "REQ-HW-7d67dd4e049f",
        "ids": ["REQ-HW-7d67dd4e049f", "X1"],
        "n": 3,
    }
    assert params["request_id"] == "REQ-HW-048271", "apply must not mutate its input"


def test_chainer_ignores_reordered_real_ids() -> None:
    chainer = IdChainer()
    chainer.feed({"items": ["AST-1", "AST-2"]}, {"items": ["AST-2", "AST-1"]})
    assert chainer.mapping == {}


def test_later_responses_override_earlier_mappings() -> None:
    chainer = IdChainer()
    chainer.feed({"id": "INC1"}, {"id": "INCa1b2"})
    chainer.feed({"id": "INC1"}, {"id": "INCc3d4"})
    assert chainer.apply({"t": "INC1"}) == {"t": "INCc3d4"}


def test_chaining_reproduces_reference_params(
    eva_scenarios: list[Scenario], eva_reference: dict[str, dict[str, Any]]
) -> None:
    """Fed the reference engine's responses, chaining turns trace params into its params."""
    checked = 0
    for scenario in eva_scenarios:
        reference = eva_reference[scenario.domain][scenario.id]["calls"]
        calls = [e for e in scenario.expected_trace if e["event_type"] == "tool_call"]
        responses = [e for e in scenario.expected_trace if e["event_type"] == "tool_response"]
        assert len(calls) == len(responses) == len(reference), scenario.key
        chainer = IdChainer()
        for call, trace_response, golden in zip(calls, responses, reference, strict=True):
            assert chainer.apply(call["params"]) == golden["params"], scenario.key
            chainer.feed(trace_response["response"], golden["response"])
            checked += 1
    assert checked == sum(len(r["calls"]) for d in eva_reference.values() for r in d.values())


def test_replay_trace_chains_ids_to_the_expected_db(mini_pack: Path, fake_engine: Any) -> None:
    scenario = load_scenario_dir(mini_pack)[0]
    replay = replay_trace(scenario)
    assert replay.error is None and replay.hash_match
    created, closed = replay.calls
    assert created.response["ticket_number"] != STALE_ID
    assert replay.id_map == {STALE_ID: created.response["ticket_number"]}
    assert closed.trace_params == {"ticket_number": STALE_ID}
    assert closed.params == {"ticket_number": created.response["ticket_number"]}
    assert closed.response["status"] == "success"


def test_verbatim_replay_misses_the_expected_db(mini_pack: Path, fake_engine: Any) -> None:
    """The reason chaining exists: the stale ID points nowhere."""
    scenario = load_scenario_dir(mini_pack)[0]
    engine = ToolEngine(scenario.domain, scenario.initial_db, scenario.agent.tool_names)
    for event in scenario.expected_trace:
        if event["event_type"] == "tool_call":
            engine.execute(event["tool_name"], event["params"])
    assert engine.final_hash != replay_trace(scenario).expected_hash


def test_missing_engine_is_reported_not_raised(mini_pack: Path, no_engine: None) -> None:
    replay = replay_trace(load_scenario_dir(mini_pack)[0])
    assert replay.error is not None and "no tool engine" in replay.error
    assert not replay.hash_match and replay.calls == []


def test_error_response_teaches_nothing() -> None:
    chainer = IdChainer()
    learned = chainer.feed(
        {"status": "success", "ticket_number": "INC0048271"},
        {"status": "error", "ticket_number": "INC9f9f9f9f", "error_type": "not_found"},
    )
    assert learned == {} and chainer.mapping == {}
