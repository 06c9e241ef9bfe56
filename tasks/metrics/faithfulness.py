"""faithfulness (spec 4.3): does the agent stay true to tools, caller and policy? (judged)

Five dimensions rated 3/2/1; the overall rating is the lowest. Score = rating (1-3),
normalized (rating - 1) / 2; a rating outside the scale becomes 1 (spec 12.18); an
unparseable answer is score 0 with an error. Sub-metrics ``<dimension>_rate`` = 1.0 when
the judge flagged the dimension.
"""

from __future__ import annotations

from typing import Any

from tasks.judges import JudgeTask, resolve_judge
from tasks.judges.adapters import conversation_input
from tasks.judges.offline.policy import DIMENSIONS
from tasks.judges.scoring import score_dimensions
from tasks.metrics.base import MetricInfo, register_metric
from tasks.metrics.context import MetricContext
from tasks.records import MetricScore

INFO = MetricInfo(
    name="faithfulness",
    category="accuracy",
    version="v0.3",
    threshold=0.5,
    kind="judge",
    description="Agent statements and tool inputs grounded in tools, caller and policy (1-3)",
)


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    judge = resolve_judge(judges, INFO.name)
    verdict = judge.evaluate(JudgeTask(metric=INFO.name, inputs=conversation_input(ctx)))
    return score_dimensions(INFO.name, verdict, DIMENSIONS, num_turns=len(ctx.trace))
