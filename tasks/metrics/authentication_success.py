"""authentication_success (spec 4.6): the final session holds every expected session key."""

from __future__ import annotations

from collections import Counter
from typing import Any

from scenarios.completion import check_auth
from tasks.metrics.base import MetricInfo, make_score, register_metric, skipped_score, sub_score
from tasks.metrics.context import MetricContext
from tasks.records import MetricScore

INFO = MetricInfo(
    name="authentication_success",
    category="diagnostic",
    version="v0.1",
    exclude_from_pass_at_k=True,
    description="Expected session keys (auth state) match the final session",
)


def auth_call_counts(ctx: MetricContext) -> Counter[str]:
    """Calls per auth-type tool (tool_type 'auth' in the agent config)."""
    auth_tools = {t.id for t in ctx.agent.tools if t.tool_type == "auth"}
    return Counter(c.tool_name for c in ctx.tool_calls if c.tool_name in auth_tools)


def _auth_sub_metrics(counts: Counter[str], success: bool) -> dict[str, MetricScore]:
    total = sum(counts.values())
    if not success:
        return {
            "num_auth_calls_on_failure": sub_score(INFO, "num_auth_calls_on_failure", total, None)
        }
    if not counts:
        return {}
    first_try = 1.0 if all(n == 1 for n in counts.values()) else 0.0
    return {
        "auth_first_try_success": sub_score(INFO, "auth_first_try_success", first_try),
        "num_auth_calls": sub_score(
            INFO, "num_auth_calls", round(total / len(counts), 4), None, {"per_tool": dict(counts)}
        ),
        "authentication_success_rate": sub_score(
            INFO, "authentication_success_rate", round(len(counts) / total, 4)
        ),
    }


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    expected = ctx.expected_db.get("session") or {}
    if not expected:
        return skipped_score(INFO, "scenario expects no authenticated session")
    actual = ctx.final_db.get("session") or {}
    mismatches = check_auth(ctx.expected_db, ctx.final_db)
    success = not mismatches
    details = {
        "expected_session": expected,
        "actual_session": actual,
        "mismatches": {k: m.model_dump(mode="json") for k, m in mismatches.items()},
    }
    subs = _auth_sub_metrics(auth_call_counts(ctx), success)
    return make_score(INFO, 1.0 if success else 0.0, details=details, sub_metrics=subs)
