"""Deterministic metrics on records built from every EVA scenario and its golden tool calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scenarios.loader import load_eva_scenarios
from scenarios.models import Scenario
from tasks.metrics.runner import run_metrics
from tasks.records import AttemptRecord, ToolCallRecord, TurnRecord
from tests.tasks.metrics.test_runner import OWN_METRICS


def golden_record(scenario: Scenario, replay: dict) -> AttemptRecord:
    """A text-mode record replaying the golden calls and ending in the golden final DB."""
    turns = [TurnRecord(turn_id=0, role="assistant", intended_text="Hello! How can I help?")]
    user_turn = 0
    for event in scenario.expected_trace:
        kind = event.get("event_type")
        if kind == "user_utterance":
            user_turn += 1
            turns.append(
                TurnRecord(turn_id=user_turn, role="user", intended_text=event["utterance"])
            )
        elif kind == "agent_utterance" and user_turn:
            turns.append(
                TurnRecord(turn_id=user_turn, role="assistant", intended_text=event["utterance"])
            )
    calls = [
        ToolCallRecord(
            index=i,
            turn_id=max(user_turn, 1),
            tool_name=c["tool"],
            params=c["params"],
            response=c["response"],
        )
        for i, c in enumerate(replay["calls"])
    ]
    return AttemptRecord(
        attempt_id=f"golden/{scenario.key}",
        run_id="golden",
        system="golden",
        scenario_id=scenario.id,
        domain=scenario.domain,
        caller_ended=True,
        turns=turns,
        tool_calls=calls,
        final_db=scenario.expected_db,
        final_db_hash=replay["final_db_sha256"],
    )


@pytest.fixture(scope="module")
def golden(eva_root: Path) -> list[tuple[Scenario, AttemptRecord]]:
    out = []
    for domain in ("airline", "itsm", "medical_hr"):
        replays = json.loads((eva_root / "reference_replay" / f"{domain}.json").read_text())
        for scenario in load_eva_scenarios(eva_root, domains=[domain]):
            out.append((scenario, golden_record(scenario, replays[scenario.id])))
    return out


def test_golden_records_complete_and_never_crash(
    golden: list[tuple[Scenario, AttemptRecord]],
) -> None:
    assert golden
    for scenario, record in golden:
        scores = {s.name: s for s in run_metrics(record, scenario, names=OWN_METRICS)}
        assert scores["task_completion"].score == 1.0, scenario.key
        assert scores["conversation_valid_end"].score == 1.0
        auth = scores["authentication_success"]
        assert auth.skipped or auth.score == 1.0, scenario.key
        validity = scores["tool_call_validity"]
        assert validity.error is None and 0.0 <= validity.score <= 1.0
        assert scores["turn_taking"].skipped
        assert scores["stt_wer"].score == 0.0
