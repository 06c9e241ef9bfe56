"""Score one attempt in two stages: validate every attempt, judge only the kept one.

Validation runs the validation metrics (the gate and the simulator checks) and decides
whether the attempt is kept (:func:`validate_scores`); the full metric set and the EVA
composites run once, on the attempt the trial keeps (:func:`judge_scores`). With LLM
judges a regenerated attempt therefore costs only its validation calls, as in the
reference; a discarded attempt keeps its validation metric rows (failures are data).
"""

from __future__ import annotations

from typing import Any

from scenarios.models import Scenario
from tasks.records import AttemptRecord, MetricScore
from tasks.trial_spec import TrialSpec

COMPOSITE_VERSION = "eva-2.2"


def metric_names(spec: TrialSpec) -> list[str]:
    """Every metric a kept attempt gets: the validation metrics, then the chosen set."""
    from tasks.metrics.base import DEFAULT_METRICS, VALIDATION_METRICS

    chosen = list(spec.metrics) if spec.metrics is not None else list(DEFAULT_METRICS)
    return list(dict.fromkeys([*VALIDATION_METRICS, *chosen]))


def judged_names(spec: TrialSpec) -> list[str]:
    """What judging adds to a kept attempt: :func:`metric_names` less the validation set
    (aliases included), in the same order, so the rows come out as one pass made them."""
    from tasks.metrics.base import VALIDATION_METRICS, canonical_metric_name

    return [n for n in metric_names(spec) if canonical_metric_name(n) not in VALIDATION_METRICS]


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


def validate_scores(
    spec: TrialSpec, scenario: Scenario, record: AttemptRecord, judge: Any = None
) -> tuple[list[MetricScore], dict[str, Any]]:
    """The validation metrics and the verdict of one attempt; updates ``record.status``.

    The attempt is scored as its system's pipeline (:func:`tasks.systems.spec.pipeline_of`):
    metrics that do not support it are not computed (EVA spec 4.1) and the context takes
    its audio-native branches (4.2). The verdict carries that ``pipeline``, stored with the
    attempt's trials row.
    """
    from tasks.judges import make_judge
    from tasks.metrics.base import VALIDATION_METRICS
    from tasks.metrics.runner import run_metrics
    from tasks.systems.spec import pipeline_of
    from tasks.validate import validate_attempt

    pipeline = pipeline_of(spec.system)
    judge = judge if judge is not None else make_judge(spec.judge.model_dump())
    scores = run_metrics(record, scenario, list(VALIDATION_METRICS), judge, pipeline=pipeline)
    verdict = validate_attempt(record, scores)
    record.status = verdict.status
    return scores, {**verdict.model_dump(mode="json"), "pipeline": pipeline}


def judge_scores(
    spec: TrialSpec,
    scenario: Scenario,
    record: AttemptRecord,
    validation: list[MetricScore],
    judge: Any = None,
) -> list[MetricScore]:
    """A kept attempt's full scores: its ``validation`` scores, the rest of the metric set
    and the composites (never raises: the metric runner turns failures into error rows)."""
    from tasks.judges import make_judge
    from tasks.metrics.runner import run_metrics
    from tasks.systems.spec import pipeline_of

    judge = judge if judge is not None else make_judge(spec.judge.model_dump())
    rest = run_metrics(
        record, scenario, judged_names(spec), judge, pipeline=pipeline_of(spec.system)
    )
    scores = [*validation, *rest]
    return [*scores, *composite_scores(scores)]


def score_attempt(
    spec: TrialSpec, scenario: Scenario, record: AttemptRecord
) -> tuple[list[MetricScore], dict[str, Any]]:
    """Both stages on one attempt regardless of the verdict (one attempt scored alone, as
    a check or a test does; the trial loop validates every attempt and judges the kept)."""
    from tasks.judges import make_judge

    judge = make_judge(spec.judge.model_dump())
    validation, verdict = validate_scores(spec, scenario, record, judge)
    return judge_scores(spec, scenario, record, validation, judge), verdict
