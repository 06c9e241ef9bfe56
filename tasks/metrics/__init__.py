"""Metrics: one module per metric, each registering itself on ``METRICS``.

``METRICS`` imports every module of this package on first use (and the ``evaflow.metrics``
entry points), so adding a metric is one file plus one ``@register_metric`` decorator;
nothing has to be listed here.
"""

from __future__ import annotations

from tasks.metrics.base import (
    METRICS,
    Metric,
    MetricInfo,
    error_score,
    get_metric,
    make_score,
    register_metric,
    skipped_score,
    sub_score,
)
from tasks.metrics.context import MetricContext, build_context

# Module name -> error text for metric modules that failed to import. One broken metric
# must not take every other metric down with it; the runner reports these as errors.
IMPORT_ERRORS: dict[str, str] = METRICS.import_errors


def __getattr__(name: str) -> tuple[str, ...]:
    if name in ("DEFAULT_METRICS", "VALIDATION_METRICS"):
        from tasks.metrics import base

        return getattr(base, name)  # type: ignore[no-any-return]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_METRICS",
    "IMPORT_ERRORS",
    "METRICS",
    "VALIDATION_METRICS",
    "Metric",
    "MetricContext",
    "MetricInfo",
    "build_context",
    "error_score",
    "get_metric",
    "make_score",
    "register_metric",
    "skipped_score",
    "sub_score",
]
