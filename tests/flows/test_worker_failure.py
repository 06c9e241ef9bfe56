"""A worker that raises loses nothing: the other trials are stored, the run resumes."""

from __future__ import annotations

from pathlib import Path

import pytest
from prefect import task
from prefect.cache_policies import NO_CACHE

import flows.benchmark
from flows.benchmark import run_benchmark
from scenarios.models import Scenario
from tasks.config import BenchmarkConfig
from tasks.store import Store
from tasks.trial import TrialResult, TrialSpec, run_trial


class WorkerDied(RuntimeError):
    pass


@task(name="flaky-trial", cache_policy=NO_CACHE, persist_result=False)
def flaky_trial_step(spec: TrialSpec, scenario: Scenario) -> TrialResult:
    if spec.trial == 1 and spec.scenario_id == "air-001":
        raise WorkerDied("the worker process died")
    return run_trial(spec, scenario)


@pytest.mark.timeout(300)
def test_completed_trials_survive_a_raising_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = BenchmarkConfig.model_validate(
        {
            "store": str(tmp_path),
            "run_id": "flaky",
            "mode": "text",
            "scenarios": {"domains": ["airline"], "limit": 2},
            "conditions": ["clean"],
            "trials": 2,
            "max_attempts": 1,
            "batch_size": 100,  # everything is still buffered when the worker raises
            "report": False,
            "runner": {"kind": "threads", "workers": 1},
        }
    )
    monkeypatch.setattr(flows.benchmark, "run_trial_step", flaky_trial_step)
    with pytest.raises(RuntimeError, match="1 trial") as err:
        run_benchmark(config)
    assert isinstance(err.value.__cause__, WorkerDied)
    stored = Store(str(tmp_path)).read("trials", "flaky")
    assert stored["trial_key"].nunique() == 3  # all but the one that raised

    monkeypatch.undo()
    resumed = run_benchmark(config)
    assert (resumed.skipped_trials, resumed.simulated_trials) == (3, 1)
    assert resumed.trials == 4 and resumed.attempts == 4
