"""conversation_progression (spec 4.4): does the agent move the call forward efficiently?

Four dimensions (unnecessary tool calls, information loss, redundant statements, question
quality) rated 3/2/1; overall 3 if nothing is flagged, 2 if one or two dimensions are 2
and none is 1, 1 otherwise. Scored like faithfulness; details add ``flags_count``.
"""

from __future__ import annotations

from typing import Any

from tasks.judges import JudgeTask, resolve_judge
from tasks.judges.adapters import conversation_input
from tasks.judges.offline.progression import PROGRESSION_DIMENSIONS
from tasks.judges.scoring import score_dimensions
from tasks.metrics.base import MetricInfo, register_metric
from tasks.metrics.context import MetricContext
from tasks.records import MetricScore

INFO = MetricInfo(
    name="conversation_progression",
    category="experience",
    version="v0.2",
    threshold=0.5,
    kind="judge",
    description="Efficient forward movement: no needless calls, re-asks or repetition (1-3)",
)


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    judge = resolve_judge(judges, INFO.name)
    verdict = judge.evaluate(JudgeTask(metric=INFO.name, inputs=conversation_input(ctx)))
    return score_dimensions(
        INFO.name, verdict, PROGRESSION_DIMENSIONS, num_turns=len(ctx.trace), count_flags=True
    )
