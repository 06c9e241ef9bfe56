"""task_completion (spec 3): the final DB must hash like the expected DB, with auth intact."""

from __future__ import annotations

from typing import Any

from scenarios.completion import CompletionResult, check_task_completion
from tasks.metrics.base import MetricInfo, error_score, make_score, register_metric
from tasks.metrics.context import MetricContext
from tasks.records import MetricScore

INFO = MetricInfo(
    name="task_completion",
    category="accuracy",
    version="v0.1",
    threshold=1.0,
    description="Final scenario DB equals the expected DB (hash) and the session matches",
)


def completion_check(ctx: MetricContext) -> CompletionResult:
    """The one place that decides completion, so the rule can be swapped in one line."""
    return check_task_completion(ctx.expected_db, ctx.final_db, ctx.record.final_db_hash or None)


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    if not ctx.expected_db:
        return error_score(INFO, f"scenario {ctx.scenario.key} has no expected DB")
    if not ctx.final_db and not ctx.record.final_db_hash:
        return error_score(INFO, "attempt has no final DB (neither final_db nor final_db_hash)")
    result = completion_check(ctx)
    details = result.model_dump(mode="json", exclude_none=True)
    return make_score(INFO, result.score, details=details)
