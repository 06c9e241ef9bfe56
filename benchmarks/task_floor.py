"""The orchestration floor: what one Prefect task costs on the runners, with no trial in it.

A flow submits no-op tasks the way the benchmark flow submits trials (the same runner
classes, quoted arguments, the same submission window and collection) to two workers.
Workers x wall time / tasks is the worker time each task costs beyond its body: Prefect's
task engine and its state events, Dask's scheduling and result transfer, the flow's
collection. Against a run's mean trial work it bounds the orchestration overhead that any
run with one Prefect task per trial can reach on this machine. The CPU each process of the
run spent per task (workers, the flow's own process with the Dask scheduler, the Prefect
server) says where that floor goes.
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


def _role(process: Any, flow_pid: int) -> str:
    """Which part of the run a process of its tree is (by pid and command line)."""
    if process.pid == flow_pid:
        return "flow"  # the flow, Prefect's client side, the Dask scheduler and client
    command = " ".join(process.cmdline())
    if "uvicorn" in command or "prefect.server" in command:
        return "server"
    if "multiprocessing.forkserver import main" in command and process.ppid() == flow_pid:
        return "other"  # idle while tasks run: it only forks the workers (its children)
    return "workers"


def cpu_by_role() -> dict[int, tuple[str, float]]:
    """CPU seconds (user + system) so far of this process and all its descendants."""
    import psutil

    me = psutil.Process()
    seen: dict[int, tuple[str, float]] = {}
    for process in [me, *me.children(recursive=True)]:
        try:
            times = process.cpu_times()
            seen[process.pid] = (_role(process, me.pid), times.user + times.system)
        except psutil.Error:
            continue
    return seen


def cpu_spent(
    before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]
) -> dict[str, float]:
    """CPU seconds per role between two :func:`cpu_by_role` readings."""
    spent: dict[str, float] = {}
    for pid, (role, seconds) in after.items():
        spent[role] = spent.get(role, 0.0) + seconds - before.get(pid, (role, 0.0))[1]
    return spent


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
            cpu_before = cpu_by_role()
            started = time.perf_counter()
            submitted = completed_in_window(
                lambda i: pool.submit(noop_trial, trial_parameters(i, {"scenario": i})),
                range(tasks),
                submission_window(workers),
            )
            for future in submitted:
                future.result()
                release_result(future)
            elapsed = time.perf_counter() - started
            # Before the cluster closes: its workers' CPU is read while they are alive.
            cpu_s.update(cpu_spent(cpu_before, cpu_by_role()))
            return elapsed

    cpu_s: dict[str, float] = {}
    return {"tasks_s": floor_flow(), "tasks": tasks, "workers": workers, "cpu_s": cpu_s}


def floor_figure(child: ChildResult, runner: str, mean_trial_s: float | None) -> Figure:
    name = f"orchestration floor, {runner}: worker time per no-op Prefect task"
    if not child.ok:
        why = (child.error or "failed").strip().splitlines()[-1][:200]
        return not_measured(GROUP, name, why, unit="ms")
    v = child.value
    per_task_ms = 1000.0 * v["workers"] * v["tasks_s"] / v["tasks"]
    note = f"{v['tasks']} no-op tasks on {v['workers']} workers in {v['tasks_s']:.1f} s"
    if v.get("cpu_s"):
        parts = ", ".join(
            f"{role} {1000.0 * seconds / v['tasks']:.1f} ms"
            for role, seconds in sorted(v["cpu_s"].items(), key=lambda item: -item[1])
        )
        note += f"; CPU per task by process: {parts}"
    if mean_trial_s:
        share = per_task_ms / (per_task_ms + 1000.0 * mean_trial_s)
        note += (
            f"; against the text run's mean trial work ({1000.0 * mean_trial_s:.0f} ms) "
            f"this alone is {100.0 * share:.1f}% overhead"
        )
    return Figure(group=GROUP, name=name, value=per_task_ms, unit="ms", note=note)
