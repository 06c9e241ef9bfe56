"""The orchestration floor: what one Prefect task costs on the runners, with no trial in it.

A flow submits no-op tasks the way the benchmark flow submits trials (the same runner
classes, quoted arguments, the same submission window and collection) to two workers.
Workers x wall time / tasks is the worker time each task costs beyond its body: Prefect's
task engine and its state events, Dask's scheduling and result transfer, the flow's
collection. Against a run's mean trial work it bounds the orchestration overhead that any
run with one Prefect task per trial can reach on this machine.
"""

from __future__ import annotations

import os
import time
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from benchmarks.common import Figure, not_measured
from benchmarks.memory import ChildResult

GROUP = "run"


@task(name="noop-trial", cache_policy=NO_CACHE, persist_result=False, log_prints=False)
def noop_trial(spec: Any, scenario: Any) -> None:
    """Takes a trial's two arguments and does nothing."""
    return None


def floor_run(prefect_home: str, runner: str, tasks: int, workers: int = 2) -> dict[str, Any]:
    """Child: one flow of ``tasks`` no-op tasks on ``runner``; seconds of the task phase."""
    os.environ["PREFECT_HOME"] = prefect_home
    from flows.env import configure_prefect

    configure_prefect(prefect_home)
    from prefect import flow

    from flows.env import workers_report_here
    from flows.runners import (
        RunnerLifetime,
        completed_in_window,
        release_result,
        submission_window,
        trial_parameters,
    )
    from tasks.config import BenchmarkConfig

    config = BenchmarkConfig.model_validate({"runner": {"kind": runner, "workers": workers}})

    @flow(name="evaflow-task-floor")
    def floor_flow() -> float:
        with workers_report_here() as api_url, RunnerLifetime(config, api_url) as lifetime:
            pool = lifetime.ready()
            started = time.perf_counter()
            submitted = completed_in_window(
                lambda i: pool.submit(noop_trial, trial_parameters(i, {"scenario": i})),
                range(tasks),
                submission_window(workers),
            )
            for future in submitted:
                future.result()
                release_result(future)
            return time.perf_counter() - started

    return {"tasks_s": floor_flow(), "tasks": tasks, "workers": workers}


def floor_figure(child: ChildResult, runner: str, mean_trial_s: float | None) -> Figure:
    name = f"orchestration floor, {runner}: worker time per no-op Prefect task"
    if not child.ok:
        why = (child.error or "failed").strip().splitlines()[-1][:200]
        return not_measured(GROUP, name, why, unit="ms")
    v = child.value
    per_task_ms = 1000.0 * v["workers"] * v["tasks_s"] / v["tasks"]
    note = f"{v['tasks']} no-op tasks on {v['workers']} workers in {v['tasks_s']:.1f} s"
    if mean_trial_s:
        share = per_task_ms / (per_task_ms + 1000.0 * mean_trial_s)
        note += (
            f"; against the text run's mean trial work ({1000.0 * mean_trial_s:.0f} ms) "
            f"this alone is {100.0 * share:.1f}% overhead"
        )
    return Figure(group=GROUP, name=name, value=per_task_ms, unit="ms", note=note)
