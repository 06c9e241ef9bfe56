from __future__ import annotations

import pytest

from tasks.metrics.runner import run_metrics
from tasks.records import MetricScore
from tasks.validate import validate_attempt
from tests.tasks.metrics.builders import (
    agent_timeout_record,
    audio_record,
    make_scenario,
    silent_agent_record,
    text_record,
)


def gate(value: float = 1.0, **kw: object) -> MetricScore:
    return MetricScore(name="conversation_valid_end", score=value, normalized_score=value, **kw)  # type: ignore[arg-type]


def ubf(value: float = 1.0, **kw: object) -> MetricScore:
    return MetricScore(name="user_behavioral_fidelity", score=value, normalized_score=value, **kw)  # type: ignore[arg-type]


def usf(ratings: dict[str, int | None], **kw: object) -> MetricScore:
    return MetricScore(
        name="user_speech_fidelity",
        score=2.0,
        normalized_score=0.5,
        details={"per_turn_ratings": ratings},
        **kw,  # type: ignore[arg-type]
    )


def test_clean_attempt_is_valid() -> None:
    result = validate_attempt(audio_record(), [gate(), ubf(), usf({"1": 3, "2": 2})])
    assert result.valid and result.reason == "ok" and result.status == "ok"
    assert not result.should_retry and result.failed_metrics == []


def test_gate_failure_is_not_finished_and_retried() -> None:
    record = audio_record(caller_ended=False, end_reason="inactivity_timeout")
    result = validate_attempt(record, [gate(0.0), ubf(), usf({"1": 3})])
    assert not result.valid and result.reason == "not_finished" and result.should_retry
    assert result.status == "invalid" and result.failed_metrics == []
    errored = validate_attempt(audio_record(), [gate(0.0, error="no events"), ubf()])
    assert errored.reason == "not_finished"
    assert validate_attempt(audio_record(), [ubf()]).reason == "not_finished"


def test_time_limit_is_flagged() -> None:
    record = audio_record(end_reason="max_duration", caller_ended=False)
    result = validate_attempt(record, [gate(0.0)])
    assert result.reason == "not_finished" and result.time_limit_exceeded


def test_speech_fidelity_fails_on_any_rating_of_one() -> None:
    result = validate_attempt(audio_record(), [gate(), ubf(), usf({"1": 3, "2": 1, "3": None})])
    assert result.reason == "validation_failed" and result.should_retry
    assert result.failed_metrics == ["user_speech_fidelity"]
    # The mean (normalized 0.5) is irrelevant: all turns >= 2 passes.
    assert validate_attempt(audio_record(), [gate(), ubf(), usf({"1": 2, "2": 2})]).valid


def test_behavioral_fidelity_threshold_and_missing_checks() -> None:
    failed = validate_attempt(audio_record(), [gate(), ubf(0.0), usf({"1": 3})])
    assert failed.failed_metrics == ["user_behavioral_fidelity"]
    lenient = validate_attempt(
        audio_record(),
        [gate(), ubf(0.5), usf({"1": 3})],
        thresholds={"user_behavioral_fidelity": 0.5},
    )
    assert lenient.valid
    missing = validate_attempt(audio_record(), [gate(), usf({"1": 3})])
    assert missing.failed_metrics == ["user_behavioral_fidelity"]
    errored = validate_attempt(audio_record(), [gate(), ubf(), usf({}, error="judge down")])
    assert errored.failed_metrics == ["user_speech_fidelity"]
    assert "judge down" in errored.details["user_speech_fidelity"]["why"]


def test_skipped_checks_are_ignored() -> None:
    skipped = MetricScore(name="user_speech_fidelity", skipped=True)
    assert validate_attempt(text_record(), [gate(), ubf(), skipped]).valid


@pytest.mark.parametrize("end_reason", ["agent_timeout", "agent_disconnected", "protocol_error"])
def test_agent_failures_are_kept_and_never_retried(end_reason: str) -> None:
    record = agent_timeout_record(end_reason=end_reason)
    result = validate_attempt(record, [gate(0.0), ubf(0.0)])
    assert result.valid and result.status == "agent_error" and not result.should_retry


def test_inactivity_with_caller_last_is_an_agent_failure() -> None:
    record = agent_timeout_record(end_reason="inactivity_timeout", status="ok")
    scores = run_metrics(record, make_scenario(), names=["conversation_valid_end"])
    result = validate_attempt(record, scores)
    assert result.status == "agent_error" and not result.should_retry


def test_harness_failures_are_retried() -> None:
    record = text_record(status="infra_error", end_reason="harness_error", error="boom")
    result = validate_attempt(record, [])
    assert result.reason == "harness_error" and result.should_retry and not result.valid
    assert result.status == "infra_error"


def test_end_to_end_with_real_gate_metric() -> None:
    for record in (text_record(), audio_record()):
        scores = run_metrics(record, make_scenario(), names=["conversation_valid_end"])
        assert validate_attempt(record, [*scores, ubf(), usf({"1": 3})]).valid
    silent = silent_agent_record()
    scores = run_metrics(silent, make_scenario(), names=["conversation_valid_end"])
    assert validate_attempt(silent, scores).status == "agent_error"
