"""conversation_correctly_finished (spec 4.6): 0 when the agent left the caller waiting."""

from __future__ import annotations

from typing import Any

from tasks.metrics.base import MetricInfo, make_score, register_metric
from tasks.metrics.context import MetricContext
from tasks.records import MetricScore

INFO = MetricInfo(
    name="conversation_correctly_finished",
    category="diagnostic",
    version="v0.1",
    exclude_from_pass_at_k=True,
    description="0 if the call ended with the agent failing to answer the caller's turn",
)


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    missed = ctx.agent_timeout_on_user_turn
    explanation = (
        "the agent did not answer the caller's last turn before the call timed out"
        if missed
        else "the conversation did not end on an unanswered caller turn"
    )
    details = {
        "end_reason": ctx.end_reason,
        "last_audio_speaker": ctx.last_audio_speaker,
        "explanation": explanation,
    }
    return make_score(INFO, 0.0 if missed else 1.0, details=details)
