"""Orchestration overhead, Prefect start-up and the memory of a real ``evaflow run``.

Runs over the EVA records go through ``flows.cli.execute`` (the code path of ``evaflow
run``) in a child process: about 1,000 text-mode attempts with the default runner (local
Dask worker processes) and with threads, and a dozen audio-mode trials. Each stored
attempt says how long it simulated (``wall_s``) and scored (``stage_seconds_json.score``),
on whichever worker ran it; their sum against workers x the flow's wall time gives the
share spent outside simulation and judging (Prefect submission, batching and commits,
aggregation, the report, idle workers). Summarising and the report run in the flow's own
process and are timed there. The parent reads the peak RSS of the run process and
samples its whole tree (Dask workers and the Prefect server are separate processes).
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from benchmarks.common import (
    BENCHMARKS,
    REPO_ROOT,
    BenchOptions,
    Figure,
    find_eva_root,
    not_measured,
    scratch_dir,
)
from benchmarks.memory import ChildResult, run_child
from benchmarks.task_floor import floor_figure

GROUP = "run"
RUN_MEMORY_TARGET_MB = 2048.0


class _StageClock:
    """Wall-time totals of functions the flow calls in its own process (summary, report).

    No lock on purpose: these run once each on the flow's thread, and Dask pickles task
    graphs by value where it must, which fails on any lock reachable from patched modules.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def wrap(self, owner: Any, attr: str, label: str) -> None:
        original: Callable[..., Any] = getattr(owner, attr)
        seconds = self.seconds

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                seconds[label] = seconds.get(label, 0.0) + time.perf_counter() - started

        setattr(owner, attr, timed)


class RunPlan(BaseModel):
    """The instrumented run: which records, how many trials, which mode."""

    model_config = ConfigDict(frozen=True)
    label: str = Field(description="Names the figures, e.g. 'text-mode run'")
    mode: str = Field(default="text", description="text or audio")
    trials: int = Field(default=1, ge=1)
    limit: int | None = Field(default=None, description="Records per domain (all if unset)")
    domains: list[str] | None = None
    workers: int = 2
    runner: Literal["threads", "dask"] = Field(default="dask", description="As --runner")


def plan_for(n_scenarios: int, attempts: int) -> RunPlan:
    """Text-mode trials enough for ``attempts`` attempts (the first try of each trial)."""
    trials = max(1, math.ceil(attempts / n_scenarios))
    limit = math.ceil(attempts / 3) if trials == 1 and attempts < n_scenarios else None
    return RunPlan(label="text-mode run, dask", trials=trials, limit=limit)


def instrumented_run(store: str, eva_root: str, plan: dict[str, Any], prefect_home: str) -> dict:
    """Child: one ``evaflow run`` (``flows.cli.execute``) with its stages timed."""
    import os

    os.environ["PREFECT_HOME"] = prefect_home
    started = time.perf_counter()
    from flows.env import configure_prefect

    # Before anything imports Prefect, as ``evaflow run`` does: Prefect reads its settings
    # from the environment once, at import.
    configure_prefect(store)
    import flows.benchmark
    import tasks.summary
    from flows.cli import execute
    from tasks.config import parse_config

    imported = time.perf_counter() - started
    spec = RunPlan(**plan)
    scenarios: dict[str, Any] = {"eva_root": eva_root, "limit": spec.limit}
    if spec.domains:
        scenarios["domains"] = spec.domains
    config = parse_config(
        {
            "run_id": "bench-overhead",
            "store": store,
            "scenarios": scenarios,
            "mode": spec.mode,
            "conditions": ["clean"],
            "trials": spec.trials,
            "runner": {"kind": spec.runner, "workers": spec.workers},
        },
        "benchmark",
    )
    clock = _StageClock()
    clock.wrap(tasks.summary, "summarize_run", "summarize")
    clock.wrap(flows.benchmark, "_write_report", "report")
    summary = execute(config, show_progress=False)
    return {
        "import_s": imported,
        "total_s": time.perf_counter() - started,
        "flow_s": summary.wall_s,
        "trials": summary.trials,
        "attempts": summary.attempts,
        "valid": summary.valid,
        "workers": spec.workers,
        "stage_s": clock.seconds,
        "phase_s": summary.phase_s,
        **_stored_seconds(store, summary.run_id),
    }


def _stored_seconds(store: str, run_id: str) -> dict[str, Any]:
    """Summed per-attempt simulation (``wall_s``) and scoring seconds from the trials table."""
    import json

    from tasks.store import Store

    trials = Store(store).read("trials", run_id)
    stages = [json.loads(text or "{}") for text in trials["stage_seconds_json"]]
    return {
        "simulate_s": float(trials["wall_s"].fillna(0).sum()),
        "score_s": float(sum(stage.get("score", 0.0) for stage in stages)),
        "rows_with_score": sum("score" in stage for stage in stages),
    }


