"""conversation_valid_end (spec 4.5): the validation gate — did the call end properly?

Our equivalent of the reference's "last simulator event is connection_state goodbye": the
caller hung up with end_call (``caller_ended``) and the end reason is ``goodbye``. A
``transfer`` end where the caller hung up also counts: the reference's simulators end
transfers through end_call, which it records as goodbye (spec 12.26). An agent that left
the caller waiting (agent timeout on the user turn) is a valid end too: the conversation is
a faithful record of the agent failing, not a broken simulation. So is an agent that hung
up itself (it sent ``end_call``, after a transfer or not): the reference's agents cannot
hang up, but its rule is that only the simulator's faults are regenerated, and an agent
ending its own call early is the agent's doing, scored against it.
"""

from __future__ import annotations

from typing import Any

from tasks.metrics.base import MetricInfo, error_score, make_score, register_metric
from tasks.metrics.context import MetricContext
from tasks.records import MetricScore

INFO = MetricInfo(
    name="conversation_valid_end",
    category="validation",
    version="v0.1",
    exclude_from_default=True,
    description="The caller ended the call with goodbye, or the agent timed out on its turn",
)

CALLER_END_REASONS = ("goodbye", "transfer")


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    record = ctx.record
    if record.status == "infra_error" or record.end_reason == "harness_error":
        return error_score(
            INFO,
            f"attempt ended in a harness error: {record.error or 'no detail'}",
            {"end_reason": record.end_reason, "status": record.status},
        )
    if not record.turns and not record.events:
        return error_score(INFO, "attempt has no turns and no events: nothing to check")
    if ctx.agent_timeout_on_user_turn:
        return make_score(
            INFO, 1.0, details={"reason": "agent_timeout_on_user_turn", "ended_properly": True}
        )
    agent_ended = record.end_reason in CALLER_END_REASONS and any(
        e.source == "agent" and e.kind == "end_call" for e in record.events
    )
    if agent_ended and not record.caller_ended:
        return make_score(
            INFO,
            1.0,
            details={"reason": "agent_ended_call", "ended_properly": True, "caller_ended": False},
        )
    ended = record.caller_ended and record.end_reason in CALLER_END_REASONS
    details: dict[str, Any] = {
        "ended_properly": ended,
        "end_reason": record.end_reason,
        "caller_ended": record.caller_ended,
    }
    if not ended:
        details["reason"] = f"call ended with {record.end_reason!r}" + (
            "" if record.caller_ended else " without the caller hanging up"
        )
    return make_score(INFO, 1.0 if ended else 0.0, details=details)
