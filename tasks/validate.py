"""Per-attempt validation and the trial's attempt loop rules (EVA spec 6.3).

Decision order for one attempt (:func:`validate_attempt`):

1. Infrastructure failures, regenerated: a provider the agent depends on failed (end
   reason ``provider_error``: the agent reported the outage, docs/agent-protocol.md; fault
   ``provider``), or the harness did (record status ``infra_error`` or end reason
   ``harness_error``; fault ``harness``). Status ``infra_error``; an attempt that exhausts
   ``max_attempts`` stays ``infra_error`` and is never scored against the agent.
2. Agent failures (the agent timed out on the caller's turn, disconnected, or broke the
   protocol; or the record already says ``agent_error``): the conversation is a faithful
   record of the agent failing. It is kept and scored with status ``agent_error`` and never
   regenerated, whatever the simulator checks say: the caller cannot be blamed for an agent
   that stopped answering.
3. The gate ``conversation_valid_end`` must be exactly 1.0 and not errored (spec 6.3 step
   3; the gate also accepts an agent that hung up itself, see that metric); otherwise the
   attempt is ``not_finished`` and regenerated. A ``max_duration`` end (the reference's
   ``time_limit_exceeded``) is flagged ``time_limit_exceeded`` and at once validated with
   the gate skipped (spec 6.3 step 5), the result kept in ``time_limit_checks_passed``.
4. ``user_behavioral_fidelity`` must reach its validation threshold and
   ``user_speech_fidelity`` fails iff any per-turn rating equals 1 (its threshold is not
   used). A check that did not run or errored fails; a skipped check is ignored. Any
   failure => ``validation_failed`` (the simulated caller corrupted the test), regenerate.

Each verdict also names whose ``fault`` a failure is (``agent``, ``simulator``,
``harness``; ``none`` when valid), so the loop can tell simulator faults, which are
regenerated, from an agent that fails every attempt.

Across attempts (:func:`trial_step`, applied by ``tasks.trial.run_trial`` after each one):

* time-limit acceptance, exactly as spec 6.3 step 5: once a trial has hit the time limit
  at least ``max_time_limit_attempts`` times (default 1), a time-limited attempt whose
  gate-skipped checks passed is accepted; else the most recent earlier time-limited
  attempt whose checks passed is restored and accepted. Accepted attempts are kept with
  reason ``time_limit_accepted`` (the reference's ``"time_limit_accepted": true``) and
  scored against the agent;
* when attempts run out and every attempt failed for a reason the agent caused, the last
  one is kept as an agent failure (status ``agent_error``, reason ``agent_failed``) rather
  than the trial being dropped: regeneration exists for simulator faults only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from tasks.metrics.base import at_least
from tasks.metrics.runner import NO_TURNS_ERROR
from tasks.records import AttemptRecord, AttemptStatus, MetricScore

GATE_METRIC = "conversation_valid_end"
SIMULATOR_CHECKS = ("user_behavioral_fidelity", "user_speech_fidelity")
DEFAULT_VALIDATION_THRESHOLD = 1.0
# A user_speech_fidelity turn rated 1 has an entity error or a major error (scale 1-3).
SPEECH_FIDELITY_FAIL_RATING = 1
AGENT_FAULT_END_REASONS = ("agent_timeout", "agent_disconnected", "protocol_error")
TIME_LIMIT_END_REASON = "max_duration"  # the reference's time_limit_exceeded
# Reference: validation_thresholds.max_time_limit_attempts (spec 6.3 step 5).
MAX_TIME_LIMIT_ATTEMPTS = 1

ValidationReason = Literal[
    "ok",
    "not_finished",
    "validation_failed",
    "harness_error",
    "time_limit_accepted",
    "agent_failed",
    "provider_error",
]
Fault = Literal["none", "agent", "simulator", "harness", "provider"]
PROVIDER_END_REASON = "provider_error"
KEPT_REASONS = ("ok", "time_limit_accepted", "agent_failed")


class ValidationResult(BaseModel):
    """The validation decision for one attempt."""

    valid: bool = Field(description="The attempt is kept and scored")
    reason: ValidationReason = Field(description="Why (ok also covers agent failures)")
    status: AttemptStatus = Field(description="Status to store: ok, invalid, agent_error, ...")
    should_retry: bool = Field(description="Regenerate: the simulator or harness was at fault")
    fault: Fault = Field(default="none", description="Whose fault a failure is")
    failed_metrics: list[str] = Field(default_factory=list, description="Checks that failed")
    time_limit_exceeded: bool = Field(
        default=False, description="The call hit max_duration (time-limit acceptance applies)"
    )
    time_limit_checks_passed: bool | None = Field(
        default=None,
        description="Time-limited attempts: the simulator checks passed with the gate skipped",
    )
    message: str = Field(default="", description="Human-readable explanation")
    details: dict[str, Any] = Field(default_factory=dict, description="Per-check evidence")


def is_agent_fault(record: AttemptRecord, scores: Mapping[str, MetricScore]) -> bool:
    if record.status == "agent_error" or record.end_reason in AGENT_FAULT_END_REASONS:
        return True
    gate = scores.get(GATE_METRIC)
    return gate is not None and gate.details.get("reason") == "agent_timeout_on_user_turn"


def _per_turn_ratings(score: MetricScore) -> list[float]:
    raw = score.details.get("per_turn_ratings") or {}
    values = raw.values() if isinstance(raw, Mapping) else raw
    out: list[float] = []
    for value in values:
        if isinstance(value, int | float) and not isinstance(value, bool):
            out.append(float(value))
    return out


def check_simulator_metric(
    name: str, score: MetricScore | None, threshold: float
) -> tuple[bool | None, str]:
    """(passed, why); passed None means skipped (ignored)."""
    if score is None:
        return False, "did not run"
    if score.error is not None:
        return False, f"errored: {score.error}"
    if score.skipped:
        return None, "skipped"
    if name == "user_speech_fidelity":
        ratings = _per_turn_ratings(score)
        bad = [r for r in ratings if math.isclose(r, SPEECH_FIDELITY_FAIL_RATING)]
        return (not bad), f"{len(bad)} turn(s) rated {SPEECH_FIDELITY_FAIL_RATING}"
    value = score.value
    if value is None:
        return False, "no value"
    passed = at_least(value, threshold)
    return passed, f"value {value} {'>=' if passed else '<'} threshold {threshold}"


def simulator_checks(
    by_name: Mapping[str, MetricScore], thresholds: Mapping[str, float]
) -> tuple[list[str], dict[str, Any]]:
    """The failed simulator checks (spec 6.3 step 3) and the evidence of each."""
    failed: list[str] = []
    details: dict[str, Any] = {}
    for name in SIMULATOR_CHECKS:
        passed, why = check_simulator_metric(
            name, by_name.get(name), thresholds.get(name, DEFAULT_VALIDATION_THRESHOLD)
        )
        details[name] = {"passed": passed, "why": why}
        if passed is False:
            failed.append(name)
    return failed, details


def _result(
    reason: ValidationReason,
    status: AttemptStatus,
    retry: bool,
    message: str,
    fault: Fault,
    **extra: Any,
) -> ValidationResult:
    return ValidationResult(
        valid=reason in KEPT_REASONS,
        reason=reason,
        status=status,
        should_retry=retry,
        fault=fault,
        message=message,
        **extra,
    )


def _gate_passed(gate: MetricScore | None) -> bool:
    return (
        gate is not None
        and gate.error is None
        and gate.score is not None
        and math.isclose(gate.score, 1.0)
    )


def _time_limited(
    by_name: Mapping[str, MetricScore], thresholds: Mapping[str, float]
) -> ValidationResult:
    """A call that hit the limit, validated at once with the gate skipped (spec 6.3 step 5).

    Its checks failing on a conversation with no caller or agent turn (the runner's
    "no assistant or user turns" error) is no judgement of the caller: with nothing said,
    the agent ran the call out (e.g. talking without pause), so the fault is the agent's.
    """
    failed, details = simulator_checks(by_name, thresholds)
    untried = all(
        (score := by_name.get(name)) is not None and score.error == NO_TURNS_ERROR
        for name in failed
    )
    return _result(
        "not_finished",
        "invalid",
        True,
        f"the call hit the time limit; simulator checks "
        f"{'passed' if not failed else 'failed: ' + ', '.join(failed)}",
        "agent" if not failed or untried else "simulator",
        failed_metrics=failed,
        time_limit_exceeded=True,
        time_limit_checks_passed=not failed,
        details=details,
    )


def validate_attempt(
    record: AttemptRecord,
    scores: list[MetricScore],
    thresholds: Mapping[str, float] | None = None,
) -> ValidationResult:
    """Decide whether to keep, score and/or regenerate one attempt (never raises)."""
    by_name = {s.name: s for s in scores}
    limits = dict(thresholds or {})
    if record.end_reason == PROVIDER_END_REASON:
        return _result(
            "provider_error",
            "infra_error",
            True,
            f"provider failure: {record.error or '-'}",
            "provider",
        )
    if record.status == "infra_error" or record.end_reason == "harness_error":
        return _result(
            "harness_error",
            "infra_error",
            True,
            f"harness failure: {record.error or '-'}",
            "harness",
        )
    if is_agent_fault(record, by_name):
        return _result(
            "ok",
            "agent_error",
            False,
            f"agent failure ({record.end_reason}): kept and scored",
            "agent",
        )
    gate = by_name.get(GATE_METRIC)
    if not _gate_passed(gate):
        if record.end_reason == TIME_LIMIT_END_REASON:
            return _time_limited(by_name, limits)
        why = "gate metric missing" if gate is None else gate.error or f"score {gate.score}"
        return _result(
            "not_finished",
            "invalid",
            True,
            f"conversation did not end properly ({record.end_reason}): {why}",
            "simulator",
        )
    failed, details = simulator_checks(by_name, limits)
    if failed:
        return _result(
            "validation_failed",
            "invalid",
            True,
            f"simulated caller failed: {', '.join(failed)}",
            "simulator",
            failed_metrics=failed,
            details=details,
        )
    return _result("ok", "ok", False, "valid", "none", details=details)


# --------------------------------------------------------------------------- the attempt loop


class TrialStep(BaseModel):
    """What the attempt loop does after an attempt (see :func:`trial_step`)."""

    stop: bool = Field(description="No further attempt")
    keep: int | None = Field(
        default=None, description="Index of an attempt kept under a loop rule, else None"
    )
    verdict: dict[str, Any] | None = Field(
        default=None, description="The kept attempt's new validation (reason, status, ...)"
    )


def _kept(verdict: Mapping[str, Any], reason: ValidationReason, message: str) -> dict[str, Any]:
    status: AttemptStatus = "ok" if reason == "time_limit_accepted" else "agent_error"
    return dict(verdict) | {
        "valid": True,
        "reason": reason,
        "status": status,
        "should_retry": False,
        "fault": "agent",
        "time_limit_accepted": reason == "time_limit_accepted",
        "message": message,
    }


def time_limit_acceptance(
    verdicts: Sequence[Mapping[str, Any]], max_time_limit_attempts: int = MAX_TIME_LIMIT_ATTEMPTS
) -> int | None:
    """Index of the attempt to accept under spec 6.3 step 5, or None.

    Applies when the latest attempt hit the time limit: once the trial has hit it at least
    ``max_time_limit_attempts`` times, accept the latest attempt if its gate-skipped checks
    passed, else the most recent earlier time-limited attempt whose checks passed.
    """
    if not verdicts or not verdicts[-1].get("time_limit_exceeded"):
        return None
    hits = [i for i, v in enumerate(verdicts) if v.get("time_limit_exceeded")]
    if len(hits) < max_time_limit_attempts:
        return None
    passed = [i for i in hits if verdicts[i].get("time_limit_checks_passed")]
    return passed[-1] if passed else None


def trial_step(
    verdicts: Sequence[Mapping[str, Any]],
    max_attempts: int,
    max_time_limit_attempts: int = MAX_TIME_LIMIT_ATTEMPTS,
) -> TrialStep:
    """After the latest attempt (``verdicts`` = every attempt's validation, in order)."""
    latest = verdicts[-1]
    if latest.get("valid") or not latest.get("should_retry", True):
        return TrialStep(stop=True)
    accepted = time_limit_acceptance(verdicts, max_time_limit_attempts)
    if accepted is not None:
        message = f"time limit hit {sum(bool(v.get('time_limit_exceeded')) for v in verdicts)}x"
        verdict = _kept(verdicts[accepted], "time_limit_accepted", message + "; accepted")
        return TrialStep(stop=True, keep=accepted, verdict=verdict)
    if len(verdicts) < max_attempts:
        return TrialStep(stop=False)
    if all(v.get("fault") == "agent" for v in verdicts):
        message = f"all {len(verdicts)} attempts failed for reasons the agent caused"
        return TrialStep(
            stop=True,
            keep=len(verdicts) - 1,
            verdict=_kept(latest, "agent_failed", message),
        )
    return TrialStep(stop=True)
