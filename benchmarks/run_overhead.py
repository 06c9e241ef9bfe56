"""Orchestration overhead, Prefect start-up and the memory of a real ``evaflow run``.

A text-mode run of about 1,000 attempts over the EVA records goes through
``flows.cli.execute`` (the code path of ``evaflow run``) in a child process. Inside it, the
simulation and the scoring of every attempt are timed by wrapping
``tasks.simulate_bridge.simulate_attempt`` and ``tasks.scoring.score_attempt``, whose sums
are compared with the flow's wall time: the rest is orchestration (Prefect task
submission, batching and commits, aggregation, the report). The parent reads the child's
peak RSS and samples the process tree, whose Prefect server is a separate process.
"""

from __future__ import annotations

import math
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from benchmarks.common import (
    BENCHMARKS,
    BenchOptions,
    Figure,
    find_eva_root,
    not_measured,
    scratch_dir,
)
from benchmarks.memory import ChildResult, run_child

GROUP = "run"
RUN_MEMORY_TARGET_MB = 2048.0


class _StageClock:
    """Thread-safe wall-time totals of wrapped functions (trials run on several threads)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self._lock = threading.Lock()

    def wrap(self, owner: Any, attr: str, label: str) -> None:
        original: Callable[..., Any] = getattr(owner, attr)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                with self._lock:
                    self.seconds[label] = self.seconds.get(label, 0.0) + (
                        time.perf_counter() - started
                    )
                    self.calls[label] = self.calls.get(label, 0) + 1

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


def plan_for(n_scenarios: int, attempts: int) -> RunPlan:
    """Text-mode trials enough for ``attempts`` attempts (the first try of each trial)."""
    trials = max(1, math.ceil(attempts / n_scenarios))
    limit = math.ceil(attempts / 3) if trials == 1 and attempts < n_scenarios else None
    return RunPlan(label="text-mode run", trials=trials, limit=limit)


def instrumented_run(store: str, eva_root: str, plan: dict[str, Any], prefect_home: str) -> dict:
    """Child: one ``evaflow run`` (``flows.cli.execute``) with its stages timed."""
    import os

    os.environ["PREFECT_HOME"] = prefect_home
    started = time.perf_counter()
    import flows.benchmark
    import tasks.scoring
    import tasks.simulate_bridge
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
            "runner": {"kind": "threads", "workers": spec.workers},
        },
        "benchmark",
    )
    clock = _StageClock()
    clock.wrap(tasks.simulate_bridge, "simulate_attempt", "simulate")
    clock.wrap(tasks.scoring, "score_attempt", "score")
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
        "stage_calls": clock.calls,
        **_stored_seconds(store, summary.run_id),
    }


def _stored_seconds(store: str, run_id: str) -> dict[str, Any]:
    """What the trials table itself says: summed ``wall_s`` and ``stage_seconds_json``."""
    from tasks.store import Store

    frame = Store(store).query(
        "SELECT sum(wall_s) AS wall, count(*) AS n, "
        "sum(CASE WHEN stage_seconds_json NOT IN ('{}', '') THEN 1 ELSE 0 END) AS staged "
        "FROM trials",
        [run_id],
    )
    row = frame.iloc[0]
    return {
        "stored_wall_s": float(row["wall"] or 0.0),
        "stored_rows": int(row["n"]),
        "rows_with_stages": int(row["staged"] or 0),
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


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _overhead_figures(child: ChildResult, plan: RunPlan, target: bool) -> list[Figure]:
    """Share of the flow's worker time spent outside simulation and scoring."""
    name = f"orchestration overhead, {plan.label} (share of flow wall time)"
    limits: dict[str, Any] = {"target": 10.0, "op": "<="} if target else {}
    if not child.ok:
        why = (child.error or "failed").strip().splitlines()[-1][:200]
        return [not_measured(GROUP, name, why, unit="%", **limits)]
    v = child.value
    busy = v["stage_s"].get("simulate", 0.0) + v["stage_s"].get("score", 0.0)
    capacity = v["workers"] * v["flow_s"]
    share = 100.0 * (1 - busy / capacity) if capacity else math.nan
    stages = ", ".join(f"{k} {s:.1f} s" for k, s in sorted(v["stage_s"].items()))
    note = (
        f"1 - (simulate + score) / ({v['workers']} workers x flow {v['flow_s']:.1f} s); "
        f"{stages}; {v['attempts']} attempts ({v['valid']} valid) of {v['trials']} trials"
    )
    whole = 100.0 * (1 - busy / (v["workers"] * child.wall_s))
    return [
        Figure(group=GROUP, name=name, value=share, unit="%", note=note, **limits),
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
    """Peak RSS of the run process (the target) and of its whole process tree."""
    attempts = child.value["attempts"] if child.ok else None
    name = f"peak RSS, {plan.label} ({attempts or '?'} attempts)"
    if not child.ok:
        why = (child.error or "failed").strip().splitlines()[-1][:200]
        return [not_measured(GROUP, name, why, unit="MB", target=RUN_MEMORY_TARGET_MB, op="<")]
    v = child.value
    return [
        Figure(
            group=GROUP,
            name=name,
            value=child.peak_rss_mb,
            unit="MB",
            target=RUN_MEMORY_TARGET_MB,
            op="<",
            note=f"ru_maxrss of the run process; {v['attempts'] / v['flow_s']:.1f} attempts/s",
        ),
        Figure(
            group=GROUP,
            name=f"peak RSS, {plan.label}, whole process tree (incl. Prefect server)",
            value=child.tree_peak_rss_mb,
            unit="MB",
            note="sampled every 0.25 s",
        ),
    ]


def _run(options: BenchOptions, root: Path, eva_root: Path, plan: RunPlan) -> ChildResult:
    store = root / f"store-{plan.mode}"
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
            log_path=root / f"run-{plan.mode}.log",
        )
    finally:
        shutil.rmtree(store, ignore_errors=True)


@BENCHMARKS.register("run")
def run(options: BenchOptions) -> list[Figure]:
    """Prefect start-up; an instrumented text-mode run (~1,000 attempts; overhead, memory);
    a small audio-mode run (overhead with realistic trial lengths). Stores are deleted."""
    figures: list[Figure] = []
    with scratch_dir(options, "evaflow-bench-run-") as root:
        figures += _startup_figures(options, root)
        eva_root = find_eva_root(options.eva_root)
        text = RunPlan(label="text-mode run")
        audio = RunPlan(
            label="audio-mode run",
            mode="audio",
            domains=["airline"],
            limit=2 if options.quick else 3,
            trials=2 if options.quick else 4,
        )
        if eva_root is None:
            failed = ChildResult(target="run", error="no EVA checkout (set EVAFLOW_EVA_ROOT)")
            return [
                *figures,
                *_overhead_figures(failed, text, True),
                *_memory_figures(failed, text),
            ]
        from tasks.config import ScenarioSource
        from tasks.sources import load_source

        n_scenarios = len(load_source(ScenarioSource(eva_root=eva_root)))
        text = plan_for(n_scenarios, 100 if options.quick else 1000)
        child = _run(options, root, eva_root, text)
        figures += _overhead_figures(child, text, target=True)
        figures += _memory_figures(child, text)
        child = _run(options, root, eva_root, audio)
        figures += _overhead_figures(child, audio, target=True)
        figures += _memory_figures(child, audio)
    return figures
