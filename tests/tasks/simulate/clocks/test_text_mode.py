"""Text mode over the EVA reference records: the harness's integrity check."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaflow_core.registry import UnknownNameError
from scenarios.loader import load_eva_scenarios
from scenarios.models import Scenario
from tasks.records import AttemptRecord
from tasks.simulate import SimulationConfig, simulate, simulate_text
from tasks.simulate.agents import UnsupportedModeError, get_agent


@pytest.fixture(scope="module")
def eva_scenarios(eva_root: Path) -> list[Scenario]:
    return load_eva_scenarios(eva_root)


@pytest.fixture(scope="module")
def text_records(eva_scenarios: list[Scenario]) -> dict[str, AttemptRecord]:
    config = SimulationConfig()
    return {s.key: simulate(s, config) for s in eva_scenarios}


def test_every_record_completes_its_task(text_records: dict[str, AttemptRecord]) -> None:
    assert len(text_records) == 181
    failed = [k for k, r in text_records.items() if r.final_db_hash != r.expected_db_hash]
    assert failed == []


def test_every_call_ends_with_the_caller_saying_goodbye(
    text_records: dict[str, AttemptRecord],
) -> None:
    for key, record in text_records.items():
        assert record.status == "ok", key
        assert record.end_reason == "goodbye" and record.caller_ended, key
        assert record.turns[-1].role == "user", key


def test_turns_pair_user_n_with_reply_n(text_records: dict[str, AttemptRecord]) -> None:
    for record in text_records.values():
        assert record.turns[0].turn_id == 0 and record.turns[0].role == "assistant"
        assert record.turns[0].intended_text == "Hello! How can I help you today?"
        for earlier, later in zip(record.turns, record.turns[1:], strict=False):
            if later.role == "user":
                assert earlier.role == "assistant" and later.turn_id == earlier.turn_id + 1
            else:
                assert earlier.role == "user" and later.turn_id == earlier.turn_id
        assert all(t.heard_text == t.intended_text for t in record.turns)


def test_entities_are_heard_correctly_in_text(text_records: dict[str, AttemptRecord]) -> None:
    entities = [e for r in text_records.values() for e in r.entities]
    assert len(entities) > 500
    assert all(e.correct and e.heard == e.expected for e in entities)


def test_tool_calls_carry_turns_and_record_holds_dbs(
    text_records: dict[str, AttemptRecord],
) -> None:
    for record in text_records.values():
        assert record.expected_db_hash and record.initial_db_hash
        assert [c.index for c in record.tool_calls] == list(range(len(record.tool_calls)))
        turns = {t.turn_id for t in record.turns}
        assert all(c.turn_id in turns for c in record.tool_calls)
        assert record.final_db and record.initial_db


def _with_garbled_caller(
    scenario: Scenario, monkeypatch: pytest.MonkeyPatch, spelled_too: bool
) -> AttemptRecord:
    """The agent hears "EMP" as "ENP"; with ``spelled_too`` also when it is spelled out."""
    from tasks.simulate.clocks import text_mode

    real = text_mode.build_caller

    class Garbling:
        def __init__(self, inner: object) -> None:
            self.inner = inner

        def respond(self, heard: str):  # type: ignore[no-untyped-def]
            turn = self.inner.respond(heard)  # type: ignore[attr-defined]
            text = turn.text.replace("E M P", "E N P")
            if spelled_too:
                text = text.replace("Echo Mike Papa", "Echo November Papa")
            return turn.model_copy(update={"text": text})

    monkeypatch.setattr(text_mode, "build_caller", lambda *a, **k: Garbling(real(*a, **k)))
    return simulate_text(scenario, SimulationConfig())


def test_misheard_id_is_spelled_and_retried(
    eva_scenarios: list[Scenario], monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = next(s for s in eva_scenarios if s.key == "itsm/14")
    record = _with_garbled_caller(scenario, monkeypatch, spelled_too=False)
    auth_calls = [c for c in record.tool_calls if c.tool_name == "verify_employee_auth"]
    assert [c.status for c in auth_calls] == ["error", "success"]
    assert auth_calls[0].params["employee_id"].startswith("ENP")
    spoken = " ".join(t.intended_text for t in record.turns_of("assistant"))
    assert "spell your employee id" in spoken
    assert record.final_db_hash == record.expected_db_hash
    first = next(e for e in record.entities if e.expected.startswith("EMP"))
    assert first.heard is not None and first.heard.startswith("ENP") and not first.correct


def test_agent_gives_up_after_one_failed_retry(
    eva_scenarios: list[Scenario], monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = next(s for s in eva_scenarios if s.key == "itsm/14")
    record = _with_garbled_caller(scenario, monkeypatch, spelled_too=True)
    auth_calls = [c for c in record.tool_calls if c.tool_name == "verify_employee_auth"]
    assert len(auth_calls) == 2 and all(c.status == "error" for c in auth_calls)
    spoken = " ".join(t.intended_text for t in record.turns_of("assistant"))
    assert "not able to verify" in spoken
    assert record.end_reason == "goodbye" and record.turns[-1].intended_text.startswith("Okay")
    assert record.final_db_hash != record.expected_db_hash


def test_unknown_agent_and_caller_names_list_the_valid_ones() -> None:
    with pytest.raises(UnknownNameError, match="valid names: .*reference"):
        get_agent("nope", "text")
    with pytest.raises(UnsupportedModeError):
        get_agent("text", "audio")


def test_simulate_turns_harness_errors_into_records(eva_scenarios: list[Scenario]) -> None:
    record = simulate(eva_scenarios[0], SimulationConfig(caller="nobody"))
    assert record.status == "infra_error" and record.end_reason == "harness_error"
    assert record.error and "nobody" in record.error
