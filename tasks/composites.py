"""EVA composites of one attempt (spec 5.1): pass flags and means from its metric scores.

Pure Python over one record's scores. Dask workers score every attempt with these, so
this module stays free of pandas; the run-level statistics are :mod:`tasks.aggregate`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from tasks.metrics.base import EVA_A, EVA_X, METRICS, TOLERANCE, at_least
from tasks.records import MetricScore

# A binary metric must equal its threshold, not merely reach it.
_EXACT_COMPONENTS = frozenset({"task_completion"})


def _pass_components(names: tuple[str, ...]) -> tuple[tuple[str, float, bool], ...]:
    return tuple((n, METRICS.get(n).info.threshold, n in _EXACT_COMPONENTS) for n in names)


# (metric, threshold, must equal) per pass composite; thresholds are the metrics' own.
PASS_COMPONENTS: dict[str, tuple[tuple[str, float, bool], ...]] = {
    "EVA-A_pass": _pass_components(EVA_A),
    "EVA-X_pass": _pass_components(EVA_X),
}
# The summation order the stored means were made with (EVA-X differs from EVA_X's order).
MEAN_COMPONENTS: dict[str, tuple[str, ...]] = {
    "EVA-A_mean": EVA_A,
    "EVA-X_mean": ("conversation_progression", "conciseness", "turn_taking"),
}
MEAN_COMPONENTS["EVA-overall_mean"] = MEAN_COMPONENTS["EVA-A_mean"] + MEAN_COMPONENTS["EVA-X_mean"]
PASS_DIMENSIONS = ("EVA-A_pass", "EVA-X_pass", "EVA-overall_pass")


def _usable(score: MetricScore | None) -> bool:
    return score is not None and score.error is None and score.value is not None


def pass_composite(
    scores: Mapping[str, MetricScore], components: Iterable[tuple[str, float, bool]]
) -> float | None:
    """1.0 / 0.0; null if any component is missing or errored, or all were skipped."""
    checked: list[bool] = []
    for name, threshold, exact in components:
        score = scores.get(name)
        if score is not None and score.skipped and score.error is None:
            continue
        if score is None or not _usable(score):
            return None
        value = float(score.value)  # type: ignore[arg-type]
        ok = (
            math.isclose(value, threshold, rel_tol=0.0, abs_tol=TOLERANCE)
            if exact
            else at_least(value, threshold)
        )
        checked.append(ok)
    if not checked:
        return None
    return 1.0 if all(checked) else 0.0


def mean_composite(scores: Mapping[str, MetricScore], names: Iterable[str]) -> float | None:
    values = [float(s.value) for n in names if _usable(s := scores.get(n))]  # type: ignore[arg-type, union-attr]
    return sum(values) / len(values) if values else None


def composites(scores: Mapping[str, MetricScore]) -> dict[str, float | None]:
    """Per-record EVA composites (spec 5.1) from metric name -> score."""
    out: dict[str, float | None] = {
        name: pass_composite(scores, comps) for name, comps in PASS_COMPONENTS.items()
    }
    for name, comps in MEAN_COMPONENTS.items():
        out[name] = mean_composite(scores, comps)
    a, x = out["EVA-A_pass"], out["EVA-X_pass"]
    out["EVA-overall_pass"] = None if a is None or x is None else float(a == 1.0 and x == 1.0)
    return out
