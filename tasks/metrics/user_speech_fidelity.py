"""user_speech_fidelity (spec 4.5): does the caller's clean audio say what it meant to?

A validation gate (not in the default set): per caller turn 1-3 (3 all right, 2 minor word
errors, 1 an entity or major error); normalized = mean of (r - 1) / 2, score = mean raw.
The validation decision only looks at ``details["per_turn_ratings"]`` (any 1 fails, spec
12.17). Without caller audio (text mode) the metric is skipped.
"""

from __future__ import annotations

from typing import Any

from tasks.judges import resolve_judge
from tasks.judges.adapters import speech_task
from tasks.judges.scoring import score_per_turn, skipped_verdict_score, with_judge
from tasks.metrics.base import MetricInfo, register_metric, skipped_score
from tasks.metrics.context import MetricContext
from tasks.records import MetricScore

INFO = MetricInfo(
    name="user_speech_fidelity",
    category="validation",
    version="v0.2",
    threshold=0.5,
    exclude_from_default=True,
    kind="judge",
    description="The caller's audio reproduces its intended text (1-3 per turn)",
)


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    judge = resolve_judge(judges, INFO.name)
    task = speech_task(ctx, INFO.name, "user", "user")
    if task is None:
        return with_judge(skipped_score(INFO, "no caller audio (text mode)"), judge, INFO.name)
    expected = sorted(task.inputs.turns)  # type: ignore[attr-defined]
    if not expected:
        return with_judge(skipped_score(INFO, "the caller said nothing"), judge, INFO.name)
    verdict = judge.evaluate(task)
    if verdict.skipped:
        return skipped_verdict_score(INFO.name, verdict, verdict.skipped)
    return score_per_turn(INFO.name, verdict, expected, low=1, high=3)
