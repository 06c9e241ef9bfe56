"""One trial: simulate and validate each attempt, regenerate while the simulator was at
fault, then judge the kept attempt with the full metric set.

Pure code (no Prefect). Every attempt is kept, failed ones included: failures are data.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from scenarios.models import Scenario
from tasks.config import BenchmarkConfig
from tasks.records import AttemptRecord
from tasks.trial_spec import (  # noqa: F401 - re-exported for callers of tasks.trial
    AttemptResult,
    TrialResult,
    TrialSpec,
    audio_dir_for,
    stable_seed,
    trial_seed,
)


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
                            score=config.score,
                        )
                    )
    return specs


def clock_used(spec: TrialSpec) -> str:
    """The clock an attempt of ``spec`` runs on: external agents are always real time."""
    if spec.mode != "audio":
        return "none"
    from tasks.simulate.wire.external import EXTERNAL, is_url, served_out_of_process

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


TRIAL_MODULES = (
    "tasks.scoring",
    "tasks.simulation",
    "tasks.simulate",
    "tasks.validate",
    "tasks.judges",
    "tasks.metrics.runner",
    "tasks.stage_checkpoint",
)
"""What :func:`run_attempt` imports on first use: a worker process that loads them before
its first trial does not spend that trial's first second importing."""
AUDIO_TRIAL_MODULES = ("scipy.signal",)
"""What an audio attempt adds (resampling, the recogniser's band fill): imported where it is
used, so that text runs and the flow's own process never pay its 0.6 s."""


def preload_trial_modules(audio: bool = True) -> None:
    import importlib

    for name in (*TRIAL_MODULES, *(AUDIO_TRIAL_MODULES if audio else ())):
        importlib.import_module(name)


def simulate_attempt_step(spec: TrialSpec, scenario: Scenario, attempt: int) -> AttemptRecord:
    """Simulate one attempt. Never raises: a crash becomes an infra_error row."""
    from tasks.simulation import simulate_attempt

    started = time.perf_counter()
    try:
        record = simulate_attempt(spec, scenario, attempt)
    except Exception:  # noqa: BLE001 - failures are data
        record = _failed_record(spec, attempt, traceback.format_exc(limit=5))
    record.wall_s = record.wall_s or time.perf_counter() - started
    return record


def run_attempt(spec: TrialSpec, scenario: Scenario, attempt: int) -> AttemptResult:
    """Simulate and validate one attempt (validation metrics only: judging waits until the
    trial keeps one). Never raises: a crash becomes an infra_error row."""
    return validate_attempt_step(spec, scenario, simulate_attempt_step(spec, scenario, attempt))


def validate_attempt_step(
    spec: TrialSpec, scenario: Scenario, record: AttemptRecord
) -> AttemptResult:
    """The validation metrics and verdict of one simulated attempt (never raises)."""
    from tasks.scoring import validate_scores

    scoring = time.perf_counter()
    try:
        scores, validation = validate_scores(spec, scenario, record)
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
    # Stored next to the simulator's stages so a run's rows tell where its time went;
    # judging the kept attempt adds its own seconds to "score" (and "judge").
    record.stage_seconds["score"] = round(time.perf_counter() - scoring, 3)
    return AttemptResult(record=record, scores=scores, validation=validation)


def judge_kept(spec: TrialSpec, scenario: Scenario, kept: AttemptResult) -> AttemptResult:
    """The full metric set and composites on the attempt a trial keeps.

    Returns a new result and leaves ``kept`` as it was, so a judging that is run again
    (a retried Prefect task) starts from the validation scores, never from its own output.
    """
    from tasks.scoring import judge_scores

    started = time.perf_counter()
    scores = judge_scores(spec, scenario, kept.record, kept.scores)
    seconds = time.perf_counter() - started
    stages = dict(kept.record.stage_seconds)
    stages["judge"] = round(seconds, 3)
    stages["score"] = round(stages.get("score", 0.0) + seconds, 3)
    record = kept.record.model_copy(update={"stage_seconds": stages})
    return kept.model_copy(update={"record": record, "scores": scores})


@dataclass(frozen=True)
class TrialStages:
    """The stages a trial runs, as callables: the Prefect flow passes its task wrappers
    (``tasks.steps``) so each stage is a task run of its own; this module stays free of
    Prefect. Each has the signature and the never-raise contract of the plain function."""

    simulate: Callable[[TrialSpec, Scenario, int], AttemptRecord]
    validate: Callable[[TrialSpec, Scenario, AttemptRecord], AttemptResult]
    judge: Callable[[TrialSpec, Scenario, AttemptResult], AttemptResult]

    def attempt(self, spec: TrialSpec, scenario: Scenario, attempt: int) -> AttemptResult:
        return self.validate(spec, scenario, self.simulate(spec, scenario, attempt))


def attempt_loop(
    spec: TrialSpec, scenario: Scenario, stages: TrialStages | None = None
) -> TrialResult:
    """Attempts until one is valid, the agent (not the simulator) failed, or attempts run out.

    ``tasks.validate.trial_step`` applies the loop rules (time-limit acceptance, spec 6.3
    step 5; a trial the agent failed every time is kept as its failure). An attempt kept
    under them is moved last, so it is the final one; its attempt number is unchanged.
    ``stages`` None: the plain functions of this module (looked up when called).
    """
    from tasks.validate import trial_step

    one_attempt = run_attempt if stages is None else stages.attempt
    attempts: list[AttemptResult] = []
    for attempt in range(1, spec.max_attempts + 1):
        attempts.append(one_attempt(spec, scenario, attempt))
        step = trial_step([a.validation for a in attempts], spec.max_attempts)
        if step.keep is not None and step.verdict is not None:
            kept = attempts.pop(step.keep)
            kept.validation = step.verdict
            kept.record.status = step.verdict["status"]
            attempts.append(kept)
        if step.stop:
            break
    return TrialResult(spec=spec, attempts=attempts)


def run_trial(
    spec: TrialSpec, scenario: Scenario, stages: TrialStages | None = None
) -> TrialResult:
    """The attempt loop, then the full metric set once, on the kept (final, valid) attempt;
    a trial that kept none (attempts ran out on simulator or harness faults) is not judged,
    nor is any under ``evaflow run --no-score`` (``evaflow score`` judges it later).
    ``stages``: see :class:`TrialStages` (None: the plain functions).

    The validated attempts are checkpointed before judging (:mod:`tasks.stage_checkpoint`):
    a run killed while judging resumes this trial from them, judging without simulating."""
    from tasks.stage_checkpoint import load_validated, save_validated

    resumed = load_validated(spec) if spec.score else None
    result = resumed or attempt_loop(spec, scenario, stages)
    if spec.score and result.final.validation.get("valid"):
        if resumed is None:
            save_validated(result)
        judge = judge_kept if stages is None else stages.judge
        result.attempts[-1] = judge(spec, scenario, result.final)
    return result