def prefect_startup(prefect_home: str) -> dict[str, float]:
    """Child: import Prefect, then time a first and a second trivial flow run."""
    import os

    os.environ["PREFECT_HOME"] = prefect_home
    from flows.env import configure_prefect

    configure_prefect(prefect_home)
    started = time.perf_counter()
    from prefect import flow

    imported = time.perf_counter()

    def noop() -> int:
        return 1

    probe = flow(name="evaflow-startup-probe")(noop)
    probe()
    first = time.perf_counter()
    probe()
    second = time.perf_counter()
    return {
        "import_s": imported - started,
        "first_flow_s": first - imported,
        "second_flow_s": second - first,
    }


# --------------------------------------------------------------------------- figures


def _startup_figures(options: BenchOptions, root: Path) -> list[Figure]:
    repeats = 1 if options.quick else max(1, min(3, options.repeats))
    figures = []
    for label, fresh in (("fresh PREFECT_HOME", True), ("existing PREFECT_HOME", False)):
        samples, imports, errors = [], [], []
        for i in range(repeats + (0 if fresh else 1)):
            home = root / (f"prefect-cold-{i}" if fresh else "prefect-warm")
            child = run_child(f"{__name__}:prefect_startup", {"prefect_home": str(home)})
            if not child.ok:
                errors.append((child.error or "failed").splitlines()[0])
                continue
            if not fresh and i == 0:
                continue  # the first run creates the database: it is the cold case
            samples.append(child.value["first_flow_s"])
            imports.append(child.value["import_s"])
        name = f"Prefect start-up to first flow ({label})"
        if not samples:
            figures.append(not_measured(GROUP, name, "; ".join(errors)[:200], unit="s"))
            continue
        note = f"median of {len(samples)}; + import prefect {_median(imports):.1f} s"
        figure = Figure(
            group=GROUP, name=name, value=_median(samples), unit="s", samples=samples, note=note
        )
        figures.append(figure)
    return figures


QUICK_RUN_TARGET_S = 60.0


