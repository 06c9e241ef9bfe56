"""conversation_completed_on_time (spec 4.6): 0 when the call hit the time limit."""

from __future__ import annotations

from typing import Any

from tasks.metrics.base import MetricInfo, make_score, register_metric
from tasks.metrics.context import MetricContext
from tasks.records import MetricScore

INFO = MetricInfo(
    name="conversation_completed_on_time",
    category="diagnostic",
    version="v0.1",
    exclude_from_pass_at_k=True,
    description="0 if the conversation hit the maximum duration (inactivity is not a failure)",
)

# Our ``max_duration`` is the reference's ``time_limit_exceeded``.
TIME_LIMIT_REASONS = ("max_duration",)


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    late = ctx.end_reason in TIME_LIMIT_REASONS
    details = {"end_reason": ctx.end_reason, "duration_s": ctx.record.duration_s}
    return make_score(INFO, 0.0 if late else 1.0, details=details)
