"""Metrics: one module per metric, each registering itself on ``METRICS``.

Importing this package imports every module in it (``pkgutil``), so adding a metric is
one file plus one ``@register_metric`` decorator; nothing has to be listed here.
"""

from __future__ import annotations

import importlib
import pkgutil
import warnings

from tasks.metrics.base import (
    DEFAULT_METRICS,
    METRICS,
    VALIDATION_METRICS,
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

_FRAMEWORK_MODULES = {"base", "context", "runner", "wer_normalize"}
# Module name -> error text for metric modules that failed to import. One broken metric
# must not take every other metric down with it; the runner reports these as errors.
IMPORT_ERRORS: dict[str, str] = {}


def _import_metric_modules() -> None:
    for info in pkgutil.iter_modules(__path__):
        if info.name in _FRAMEWORK_MODULES or info.name.startswith("_"):
            continue
        try:
            importlib.import_module(f"{__name__}.{info.name}")
        except Exception as exc:  # noqa: BLE001 - reported, not fatal
            IMPORT_ERRORS[info.name] = f"{type(exc).__name__}: {exc}"
            warnings.warn(
                f"metric module tasks.metrics.{info.name} failed to import: {exc}",
                stacklevel=2,
            )


_import_metric_modules()

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
