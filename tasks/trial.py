"""One trial: simulate, score, validate, and regenerate while the simulator was at fault.

Pure code (no Prefect). Every attempt is kept, failed ones included: failures are data.
"""

from __future__ import annotations

import hashlib
import json
import time
import traceback
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from scenarios.models import Scenario
from tasks.config import BenchmarkConfig, CallerSpec, JudgeSpec, SystemSpec
from tasks.records import AttemptRecord, MetricScore


class TrialSpec(BaseModel):
    """One (system, scenario, condition, trial) cell of a run."""

    model_config = ConfigDict(frozen=True)
    run_id: str
    system: SystemSpec
    domain: str
    scenario_id: str
    condition: str
    trial: int = Field(ge=0)
    seed: int = Field(
        description="Derived from (seed, scenario, condition, trial): agent-independent"
    )
    mode: str
    clock: str
    caller: CallerSpec
    judge: JudgeSpec
    max_attempts: int
    max_duration_s: float
    metrics: list[str] | None = None
    audio_dir: str | None = Field(default=None, description="Where attempt audio is written")
    conditions_file: str | None = None

    @property
    def scenario_key(self) -> str:
        return f"{self.domain}/{self.scenario_id}"

    @property
    def system_key(self) -> str:
        """The system's label and a digest of its agent and parameters, so that a trial of
        one configuration of a system is never taken for a trial of another on resume."""
        setup = self.system.model_dump(mode="json", exclude={"name"})
        encoded = json.dumps(setup, sort_keys=True, default=str).encode("utf-8")
        return f"{self.system.name}@{hashlib.sha256(encoded).hexdigest()[:8]}"

    @property
    def trial_key(self) -> str:
        return "/".join(
            [self.system_key, self.domain, self.scenario_id, self.condition, f"t{self.trial}"]
        )

    def attempt_id(self, attempt: int) -> str:
        return f"{self.run_id}/{self.trial_key}/a{attempt}"


class AttemptResult(BaseModel):
    record: AttemptRecord
    scores: list[MetricScore] = Field(default_factory=list)
    validation: dict[str, Any] = Field(default_factory=dict)


class TrialResult(BaseModel):
    spec: TrialSpec
    attempts: list[AttemptResult]

    @property
    def final(self) -> AttemptResult:
        return self.attempts[-1]


def stable_seed(*parts: object) -> int:
    """A 31-bit seed from the parts, stable across processes and platforms."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % (2**31)


def trial_seed(seed: int, scenario_key: str, condition: str, trial: int) -> int:
    """Same for every agent: the same trial hears the same caller audio for every system."""
    return stable_seed(seed, scenario_key, condition, trial)


def expand_trials(
    config: BenchmarkConfig, scenarios: list[Scenario], audio_root: str | None
) -> list[TrialSpec]:
    """scenarios x conditions x trials x systems, in a stable order."""
    assert config.run_id, "expand_trials needs a run id"
    specs = []
    for system in config.systems:
        for scenario in scenarios:
            for condition in config.conditions:
                for trial in range(config.trials):
                    specs.append(
                        TrialSpec(
                            run_id=config.run_id,
                            system=system,
                            domain=scenario.domain,
                            scenario_id=scenario.id,
                            condition=condition,
                            trial=trial,
                            seed=trial_seed(config.seed, scenario.key, condition, trial),
                            mode=config.mode,
                            clock=config.clock,
                            caller=config.caller,
                            judge=config.judge,
                            max_attempts=config.max_attempts,
                            max_duration_s=config.max_duration_s,
                            metrics=config.metrics,
                            audio_dir=audio_root,
                            conditions_file=str(config.conditions_file)
                            if config.conditions_file
                            else None,
                        )
                    )
    return specs


def clock_used(spec: TrialSpec) -> str:
    """The clock an attempt of ``spec`` runs on: external agents are always real time."""
    if spec.mode != "audio":
        return "none"
    from tasks.simulate.external import EXTERNAL, is_url, served_out_of_process

    agent = spec.system.agent
    external = is_url(agent) or agent == EXTERNAL or served_out_of_process(agent)
    return "realtime" if external else spec.clock


def _failed_record(spec: TrialSpec, attempt: int, error: str) -> AttemptRecord:
    return AttemptRecord(
        clock=clock_used(spec),  # type: ignore[arg-type]
        attempt_id=spec.attempt_id(attempt),
        run_id=spec.run_id,
        system=spec.system.name,
        scenario_id=spec.scenario_id,
        domain=spec.domain,
        condition=spec.condition,
        trial=spec.trial,
        attempt=attempt,
        mode="audio" if spec.mode == "audio" else "text",
        status="infra_error",
        end_reason="harness_error",
        error=error,
    )


def run_attempt(spec: TrialSpec, scenario: Scenario, attempt: int) -> AttemptResult:
    """Simulate and score one attempt. Never raises: a crash becomes an infra_error row."""
    from tasks.scoring import score_attempt
    from tasks.simulate_bridge import simulate_attempt

    started = time.perf_counter()
    try:
        record = simulate_attempt(spec, scenario, attempt)
    except Exception:  # noqa: BLE001 - failures are data
        record = _failed_record(spec, attempt, traceback.format_exc(limit=5))
    record.wall_s = record.wall_s or time.perf_counter() - started
    scoring = time.perf_counter()
    try:
        scores, validation = score_attempt(spec, scenario, record)
    except Exception:  # noqa: BLE001
        scores, validation = (
            [],
            {
                "valid": False,
                "reason": "harness_error",
                "should_retry": True,
                "failed_metrics": [],
                "error": traceback.format_exc(limit=5),
            },
        )
    # Stored next to the simulator's stages so a run's rows tell where its time went.
    record.stage_seconds["score"] = round(time.perf_counter() - scoring, 3)
    return AttemptResult(record=record, scores=scores, validation=validation)


def run_trial(spec: TrialSpec, scenario: Scenario) -> TrialResult:
    """Attempts until one is valid, the agent (not the simulator) failed, or attempts run out.

    ``tasks.validate.trial_step`` applies the loop rules (time-limit acceptance, spec 6.3
    step 5; a trial the agent failed every time is kept as its failure). An attempt kept
    under them is moved last, so it is the final one; its attempt number is unchanged.
    """
    from tasks.validate import trial_step

    attempts: list[AttemptResult] = []
    for attempt in range(1, spec.max_attempts + 1):
        attempts.append(run_attempt(spec, scenario, attempt))
        step = trial_step([a.validation for a in attempts], spec.max_attempts)
        if step.keep is not None and step.verdict is not None:
            kept = attempts.pop(step.keep)
            kept.validation = step.verdict
            kept.record.status = step.verdict["status"]
            attempts.append(kept)
        if step.stop:
            break
    return TrialResult(spec=spec, attempts=attempts)


def audio_dir_for(spec: TrialSpec, attempt: int) -> Path | None:
    if not spec.audio_dir:
        return None
    safe = spec.attempt_id(attempt).replace("/", "__")
    return Path(spec.audio_dir) / safe
