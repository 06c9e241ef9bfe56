"""response_speed (spec 4.6): mean seconds from the caller's last speech to the agent's reply.

Lower is better and there is no normalized score. Latencies come from the harness's audio
segments (or its per-turn ``latency_s`` where a turn has no segments). The reference's
``llm_latency`` / ``stt_latency`` / ``tts_latency`` sub-metrics come from pipeline logs we do
not have for an agent under test, so they are not reported.
"""

from __future__ import annotations

from typing import Any

from tasks.metrics.base import MetricInfo, make_score, register_metric, skipped_score, sub_score
from tasks.metrics.context import MetricContext
from tasks.records import MetricScore

INFO = MetricInfo(
    name="response_speed",
    category="diagnostic",
    version="v0.2",
    exclude_from_pass_at_k=True,
    higher_is_better=False,
    description="Mean agent response latency in seconds (lower is better)",
)

MIN_VALID_S = 0.0  # exclusive: a reply that starts before the caller stops is not a latency
MAX_VALID_S = 1000.0  # exclusive: anything longer is a measurement fault


def speed_stats(speeds: dict[int, float]) -> dict[str, Any]:
    values = list(speeds.values())
    return {
        "mean_speed_seconds": round(sum(values) / len(values), 3),
        "max_speed_seconds": round(max(values), 3),
        "num_turns": len(values),
        "per_turn_speeds": {str(k): round(v, 3) for k, v in speeds.items()},
    }


def _split_sub_metrics(speeds: dict[int, float], tool_turns: set[int]) -> dict[str, MetricScore]:
    subs: dict[str, MetricScore] = {}
    parts = {
        "with_tool_calls": {k: v for k, v in speeds.items() if k in tool_turns},
        "no_tool_calls": {k: v for k, v in speeds.items() if k not in tool_turns},
    }
    for key, part in parts.items():
        if part:
            stats = speed_stats(part)
            subs[key] = sub_score(INFO, key, stats["mean_speed_seconds"], None, stats)
    return subs


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    latencies = ctx.latency_assistant_turns
    if not latencies:
        return skipped_score(INFO, "no measured response latencies")
    speeds = {k: v for k, v in latencies.items() if MIN_VALID_S < v < MAX_VALID_S}
    dropped = {str(k): v for k, v in latencies.items() if k not in speeds}
    if not speeds:
        return skipped_score(INFO, "no latency within (0, 1000) s", {"dropped": dropped})
    details = speed_stats(speeds)
    if dropped:
        details["dropped_latencies"] = dropped
    subs = _split_sub_metrics(speeds, ctx.tool_call_turn_ids)
    return make_score(INFO, details["mean_speed_seconds"], None, details=details, sub_metrics=subs)