def _quick_run_figure(root: Path) -> Figure:
    """``evaflow run --quick`` as a user types it, timed from the shell: start-up, the six
    audio calls, scoring, summary and report, in a new store with a new Prefect home (its
    database copied from the template ``make install`` builds: flows/prefect_db.py)."""
    name = "whole `evaflow run --quick` (6 audio calls, start-up and report included)"
    home = root / "prefect-new"
    shutil.rmtree(home, ignore_errors=True)
    env = {**os.environ, "PREFECT_HOME": str(home)}
    store = root / "store-quick"
    command = [sys.executable, "-m", "flows", "run", "--quick", "--store", str(store)]
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=1800
        )
    except subprocess.TimeoutExpired:
        return not_measured(GROUP, name, "timed out after 1800 s", unit="s")
    finally:
        shutil.rmtree(store, ignore_errors=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        why = (done.stderr or done.stdout or "failed").strip().splitlines()[-1][:200]
        return not_measured(GROUP, name, why, unit="s", target=QUICK_RUN_TARGET_S, op="<")
    return Figure(
        group=GROUP,
        name=name,
        value=wall,
        unit="s",
        target=QUICK_RUN_TARGET_S,
        op="<",
        note="python -m flows run --quick in a new store and Prefect home, wall time of the "
        "whole command",
    )


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _overhead_figures(child: ChildResult, plan: RunPlan) -> list[Figure]:
    """Share of the flow's worker time spent outside simulation and scoring."""
    name = f"orchestration overhead, {plan.label} (share of flow wall time)"
    if not child.ok:
        why = (child.error or "failed").strip().splitlines()[-1][:200]
        return [not_measured(GROUP, name, why, unit="%", target=10.0, op="<=")]
    v = child.value
    busy = v["simulate_s"] + v["score_s"]
    capacity = v["workers"] * v["flow_s"]
    share = 100.0 * (1 - busy / capacity) if capacity else math.nan
    stages = ", ".join(f"{k} {s:.1f} s" for k, s in v.get("phase_s", v["stage_s"]).items())
    note = (
        f"1 - (simulate {v['simulate_s']:.1f} s + score {v['score_s']:.1f} s, stored) / "
        f"({v['workers']} workers x flow {v['flow_s']:.1f} s); in the flow: {stages}; "
        f"{v['attempts']} attempts ({v['valid']} valid) of {v['trials']} trials"
    )
    whole = 100.0 * (1 - busy / (v["workers"] * child.wall_s))
    return [
        Figure(group=GROUP, name=name, value=share, unit="%", target=10.0, op="<=", note=note),
        Figure(
            group=GROUP,
            name=f"orchestration overhead, {plan.label}, incl. process and Prefect start-up",
            value=whole,
            unit="%",
            note=f"process wall {child.wall_s:.1f} s, imports {v['import_s']:.1f} s, "
            f"start-up + teardown {v['total_s'] - v['import_s'] - v['flow_s']:.1f} s",
        ),
    ]


def _memory_figures(child: ChildResult, plan: RunPlan) -> list[Figure]:
    """Peak RSS of the whole run (the target: every process of it) and of its main process."""
    attempts = child.value["attempts"] if child.ok else None
    name = f"peak memory, {plan.label} ({attempts or '?'} attempts), whole process tree"
    if not child.ok:
        why = (child.error or "failed").strip().splitlines()[-1][:200]
        return [not_measured(GROUP, name, why, unit="MB", target=RUN_MEMORY_TARGET_MB, op="<")]
    v = child.value
    return [
        Figure(
            group=GROUP,
            name=name,
            value=child.tree_peak_pss_mb,
            unit="MB",
            target=RUN_MEMORY_TARGET_MB,
            op="<",
            note="PSS summed over the run process, Prefect server and Dask processes, sampled "
            f"every 0.25 s (RSS sum {child.tree_peak_rss_mb or 0:,.0f} MB counts shared pages "
            f"repeatedly); {v['attempts'] / v['flow_s']:.1f} attempts/s",
        ),
        Figure(
            group=GROUP,
            name=f"peak RSS, {plan.label}, run process alone",
            value=child.peak_rss_mb,
            unit="MB",
            note="ru_maxrss of the evaflow run process",
        ),
    ]


def _run(options: BenchOptions, root: Path, eva_root: Path, plan: RunPlan) -> ChildResult:
    slug = "-".join(plan.label.replace(",", "").split())
    store = root / f"store-{slug}"
    try:
        return run_child(
            f"{__name__}:instrumented_run",
            {
                "store": str(store),
                "eva_root": str(eva_root),
                "plan": plan.model_dump(),
                "prefect_home": str(root / "prefect-warm"),
            },
            sample_tree=True,
            timeout_s=3 * 3600,
            log_path=root / f"run-{slug}.log",
        )
    finally:
        shutil.rmtree(store, ignore_errors=True)


@BENCHMARKS.register("run")
def run(options: BenchOptions) -> list[Figure]:
    """Prefect start-up; text-mode runs of ~1,000 attempts (default Dask runner, threads);
    a small audio-mode run (realistic trial lengths). Stores are deleted."""
    figures: list[Figure] = []
    with scratch_dir(options, "evaflow-bench-run-") as root:
        figures += _startup_figures(options, root)
        figures.append(_quick_run_figure(root))
        eva_root = find_eva_root(options.eva_root)
        if eva_root is None:
            failed = ChildResult(target="run", error="no EVA checkout (set EVAFLOW_EVA_ROOT)")
            plan = RunPlan(label="text-mode run")
            return [*figures, *_overhead_figures(failed, plan), *_memory_figures(failed, plan)]
        from tasks.config import ScenarioSource
        from tasks.sources import load_source

        n_scenarios = len(load_source(ScenarioSource(eva_root=eva_root)))
        text = plan_for(n_scenarios, 100 if options.quick else 1000)
        threads = text.model_copy(update={"label": "text-mode run, threads", "runner": "threads"})
        audio = RunPlan(
            label="audio-mode run, dask",
            mode="audio",
            domains=["airline"],
            limit=2 if options.quick else 3,
            trials=2 if options.quick else 4,
        )
        mean_trial_s: dict[str, float | None] = {}
        for plan in (text, threads, audio):
            child = _run(options, root, eva_root, plan)
            figures += _overhead_figures(child, plan) + _memory_figures(child, plan)
            if plan.mode == "text":
                mean_trial_s[plan.runner] = _mean_attempt_work(child)
        for runner, mean in mean_trial_s.items():
            floor = run_child(
                "benchmarks.task_floor:floor_run",
                {
                    "prefect_home": str(root / "prefect-warm"),
                    "runner": runner,
                    "tasks": 100 if options.quick else 400,
                },
                timeout_s=1800,
            )
            figures.append(floor_figure(floor, runner, mean))
    return figures


def _mean_attempt_work(child: ChildResult) -> float | None:
    """Stored simulate + score seconds per attempt of a run."""
    if not child.ok or not child.value["attempts"]:
        return None
    v = child.value
    return float((v["simulate_s"] + v["score_s"]) / v["attempts"])
