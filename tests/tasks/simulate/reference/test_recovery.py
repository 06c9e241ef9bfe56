"""The reference agent's retry decision follows the response it got, never the trace's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scenarios.loader import load_eva_scenarios
from scenarios.models import Scenario
from tasks.records import AttemptRecord
from tasks.simulate import SimulationConfig, simulate_text
from tasks.simulate.reference.recovery import is_mismatch

ERROR = {"status": "error", "error_type": "authentication_failed", "message": "no match"}
SUCCESS = {"status": "success", "authenticated": True, "message": "ok"}


@pytest.mark.parametrize(
    ("response", "heard", "mismatch"),
    [
        ({"status": "success", "message": "Reservation X1 not found"}, ["X1"], False),
        (ERROR, [], True),
        ({"status": "error", "error_type": "invalid_otp", "message": "bad"}, [], True),
        (
            {"status": "error", "error_type": "invalid_confirmation_number_format", "message": ""},
            [],
            True,
        ),
        (
            {
                "status": "error",
                "error_type": "invalid_clearance_code",
                "message": "Code does not match occupational health records",
            },
            [],
            True,
        ),
        (
            {
                "status": "error",
                "error_type": "not_found",
                "message": "Reservation ZK3FFW not found",
            },
            ["ZK3FFW", "Rivera"],
            True,
        ),
        (
            {
                "status": "error",
                "error_type": "visa_record_not_found",
                "message": "Visa petition EHZ3328710672 not found for EMP921414",
            },
            ["EMP921414", "EHZ3328710672"],
            True,
        ),
        (
            {
                "status": "error",
                "error_type": "i9_record_not_found",
                "message": "No I-9 record found for EMP609231",
            },
            ["EMP609231"],
            False,
        ),
        (
            {
                "status": "error",
                "error_type": "not_found",
                "message": "Reservation ZK3FFW not found",
            },
            ["Rivera"],
            False,
        ),
        (
            {"status": "error", "error_type": "swap_locked", "message": "Shift is locked"},
            ["x"],
            False,
        ),
    ],
)
def test_mismatch_is_read_from_the_actual_response(
    response: dict[str, Any], heard: list[str], mismatch: bool
) -> None:
    assert is_mismatch(response, heard) is mismatch


@pytest.fixture(scope="module")
def itsm14(eva_root: Path) -> Scenario:
    return load_eva_scenarios(eva_root, ["itsm"], ["14"])[0]


@pytest.fixture(scope="module")
def dea(eva_root: Path) -> Scenario:
    return load_eva_scenarios(eva_root, ["medical_hr"], ["5.2"])[0]


def _with_trace_response(scenario: Scenario, tool: str, response: Any) -> Scenario:
    """The scenario with the golden response of every ``tool`` call replaced (None: removed)."""
    trace: list[dict[str, Any]] = []
    for event in scenario.expected_trace:
        if event.get("event_type") == "tool_response" and event.get("tool_name") == tool:
            if response is None:
                continue
            event = {**event, "response": response, "status": response["status"]}
        trace.append(event)
    return scenario.model_copy(update={"expected_trace": trace})


def _garbled(scenario: Scenario, monkeypatch: pytest.MonkeyPatch) -> AttemptRecord:
    """The agent hears the employee ID "EMP..." as "ENP..." unless it is spelled out."""
    from tasks.simulate.clocks import text_mode

    real = text_mode.build_caller

    class Garbling:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def respond(self, heard: str) -> Any:
            turn = self.inner.respond(heard)
            return turn.model_copy(update={"text": turn.text.replace("E M P", "E N P")})

    monkeypatch.setattr(text_mode, "build_caller", lambda *a, **k: Garbling(real(*a, **k)))
    return simulate_text(scenario, SimulationConfig())


def _conversation(record: AttemptRecord) -> list[tuple[str, str]]:
    return [(t.role, t.intended_text) for t in record.turns]


def _auth_statuses(record: AttemptRecord) -> list[str]:
    return [c.status for c in record.tool_calls if c.tool_name == "verify_employee_auth"]


def test_golden_success_but_the_call_errors_retries(
    itsm14: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = _garbled(itsm14, monkeypatch)
    assert _auth_statuses(record) == ["error", "success"]
    assert record.final_db_hash == record.expected_db_hash


@pytest.mark.parametrize("golden", [ERROR, None], ids=["golden-error", "golden-blank"])
def test_retry_decision_ignores_the_golden_response(
    itsm14: Scenario, monkeypatch: pytest.MonkeyPatch, golden: dict[str, Any] | None
) -> None:
    """Golden says error (or has no response): the call errors retryably, the agent retries
    all the same, and the conversation is word for word the one with the true golden."""
    reference = _conversation(_garbled(itsm14, monkeypatch))
    poisoned = _with_trace_response(itsm14, "verify_employee_auth", golden)
    record = _garbled(poisoned, monkeypatch)
    assert _auth_statuses(record) == ["error", "success"]
    assert _conversation(record) == reference


def test_golden_error_but_the_call_succeeds_does_not_retry(itsm14: Scenario) -> None:
    poisoned = _with_trace_response(itsm14, "verify_employee_auth", ERROR)
    record = simulate_text(poisoned, SimulationConfig())
    assert _auth_statuses(record) == ["success"]
    assert _conversation(record) == _conversation(simulate_text(itsm14, SimulationConfig()))


def test_a_confirmed_not_found_is_relayed_not_given_up(dea: Scenario) -> None:
    """The DEA number is not on file: the agent has it spelled, retries once, and, the
    spelling having confirmed what it heard, goes on with its plan; the golden response
    does not matter (success in its place gives the same conversation)."""
    record = simulate_text(dea, SimulationConfig())
    dea_calls = [c for c in record.tool_calls if c.tool_name == "get_dea_record"]
    assert [c.status for c in dea_calls] == ["error", "error"]
    assert dea_calls[0].params == dea_calls[1].params
    spoken = " ".join(t.intended_text for t in record.turns_of("assistant"))
    assert "spell your dea number" in spoken and "not able to verify" not in spoken
    assert record.final_db_hash == record.expected_db_hash
    poisoned = _with_trace_response(dea, "get_dea_record", {"status": "success", "dea": {}})
    assert _conversation(simulate_text(poisoned, SimulationConfig())) == _conversation(record)
