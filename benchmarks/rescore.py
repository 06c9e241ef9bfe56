"""Re-scoring a stored run with the offline judges, and re-aggregating it (issue 30).

The store is built by a real text-mode ``evaflow run`` (``flows.cli.execute``) of about
1,000 attempts over the EVA records, planned as the ``run`` group plans its text run
(``benchmarks.run_overhead.plan_for``). Then, on that store:

- ``evaflow score RUN --judge offline`` and ``evaflow aggregate RUN`` as a user types them
  (``python -m flows ...`` in a new interpreter: imports, the re-scoring, the aggregates);
- the pure functions behind them, :func:`tasks.rescore.rescore_run` and
  :func:`tasks.rescore.reaggregate`, timed in one child after its imports, repeated.

Each re-scoring is stored as a new scoring (never over the run's own), so every repeat
judges the same attempts; the first one is compared with the run's own metric values
(the same judge must reproduce them), so a re-scoring that judged nothing, or judged
differently, shows in the note instead of passing as a fast figure. The store is deleted.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
from benchmarks.run_overhead import RunPlan, plan_for

GROUP = "rescore"
RUN_ID = "bench-rescore"
RESCORE_TARGET_S = 60.0  # issue 30: 1,000 stored text-mode attempts, offline judges, 2 cores
# What a scoring must reproduce of the run's own rows (the columns a judge writes).
COMPARED = ("score", "normalized_score", "passed", "skipped", "error")


def build_store(store: str, eva_root: str, plan: dict[str, Any], prefect_home: str) -> dict:
    """Child: one text-mode ``evaflow run`` (no report) that leaves its store behind."""
    os.environ["PREFECT_HOME"] = prefect_home
    from flows.env import configure_prefect

    configure_prefect(store)  # before Prefect is imported, as ``evaflow run`` does
    from flows.cli import execute
    from tasks.config import parse_config

    spec = RunPlan(**plan)
    config = parse_config(
        {
            "run_id": RUN_ID,
            "store": store,
            "scenarios": {"eva_root": eva_root, "limit": spec.limit},
            "mode": "text",
            "conditions": ["clean"],
            "trials": spec.trials,
            "runner": {"kind": spec.runner, "workers": spec.workers},
            "report": False,
        },
        "benchmark",
    )
    summary = execute(config, show_progress=False)
    return {"attempts": summary.attempts, "trials": summary.trials, "valid": summary.valid}


def differing_rows(store: Any, run_id: str, scoring: str) -> tuple[int, int]:
    """(rows of ``scoring`` whose judged columns differ from the run's own, rows compared)."""
    import pandas as pd

    from tasks.tables import RUN_SCORING

    metrics = store.read("metrics", run_id)
    names = metrics["scoring"].fillna(RUN_SCORING)
    key = ["attempt_id", "metric"]
    own = metrics[names == RUN_SCORING].set_index(key)[list(COMPARED)]
    new = metrics[names == scoring].set_index(key)[list(COMPARED)]
    both = own.join(new, how="inner", rsuffix="_new")
    differ = pd.Series(False, index=both.index)
    for column in COMPARED:
        a, b = both[column], both[f"{column}_new"]
        differ |= ~((a == b) | (a.isna() & b.isna()))
    return int(differ.sum()), len(both)


def time_functions(store: str, run_id: str, repeats: int) -> dict:
    """Child: ``rescore_run`` (offline judge, all metrics) and ``reaggregate``, each
    ``repeats`` times after the imports; the first scoring checked against the run's."""
    from tasks.rescore import ScoringRequest, reaggregate, rescore_run
    from tasks.store import Store

    s = Store(store)
    rescore_s, reports = [], []
    for i in range(repeats):
        request = ScoringRequest(run_id=run_id, judge="offline", name=f"bench-fn-{i}")
        started = time.perf_counter()
        reports.append(rescore_run(s, request))
        rescore_s.append(time.perf_counter() - started)
    aggregate_s = []
    for _ in range(repeats):
        started = time.perf_counter()
        rows = reaggregate(s, run_id)
        aggregate_s.append(time.perf_counter() - started)
    differ, compared = differing_rows(s, run_id, reports[0].name)
    return {
        "rescore_s": rescore_s,
        "aggregate_s": aggregate_s,
        "attempts": reports[0].attempts,
        "rows": reports[0].rows,
        "headline_rows": len(rows),
        "differ": differ,
        "compared": compared,
    }


def _command(args: list[str]) -> tuple[float, str | None]:
    """Wall seconds of ``python -m flows ARGS`` (a new interpreter), and why it failed."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "flows", *args],
        cwd=REPO_ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        return seconds, (done.stderr or done.stdout or "failed").strip().splitlines()[-1][:200]
    return seconds, None


def _command_figures(store: Path, attempts: int, repeats: int) -> list[Figure]:
    """``evaflow score RUN --judge offline`` and ``evaflow aggregate RUN``, as typed."""
    where = ["--store", str(store)]
    commands: list[tuple[str, Callable[[int], list[str]], dict[str, Any]]] = [
        (
            f"`evaflow score RUN --judge offline`, {attempts} stored text-mode attempts, "
            "whole command",
            lambda i: ["score", RUN_ID, "--judge", "offline", "--name", f"bench-cli-{i}", *where],
            {"target": RESCORE_TARGET_S, "op": "<"},
        ),
        ("`evaflow aggregate RUN`, whole command", lambda i: ["aggregate", RUN_ID, *where], {}),
    ]
    figures = []
    for name, argv, target in commands:
        samples = []
        for i in range(repeats):
            seconds, error = _command(argv(i))
            if error is not None:
                figures.append(not_measured(GROUP, name, error, unit="s", **target))
                break
            samples.append(seconds)
        else:
            note = f"median of {len(samples)}; new interpreter each (imports included)"
            figures.append(
                Figure(
                    group=GROUP,
                    name=name,
                    value=statistics.median(samples),
                    unit="s",
                    samples=samples,
                    note=note,
                    **target,
                )
            )
    return figures


def _function_figures(child: ChildResult, attempts: int) -> list[Figure]:
    """The pure functions' medians, with what the first re-scoring reproduced."""
    names = (
        f"rescore_run (offline, all metrics), {attempts} attempts, after imports",
        "reaggregate, after imports",
    )
    if not child.ok:
        why = (child.error or "failed").strip().splitlines()[-1][:200]
        return [not_measured(GROUP, n, why, unit="s") for n in names]
    v = child.value
    rescore = statistics.median(v["rescore_s"])
    same = "all equal" if v["differ"] == 0 else f"{v['differ']} DIFFER"
    return [
        Figure(
            group=GROUP,
            name=names[0],
            value=rescore,
            unit="s",
            samples=v["rescore_s"],
            note=f"median of {len(v['rescore_s'])}; {v['attempts']} attempts judged, "
            f"{v['rows']} metric rows ({1000 * rescore / max(1, v['attempts']):.1f} ms per "
            f"attempt, one process); vs the run's own values: {same} of {v['compared']} rows; "
            f"peak RSS of the child {child.peak_rss_mb or 0:,.0f} MB",
        ),
        Figure(
            group=GROUP,
            name=names[1],
            value=statistics.median(v["aggregate_s"]),
            unit="s",
            samples=v["aggregate_s"],
            note=f"median of {len(v['aggregate_s'])}; {v['headline_rows']} aggregate rows",
        ),
    ]


def _build(root: Path, eva_root: Path, plan: RunPlan) -> ChildResult:
    return run_child(
        f"{__name__}:build_store",
        {
            "store": str(root / "store"),
            "eva_root": str(eva_root),
            "plan": plan.model_dump(),
            "prefect_home": str(root / "prefect"),
        },
        timeout_s=3 * 3600,
        log_path=root / "build.log",
    )


@BENCHMARKS.register(GROUP)
def rescore(options: BenchOptions) -> list[Figure]:
    """A text-mode run of ~1,000 attempts (100 with --quick), then re-scoring and
    re-aggregating it: the commands and the functions behind them."""
    eva_root = find_eva_root(options.eva_root)
    if eva_root is None:
        return [not_measured(GROUP, "re-scoring", "no EVA checkout (set EVAFLOW_EVA_ROOT)")]
    from tasks.config import ScenarioSource
    from tasks.sources import load_source

    n_scenarios = len(load_source(ScenarioSource(eva_root=eva_root)))
    plan = plan_for(n_scenarios, 100 if options.quick else 1000)
    repeats = 1 if options.quick else max(1, min(3, options.repeats))
    with scratch_dir(options, "evaflow-bench-rescore-") as root:
        built = _build(root, eva_root, plan)
        name = "build: text-mode `evaflow run` (dask, no report)"
        if not built.ok:
            why = (built.error or "failed").strip().splitlines()[-1][:200]
            return [not_measured(GROUP, name, why, unit="s")]
        attempts = int(built.value["attempts"])
        figures = [
            Figure(
                group=GROUP,
                name=name,
                value=built.wall_s,
                unit="s",
                note=f"{attempts} attempts ({built.value['valid']} valid) of "
                f"{built.value['trials']} trials; whole child process",
            )
        ]
        figures += _command_figures(root / "store", attempts, repeats)
        child = run_child(
            f"{__name__}:time_functions",
            {"store": str(root / "store"), "run_id": RUN_ID, "repeats": repeats},
            timeout_s=3600,
            log_path=root / "functions.log",
        )
        figures += _function_figures(child, attempts)
    return figures
