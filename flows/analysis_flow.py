"""The analysis flow: load the runs once, run each selected analysis as a task.

All the work is in ``analysis`` (pure functions over the stored tables); this module only
orchestrates. ``run_analysis.fn(...)`` runs the same code without Prefect: outside a flow
run each analysis is called directly instead of as a task (which would start a server).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.context import FlowRunContext

from analysis.base import AnalysisResult
from analysis.data import RunData, load_run_data
from analysis.runner import (
    PUBLISHED,
    default_out_dir,
    result_json,
    run_one,
    run_published,
    selection,
    write_summary,
)
from tasks.store import Store


@task(name="analysis", cache_policy=NO_CACHE, persist_result=False, log_prints=False)
def analysis_step(name: str, data: RunData, out_dir: Path) -> AnalysisResult:
    return run_one(name, data, out_dir)


@flow(name="evaflow-analysis", log_prints=False, validate_parameters=True)
def run_analysis(
    store: str,
    runs: list[str],
    which: str = "all",
    out: str | None = None,
    stats: str | None = None,
    systems: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Run ``which`` (an analysis, a group, ``all`` or ``published``) on ``runs``.

    ``published`` needs ``stats`` (the published statistics file); with ``runs`` it also
    places those runs' systems on the published Pareto fronts. Returns one JSON-ready
    summary per analysis (status, table and figure paths, headline numbers).
    """
    root = Store(store)
    if which == PUBLISHED:
        if not stats:
            raise ValueError("analysis 'published' needs stats=<published statistics JSON>")
        result = run_published(Path(stats), Path(out) if out else None, root, runs or None, systems)
        return [result_json(result)]
    names = selection(which)
    out_dir = Path(out) if out else default_out_dir(root, runs)
    data = load_run_data(root, runs)
    step = analysis_step if FlowRunContext.get() is not None else run_one
    # One after another: matplotlib is not thread-safe, and the work is CPU-bound anyway.
    results: list[AnalysisResult] = [step(name, data, out_dir) for name in names]
    write_summary(results, out_dir)
    return [result_json(r) for r in results]
