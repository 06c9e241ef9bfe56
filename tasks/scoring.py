"""Score one attempt: validation + default metrics, EVA composites, validation verdict."""

from __future__ import annotations

from typing import Any

from scenarios.models import Scenario
from tasks.records import AttemptRecord, MetricScore
from tasks.trial_spec import TrialSpec

COMPOSITE_VERSION = "eva-2.2"


def metric_names(spec: TrialSpec) -> list[str]:
    from tasks.metrics.base import DEFAULT_METRICS, VALIDATION_METRICS

    chosen = list(spec.metrics) if spec.metrics is not None else list(DEFAULT_METRICS)
    return list(dict.fromkeys([*VALIDATION_METRICS, *chosen]))


def composite_scores(scores: list[MetricScore]) -> list[MetricScore]:
    """The per-attempt EVA composites as metric rows (``EVA-A_pass``, ``EVA-X_mean``...)."""
    from tasks.composites import composites

    values = composites({s.name: s for s in scores})
    return [
        MetricScore(
            name=name,
            score=value,
            normalized_score=value,
            passed=None if value is None or not name.endswith("_pass") else value == 1.0,
            threshold=1.0 if name.endswith("_pass") else None,
            skipped=value is None,
            version=COMPOSITE_VERSION,
        )
        for name, value in values.items()
    ]


def score_attempt(
    spec: TrialSpec, scenario: Scenario, record: AttemptRecord
) -> tuple[list[MetricScore], dict[str, Any]]:
    """Run the metrics, add composites, decide validity; updates ``record.status``."""
    from tasks.judges import make_judge
    from tasks.metrics.runner import run_metrics
    from tasks.validate import validate_attempt

    judge = make_judge(spec.judge.model_dump())
    scores = run_metrics(record, scenario, metric_names(spec), judge)
    verdict = validate_attempt(record, scores)
    record.status = verdict.status
    return [*scores, *composite_scores(scores)], verdict.model_dump(mode="json")
