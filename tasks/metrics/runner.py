"""Run a set of metrics on one attempt with the reference's runner rules (spec 4.1).

* metrics whose supported pipelines exclude the run's pipeline are silently not computed;
* a context without assistant turns or without user turns gives every requested metric
  score 0 with the error "Skipped: no assistant or user turns";
* an exception inside a metric becomes score 0 with the exception text.

:func:`run_metrics` never raises: unknown metric names and a context that cannot be built
also come back as error scores, so one bad record cannot stop a sweep.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import tasks.metrics as metrics_pkg
from evaflow_core.registry import UnknownNameError
from scenarios.models import Scenario
from tasks.metrics.base import (
    ALL_PIPELINES,
    METRICS,
    Metric,
    canonical_metric_name,
    default_metrics,
    error_score,
)
from tasks.metrics.context import MetricContext, build_context
from tasks.records import AttemptRecord, MetricScore

NO_TURNS_ERROR = "Skipped: no assistant or user turns"


def resolve_metric_names(names: list[str] | None) -> list[str]:
    """Canonical, de-duplicated names; raises ``UnknownNameError`` listing valid names.

    For callers that want to reject a bad ``--metrics`` option before any work starts.
    """
    resolved = _dedupe(names)
    for name in resolved:
        METRICS.get(name)
    return resolved


def _dedupe(names: list[str] | None) -> list[str]:
    chosen = list(default_metrics()) if names is None else names
    out: list[str] = []
    for name in chosen:
        canonical = canonical_metric_name(name)
        if canonical not in out:
            out.append(canonical)
    return out


def _unknown_score(name: str) -> MetricScore:
    try:
        METRICS.get(name)
        message = f"metric {name!r} is registered but could not be run"
    except UnknownNameError as exc:
        message = str(exc)
    broken = metrics_pkg.IMPORT_ERRORS.get(name)
    if broken:
        message = f"metric module {name!r} failed to import: {broken}"
    return MetricScore(name=name, score=0.0, normalized_score=0.0, error=message)


def compute_one(metric: Metric, ctx: MetricContext, judges: Any) -> MetricScore:
    """One metric, with the runner's exception rule applied."""
    try:
        result = metric.compute(ctx, judges)
    except Exception as exc:  # noqa: BLE001 - a metric bug is reported, never fatal
        return error_score(metric.info, f"{type(exc).__name__}: {exc}")
    if not isinstance(result, MetricScore):
        return error_score(metric.info, f"metric returned {type(result).__name__}, not a score")
    return result


def run_metrics(
    record: AttemptRecord,
    scenario: Scenario,
    names: list[str] | None = None,
    judges: Any = None,
    pipeline: str = "cascade",
    max_workers: int = 1,
) -> list[MetricScore]:
    """Scores of ``names`` (default: the spec's default set) for one attempt, in order.

    ``max_workers > 1`` runs metrics concurrently in threads (useful for network judges).
    """
    wanted = _dedupe(names)
    if pipeline not in ALL_PIPELINES:
        message = f"unknown pipeline {pipeline!r}; valid pipelines: {', '.join(ALL_PIPELINES)}"
        return [MetricScore(name=n, score=0.0, normalized_score=0.0, error=message) for n in wanted]
    metrics: list[Metric | str] = [METRICS.get(n) if n in METRICS else n for n in wanted]
    runnable = [m for m in metrics if isinstance(m, str) or m.supports(pipeline)]
    try:
        ctx = build_context(record, scenario, pipeline)
    except Exception as exc:  # noqa: BLE001
        message = f"could not build metric context: {type(exc).__name__}: {exc}"
        return [_context_error(m, message) for m in runnable]
    no_turns = ctx.num_assistant_turns == 0 or ctx.num_user_turns == 0

    def run(item: Metric | str) -> MetricScore:
        if isinstance(item, str):
            return _unknown_score(item)
        if no_turns:
            return error_score(item.info, NO_TURNS_ERROR)
        return compute_one(item, ctx, judges)

    if max_workers <= 1 or len(runnable) <= 1:
        return [run(m) for m in runnable]
    with ThreadPoolExecutor(max_workers=max_workers) as pool:
        return list(pool.map(run, runnable))


def _context_error(item: Metric | str, message: str) -> MetricScore:
    if isinstance(item, str):
        return _unknown_score(item)
    return error_score(item.info, message)
