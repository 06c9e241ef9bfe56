from __future__ import annotations

import pytest

from tasks.metrics.runner import run_metrics
from tasks.records import MetricScore
from tasks.validate import trial_step, validate_attempt
from tests.tasks.metrics.builders import (
    agent_timeout_record,
    audio_record,
    make_scenario,
    silent_agent_record,
    text_record,
)
from tests.tasks.specs import trial_spec


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


# --------------------------------------------------------------------------- time limit


def timed_out(**fields: object):
    return audio_record(end_reason="max_duration", caller_ended=False, **fields)


def verdict(record, *scores: MetricScore) -> dict:
    return validate_attempt(record, [gate(0.0), *scores]).model_dump(mode="json")


def test_time_limited_attempt_is_validated_with_the_gate_skipped() -> None:
    passed = validate_attempt(timed_out(), [gate(0.0), ubf(), usf({"1": 3})])
    assert passed.reason == "not_finished" and passed.time_limit_exceeded
    assert passed.time_limit_checks_passed is True and passed.fault == "agent"
    failed = validate_attempt(timed_out(), [gate(0.0), ubf(0.0), usf({"1": 3})])
    assert failed.time_limit_checks_passed is False and failed.fault == "simulator"
    assert failed.failed_metrics == ["user_behavioral_fidelity"]
    # Other unfinished ends are not routed through the time-limit path (spec 12.16).
    other = validate_attempt(
        audio_record(end_reason="inactivity_timeout", caller_ended=False), [gate(0.0), ubf()]
    )
    assert not other.time_limit_exceeded and other.time_limit_checks_passed is None
    assert other.fault == "simulator"


def test_time_limit_accepted_at_once_when_checks_pass() -> None:
    # Branch: hits >= max_time_limit_attempts (1) and the current attempt passed.
    verdicts = [verdict(timed_out(), ubf(), usf({"1": 3}))]
    step = trial_step(verdicts, max_attempts=3)
    assert step.stop and step.keep == 0 and step.verdict is not None
    assert step.verdict["valid"] and step.verdict["reason"] == "time_limit_accepted"
    assert step.verdict["status"] == "ok" and step.verdict["time_limit_accepted"]


def test_time_limit_not_accepted_when_checks_fail_is_retried() -> None:
    # Branch: hits >= 1, the current attempt failed and no earlier one passed: regenerate.
    verdicts = [verdict(timed_out(), ubf(0.0), usf({"1": 3}))]
    step = trial_step(verdicts, max_attempts=3)
    assert not step.stop and step.keep is None


def test_time_limit_below_the_hit_count_is_retried() -> None:
    # Branch: fewer hits than max_time_limit_attempts: regenerate even though checks passed.
    verdicts = [verdict(timed_out(), ubf(), usf({"1": 3}))]
    step = trial_step(verdicts, max_attempts=3, max_time_limit_attempts=2)
    assert not step.stop and step.keep is None


def test_time_limit_restores_the_latest_earlier_attempt_that_passed() -> None:
    # Branch: hits >= 2, current failed -> the most recent earlier passing one is accepted.
    good = verdict(timed_out(), ubf(), usf({"1": 3}))
    bad = verdict(timed_out(), ubf(0.0), usf({"1": 3}))
    plain = verdict(audio_record(), ubf(0.0))  # a non-time-limited failure in between
    step = trial_step([good, good, plain, bad], max_attempts=5, max_time_limit_attempts=2)
    assert step.stop and step.keep == 1
    assert step.verdict is not None and step.verdict["reason"] == "time_limit_accepted"
    # The latest attempt not being time-limited: no acceptance on its account.
    assert trial_step([good, plain], max_attempts=5, max_time_limit_attempts=1).keep is None


def test_time_limit_with_no_passing_attempt_runs_out() -> None:
    bad = verdict(timed_out(), ubf(0.0), usf({"1": 3}))
    step = trial_step([bad, bad, bad], max_attempts=3)
    assert step.stop and step.keep is None  # a simulator fault every time: dropped


def test_agent_caused_failures_on_every_attempt_are_kept_as_an_agent_failure() -> None:
    from tasks.metrics.runner import NO_TURNS_ERROR

    # An agent that talks without pause: time limit, and no caller turn to judge.
    silent = [
        MetricScore(name=n, score=0.0, error=NO_TURNS_ERROR)
        for n in ("user_behavioral_fidelity", "user_speech_fidelity")
    ]
    ran_out = verdict(timed_out(), *silent)
    assert ran_out["fault"] == "agent" and ran_out["time_limit_checks_passed"] is False
    assert not trial_step([ran_out, ran_out], max_attempts=3).stop
    step = trial_step([ran_out] * 3, max_attempts=3)
    assert step.stop and step.keep == 2 and step.verdict is not None
    assert step.verdict["valid"] and step.verdict["reason"] == "agent_failed"
    assert step.verdict["status"] == "agent_error"
    # One simulator fault among them: the trial is not the agent's failure.
    sim = verdict(audio_record(), ubf(0.0))
    assert trial_step([ran_out, sim, ran_out], max_attempts=3).keep is None


def _spec(max_attempts: int):
    return trial_spec(max_attempts=max_attempts)


@pytest.mark.parametrize(
    ("plan", "attempts", "final_reason", "final_status"),
    [
        (["bad_limit", "good_limit"], 2, "time_limit_accepted", "ok"),
        (["ran_out", "ran_out", "ran_out"], 3, "agent_failed", "agent_error"),
        (["bad_limit", "bad_limit", "bad_limit"], 3, "not_finished", "invalid"),
    ],
)
def test_run_trial_applies_the_loop_rules(
    monkeypatch: pytest.MonkeyPatch,
    plan: list[str],
    attempts: int,
    final_reason: str,
    final_status: str,
) -> None:
    import tasks.trial as trial_mod
    from tasks.metrics.runner import NO_TURNS_ERROR

    silent = [
        MetricScore(name=n, score=0.0, error=NO_TURNS_ERROR)
        for n in ("user_behavioral_fidelity", "user_speech_fidelity")
    ]
    kinds = {
        "good_limit": [ubf(), usf({"1": 3})],
        "bad_limit": [ubf(0.0), usf({"1": 3})],
        "ran_out": silent,
    }
    steps = iter(plan)

    def fake_attempt(spec, scenario, attempt):  # type: ignore[no-untyped-def]
        record = timed_out(attempt=attempt)
        result = validate_attempt(record, [gate(0.0), *kinds[next(steps)]])
        record.status = result.status
        return trial_mod.AttemptResult(record=record, validation=result.model_dump(mode="json"))

    monkeypatch.setattr(trial_mod, "run_attempt", fake_attempt)
    result = trial_mod.run_trial(_spec(3), None)  # type: ignore[arg-type]
    assert len(result.attempts) == attempts
    final = result.final
    assert final.validation["reason"] == final_reason
    assert final.record.status == final_status
    assert final.validation["valid"] is (final_reason != "not_finished")
    assert final.record.attempt == attempts
