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
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def text_run(
    store: str, eva_root: str, attempts: int, workers: int, prefect_home: str
) -> dict[str, Any]:
    """Child: one ``evaflow run --mode text`` of about ``attempts`` trials, instrumented."""
    import os

    os.environ["PREFECT_HOME"] = prefect_home
    started = time.perf_counter()
    import flows.benchmark
    import tasks.scoring
    import tasks.simulate_bridge
    import tasks.summary
    from flows.cli import execute
    from tasks.config import ScenarioSource, parse_config
    from tasks.sources import load_source

    imported = time.perf_counter() - started
    n_scenarios = len(load_source(ScenarioSource(eva_root=Path(eva_root))))
    config = parse_config(
        {
            "run_id": "bench-overhead",
            "store": store,
            "scenarios": {"eva_root": eva_root},
            "mode": "text",
            "conditions": ["clean"],
            "trials": max(1, math.ceil(attempts / n_scenarios)),
            "runner": {"kind": "threads", "workers": workers},
        },
        "benchmark",
    )
    clock = _StageClock()
    clock.wrap(tasks.simulate_bridge, "simulate_attempt", "simulate")
    clock.wrap(tasks.scoring, "score_attempt", "score")
    clock.wrap(tasks.summary, "summarize_run", "summarize")
    clock.wrap(flows.benchmark, "_write_report", "report")
    summary = execute(config, show_progress=False)
    stored = _stored_seconds(store, summary.run_id)
    return {
        "import_s": imported,
        "total_s": time.perf_counter() - started,
        "flow_s": summary.wall_s,
        "trials": summary.trials,
        "attempts": summary.attempts,
        "valid": summary.valid,
        "workers": workers,
        "stage_s": clock.seconds,
        "stage_calls": clock.calls,
        **stored,
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
        figures.append(
            Figure(group=GROUP, name=name, value=_median(samples), unit="s", samples=samples,
                   note=note)
        )  # fmt: skip
    return figures


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _run_figures(child: ChildResult, attempts_asked: int) -> list[Figure]:
    name = f"peak RSS of a {attempts_asked:,}-attempt text-mode run"
    if not child.ok:
        why = (child.error or "failed").strip().splitlines()[-1][:200]
        return [
            not_measured(GROUP, "orchestration overhead (share of flow wall time)", why,
                         unit="%", target=10.0, op="<="),
            not_measured(GROUP, name, why, unit="MB", target=RUN_MEMORY_TARGET_MB, op="<"),
        ]  # fmt: skip
    v = child.value
    busy = v["stage_s"].get("simulate", 0.0) + v["stage_s"].get("score", 0.0)
    capacity = v["workers"] * v["flow_s"]
    share = 100.0 * (1 - busy / capacity) if capacity else math.nan
    whole = 100.0 * (1 - busy / (v["workers"] * child.wall_s))
    stages = ", ".join(f"{k} {s:.1f} s" for k, s in sorted(v["stage_s"].items()))
    sized = f"{v['attempts']} attempts ({v['valid']} valid) of {v['trials']} trials"
    return [
        Figure(group=GROUP, name="orchestration overhead (share of flow wall time)", value=share,
               unit="%", target=10.0, op="<=",
               note=f"1 - (simulate + score) / ({v['workers']} workers x flow {v['flow_s']:.1f} s); "
               f"{stages}; {sized}"),
        Figure(group=GROUP, name="orchestration overhead incl. process and Prefect start-up",
               value=whole, unit="%",
               note=f"process wall {child.wall_s:.1f} s, imports {v['import_s']:.1f} s"),
        Figure(group=GROUP, name="Prefect start-up + teardown inside evaflow run",
               value=v["total_s"] - v["import_s"] - v["flow_s"], unit="s",
               note="call of flows.cli.execute minus the flow body"),
        Figure(group=GROUP, name="text-mode throughput", value=v["attempts"] / v["flow_s"],
               unit="attempts/s",
               note=f"stored wall_s sums to {v['stored_wall_s']:.1f} s; "
               f"{v['rows_with_stages']} of {v['stored_rows']} rows have stage_seconds"),
        Figure(group=GROUP, name=name, value=child.peak_rss_mb, unit="MB",
               target=RUN_MEMORY_TARGET_MB, op="<", note="ru_maxrss of the run process"),
        Figure(group=GROUP, name="peak RSS of the run's process tree (incl. Prefect server)",
               value=child.tree_peak_rss_mb, unit="MB", note="sampled every 0.25 s"),
    ]  # fmt: skip


@BENCHMARKS.register("run")
def run(options: BenchOptions) -> list[Figure]:
    """Prefect start-up, then one instrumented text-mode run (its store is deleted)."""
    attempts = 100 if options.quick else 1000
    figures: list[Figure] = []
    with scratch_dir(options, "evaflow-bench-run-") as root:
        figures += _startup_figures(options, root)
        eva_root = find_eva_root(options.eva_root)
        if eva_root is None:
            why = "no EVA checkout (set EVAFLOW_EVA_ROOT)"
            return figures + _run_figures(ChildResult(target="text_run", error=why), attempts)
        child = run_child(
            f"{__name__}:text_run",
            {"store": str(root / "store"), "eva_root": str(eva_root), "attempts": attempts,
             "workers": 2, "prefect_home": str(root / "prefect-warm")},
            sample_tree=True, timeout_s=3 * 3600, log_path=root / "run.log",
        )  # fmt: skip
        figures += _run_figures(child, attempts)
    return figures
