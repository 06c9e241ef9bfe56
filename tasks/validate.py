"""Per-attempt validation (spec 6.3): is this conversation a trustworthy test of the agent?

Decision order:

1. Harness failures (record status ``infra_error`` or end reason ``harness_error``): our
   fault, regenerate (``harness_error``, retry).
2. Agent failures (the agent timed out on the caller's turn, disconnected, or broke the
   protocol; or the record already says ``agent_error``): the conversation is a faithful
   record of the agent failing. It is kept and scored with status ``agent_error`` and never
   regenerated, whatever the simulator checks say: the caller cannot be blamed for an agent
   that stopped answering.
3. The gate ``conversation_valid_end`` must be exactly 1.0 and not errored; otherwise the
   attempt is ``not_finished`` and regenerated (the caller never hung up properly; a
   ``max_duration`` end is flagged ``time_limit_exceeded`` so the flow can apply the
   reference's time-limit acceptance rule).
4. ``user_behavioral_fidelity`` must reach its validation threshold and
   ``user_speech_fidelity`` fails iff any per-turn rating equals 1 (its threshold is not
   used). A check that did not run or errored fails; a skipped check is ignored. Any
   failure => ``validation_failed`` (the simulated caller corrupted the test), regenerate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from tasks.metrics.base import at_least
from tasks.records import AttemptRecord, AttemptStatus, MetricScore

GATE_METRIC = "conversation_valid_end"
SIMULATOR_CHECKS = ("user_behavioral_fidelity", "user_speech_fidelity")
DEFAULT_VALIDATION_THRESHOLD = 1.0
# A user_speech_fidelity turn rated 1 has an entity error or a major error (scale 1-3).
SPEECH_FIDELITY_FAIL_RATING = 1
AGENT_FAULT_END_REASONS = ("agent_timeout", "agent_disconnected", "protocol_error")

ValidationReason = Literal["ok", "not_finished", "validation_failed", "harness_error"]


class ValidationResult(BaseModel):
    """The validation decision for one attempt."""

    valid: bool = Field(description="The attempt is kept and scored")
    reason: ValidationReason = Field(description="Why (ok also covers agent failures)")
    status: AttemptStatus = Field(description="Status to store: ok, invalid, agent_error, ...")
    should_retry: bool = Field(description="Regenerate: the simulator or harness was at fault")
    failed_metrics: list[str] = Field(default_factory=list, description="Checks that failed")
    time_limit_exceeded: bool = Field(
        default=False, description="The call hit max_duration (time-limit acceptance applies)"
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


def _result(
    reason: ValidationReason, status: AttemptStatus, retry: bool, message: str, **extra: Any
) -> ValidationResult:
    return ValidationResult(
        valid=reason == "ok",
        reason=reason,
        status=status,
        should_retry=retry,
        message=message,
        **extra,
    )


def _gate(record: AttemptRecord, gate: MetricScore | None) -> ValidationResult | None:
    if (
        gate is not None
        and gate.error is None
        and gate.score is not None
        and math.isclose(gate.score, 1.0)
    ):
        return None
    why = "gate metric missing" if gate is None else gate.error or f"score {gate.score}"
    time_limit = record.end_reason == "max_duration"
    return _result(
        "not_finished",
        "invalid",
        True,
        f"conversation did not end properly ({record.end_reason}): {why}",
        time_limit_exceeded=time_limit,
    )


def validate_attempt(
    record: AttemptRecord,
    scores: list[MetricScore],
    thresholds: Mapping[str, float] | None = None,
) -> ValidationResult:
    """Decide whether to keep, score and/or regenerate one attempt (never raises)."""
    by_name = {s.name: s for s in scores}
    if record.status == "infra_error" or record.end_reason == "harness_error":
        return _result(
            "harness_error", "infra_error", True, f"harness failure: {record.error or '-'}"
        )
    if is_agent_fault(record, by_name):
        return _result(
            "ok", "agent_error", False, f"agent failure ({record.end_reason}): kept and scored"
        )
    not_finished = _gate(record, by_name.get(GATE_METRIC))
    if not_finished is not None:
        return not_finished
    limits = dict(thresholds or {})
    failed: list[str] = []
    details: dict[str, Any] = {}
    for name in SIMULATOR_CHECKS:
        passed, why = check_simulator_metric(
            name, by_name.get(name), limits.get(name, DEFAULT_VALIDATION_THRESHOLD)
        )
        details[name] = {"passed": passed, "why": why}
        if passed is False:
            failed.append(name)
    if failed:
        return _result(
            "validation_failed",
            "invalid",
            True,
            f"simulated caller failed: {', '.join(failed)}",
            failed_metrics=failed,
            details=details,
        )
    return _result("ok", "ok", False, "valid", details=details)
