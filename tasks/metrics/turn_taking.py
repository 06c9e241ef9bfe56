"""turn_taking (spec 4.4): deterministic timing score from the harness's audio segments.

Each evaluable turn (turn id != 0 with speech on both sides) gets a score in [0, 1]:
a piecewise-linear latency curve for ordinary turns, overlap / interrupt-count /
post-interrupt-latency scores (capped at 0.5) when the agent talked over the caller, a
yield score when the caller barged in, and 0 for turn-end fallback nudges. The main score
is the mean over turns, forced to 0 when the agent left the caller's last turn unanswered.

Arithmetic follows the reference's code, not only its prose: per-turn scores are rounded to 4
decimals before the mean, means are ``statistics.mean`` (exact, so a mean landing on a
rounding boundary rounds as the reference's does), millisecond evidence keeps 3 decimals, an
assistant segment counts as an interrupt segment when it overlaps *one* caller segment by
more than 1 ms, the interruption rates are over the evaluable turns, and when no turn is
scored the score is 0 with no sub-metrics at all (the reference returns before building
them; a 0.0 rate there would be a statement about turns that do not exist). Counts follow
the reference's convention of null when there is nothing to count
(``agent_interruption.num_interruptions`` is null without a measured agent-interrupt turn,
``fallback_nudge.count`` without a nudge). Our own ``backchannel.count`` counts the
caller's backchannels, not the agent's doing, so 0 stays 0 there.

Where evaflow differs from the reference on purpose (each case has a test in
``tests/tasks/metrics/test_turn_taking.py``):

* Text mode: records carry no audio, so there is nothing to time and the metric is skipped
  (the reference scores 0, which would fail every text-mode EVA-X composite for a reason
  that has nothing to do with the agent).
* Our harness ends a call ``agent_timeout`` when the agent does not answer a caller turn;
  the reference knows only ``inactivity_timeout`` (with the caller speaking last) for that
  situation and would score such a call on its earlier turns (1.0 for a call that was
  perfect until the agent went silent). We force 0 for both (``missed_turn``), which is
  the reference's own rule applied to our name for the same event.
* The caller's speech in a turn ends at the latest end of any of her segments, and the
  agent's previous turn at the latest end of its segments. The reference takes the end of
  the segment that *starts* last, which is the same thing for the sequential segments its
  logs produce, but with nested segments (an earlier segment ending last) it measures the
  latency from inside the caller's speech (reference 0.0, evaflow 1.0 for an agent
  answering 0.5 s after the caller really stopped).
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from tasks.metrics.base import MetricInfo, make_score, register_metric, skipped_score, sub_score
from tasks.metrics.context import MetricContext, Span
from tasks.records import MetricScore

INFO = MetricInfo(
    name="turn_taking",
    category="experience",
    version="v0.2",
    threshold=0.8,
    description="Response timing, interruptions and yielding, scored from audio segments",
)

# Latency curve (ms): score 0 at or below HARD_EARLY, rises to 1 at SWEET_LOW, stays 1 up to
# the sweet-spot high (inclusive) and falls to 0 at the hard-late bound.
HARD_EARLY_MS = -500.0
SWEET_LOW_MS = 500.0
SWEET_HIGH_MS = {False: 2000.0, True: 3000.0}  # keyed by "turn has a tool call"
HARD_LATE_MS = {False: 3500.0, True: 5000.0}
# Latency classes for the rate sub-metrics.
EARLY_MS = 200.0
LATE_MS = {False: 2750.0, True: 4000.0}
# Agent talking over the caller.
AGENT_INTERRUPT_MAX_SCORE = 0.5
OVERLAP_HARD_MS = 2000.0
INTERRUPT_COUNT_HARD = 3
MIN_OVERLAP_MS = 1.0  # an assistant segment "overlaps" when it shares more than this
# Caller barging in: how long the agent kept talking.
YIELD_HARD_MS = 2000.0
# An agent ``clear`` this soon after a caller backchannel ends was caused by it.
BACKCHANNEL_STOP_WINDOW_S = 1.0


def latency_score(x_ms: float, has_tool_call: bool) -> float:
    """The piecewise-linear latency curve L(x, tool)."""
    late = HARD_LATE_MS[has_tool_call]
    high = SWEET_HIGH_MS[has_tool_call]
    if x_ms <= HARD_EARLY_MS or x_ms >= late:
        return 0.0
    if x_ms < SWEET_LOW_MS:
        return (x_ms - HARD_EARLY_MS) / (SWEET_LOW_MS - HARD_EARLY_MS)
    if x_ms <= high:
        return 1.0
    return (late - x_ms) / (late - high)


def overlap_ms(user: list[Span], agent: list[Span]) -> float:
    total = 0.0
    for us, ue in user:
        for a_s, a_e in agent:
            total += max(0.0, min(ue, a_e) - max(us, a_s))
    return total * 1000.0


def overlap_score(overlap: float) -> float:
    return max(0.0, AGENT_INTERRUPT_MAX_SCORE * (1.0 - overlap / OVERLAP_HARD_MS))


def interrupt_count_score(n: int) -> float:
    return max(
        0.0,
        AGENT_INTERRUPT_MAX_SCORE * (1.0 - (n - 1) / (INTERRUPT_COUNT_HARD - 1)),
    )


def yield_score(yield_ms: float) -> float:
    return max(0.0, 1.0 - yield_ms / YIELD_HARD_MS)


def count_interrupt_segments(user: list[Span], agent: list[Span]) -> int:
    """Assistant segments overlapping some single caller segment by more than 1 ms."""
    return sum(1 for seg in agent if any(overlap_ms([u], [seg]) > MIN_OVERLAP_MS for u in user))


def speech_end(segments: list[Span]) -> float:
    """When a speaker stopped: the latest end of her segments (see the module docstring)."""
    return max(end for _, end in segments)


def post_interrupt_latency_ms(user: list[Span], agent: list[Span]) -> float | None:
    """Gap between the caller's last speech end and the agent's next start, if defined."""
    u_end = speech_end(user)
    if any(start <= u_end < end for start, end in agent):
        return None
    after = [start for start, _ in agent if start > u_end]
    if not after:
        return None
    return (min(after) - u_end) * 1000.0


def agent_interrupt_evidence(user: list[Span], agent: list[Span], tool: bool) -> dict[str, Any]:
    """Evidence and score (key ``score``) for a turn where the agent talked over the caller."""
    ov = overlap_ms(user, agent)
    ev: dict[str, Any] = {"overlap_ms": round(ov, 3), "overlap_score": round(overlap_score(ov), 4)}
    parts = [overlap_score(ov)]
    n = count_interrupt_segments(user, agent)
    ev["n_interrupt_segments"] = n
    if n >= 1:
        ev["interrupt_count_score"] = round(interrupt_count_score(n), 4)
        parts.append(interrupt_count_score(n))
    post = post_interrupt_latency_ms(user, agent)
    if post is not None:
        ev["post_interrupt_latency_ms"] = round(post, 3)
        ev["post_interrupt_latency_score"] = round(latency_score(post, tool), 4)
        parts.append(latency_score(post, tool))
    ev["score"] = min(parts)
    return ev


def yield_evidence(ctx: MetricContext, turn: int) -> dict[str, Any] | None:
    """Yield time when the caller barged into the agent's previous turn (None if unknown);
    key ``score`` is the unrounded yield score."""
    previous = ctx.audio_segments_assistant.get(turn - 1) or []
    user = ctx.audio_segments_user.get(turn) or []
    if not previous or not user:
        return None
    y_ms = max(0.0, (speech_end(previous) - user[0][0]) * 1000.0)
    score = yield_score(y_ms)
    return {"yield_ms": round(y_ms, 3), "yield_score": round(score, 4), "score": score}


def score_turn(ctx: MetricContext, turn: int) -> tuple[float, str, dict[str, Any]]:
    """(score, reason, evidence) for one evaluable turn."""
    tool = turn in ctx.tool_call_turn_ids
    ev: dict[str, Any] = {"has_tool_call": tool}
    if turn in ctx.fallback_turn_ids:
        return 0.0, "turn_end_fallback", ev
    user = ctx.audio_segments_user.get(turn) or []
    agent = ctx.audio_segments_assistant.get(turn) or []
    agent_part = (
        agent_interrupt_evidence(user, agent, tool)
        if turn in ctx.assistant_interrupted_turns
        else None
    )
    yield_part = yield_evidence(ctx, turn) if turn in ctx.user_interrupted_turns else None
    # Scores are combined unrounded and rounded once (the evidence shows rounded parts).
    if agent_part is not None:
        agent_score = agent_part.pop("score")
        ev.update(agent_part)
        if yield_part is not None:
            user_score = yield_part.pop("score")
            ev.update(yield_part)
            return round(min(agent_score, user_score), 4), "dual_interrupt", ev
        return round(agent_score, 4), "agent_interrupt", ev
    if yield_part is not None:
        user_score = yield_part.pop("score")
        ev.update(yield_part)
        return round(user_score, 4), "user_interrupt", ev
    latency = ctx.latency_assistant_turns[turn] * 1000.0
    ev["latency_ms"] = round(latency, 3)
    ev["latency_score"] = round(latency_score(latency, tool), 4)
    return ev["latency_score"], "latency", ev


def evaluable_turns(ctx: MetricContext) -> list[int]:
    turns = set(ctx.audio_segments_user) & set(ctx.audio_segments_assistant)
    return sorted(
        t
        for t in turns
        if t != 0 and ctx.audio_segments_user[t] and ctx.audio_segments_assistant[t]
    )


def percentile(sorted_values: list[float], p: float) -> float:
    n = len(sorted_values)
    return sorted_values[min(n - 1, math.floor(p * n))]


def latency_sub_metrics(ctx: MetricContext, turns: list[int]) -> dict[str, MetricScore]:
    pairs = [
        (ctx.latency_assistant_turns[t] * 1000.0, t in ctx.tool_call_turn_ids)
        for t in turns
        if t in ctx.latency_assistant_turns
    ]
    if not pairs:
        return {}
    values = sorted(v for v, _ in pairs)
    n = len(pairs)
    early = sum(1 for v, _ in pairs if v < EARLY_MS)
    late = sum(1 for v, tool in pairs if v >= LATE_MS[tool])
    mean = statistics.mean(v for v, _ in pairs)
    return {
        "mean_latency_ms": sub_score(INFO, "mean_latency_ms", round(mean, 3), None),
        "p50_latency_ms": sub_score(
            INFO, "p50_latency_ms", round(percentile(values, 0.5), 3), None
        ),
        "p90_latency_ms": sub_score(
            INFO, "p90_latency_ms", round(percentile(values, 0.9), 3), None
        ),
        "early_rate": sub_score(INFO, "early_rate", round(early / n, 4)),
        "late_rate": sub_score(INFO, "late_rate", round(late / n, 4)),
        "on_time_rate": sub_score(INFO, "on_time_rate", round((n - early - late) / n, 4)),
    }


def _mean_of(evidence: list[dict[str, Any]], key: str, digits: int) -> float | None:
    values = [e[key] for e in evidence if key in e]
    return round(statistics.mean(values), digits) if values else None


def interruption_sub_metrics(
    ctx: MetricContext, evidence: dict[int, dict[str, Any]], turns: list[int]
) -> dict[str, MetricScore]:
    """Interruption rates over the evaluable ``turns`` and means of their evidence (none
    without evaluable turns, as the reference)."""
    if not turns:
        return {}
    agent_ev = [evidence[t] for t in turns if t in ctx.assistant_interrupted_turns]
    user_ev = [evidence[t] for t in turns if t in ctx.user_interrupted_turns]
    counted = [e["n_interrupt_segments"] for e in agent_ev if "n_interrupt_segments" in e]
    subs = {
        "agent_interruption.rate": sub_score(
            INFO, "agent_interruption.rate", round(len(agent_ev) / len(turns), 4)
        ),
        # Null when no agent-interrupt turn was measured; 0.0 when measured and none found.
        "agent_interruption.num_interruptions": sub_score(
            INFO,
            "agent_interruption.num_interruptions",
            float(sum(counted)) if counted else None,
            None,
        ),
        "user_interruption.rate": sub_score(
            INFO, "user_interruption.rate", round(len(user_ev) / len(turns), 4)
        ),
    }
    optional = [
        ("agent_interruption", agent_ev, "overlap_ms", "mean_overlap_ms", None),
        ("agent_interruption", agent_ev, "overlap_score", "mean_overlap_score", "same"),
        ("agent_interruption", agent_ev, "interrupt_count_score", "mean_count_score", "same"),
        (
            "agent_interruption",
            agent_ev,
            "post_interrupt_latency_ms",
            "mean_post_interrupt_latency_ms",
            None,
        ),
        (
            "agent_interruption",
            agent_ev,
            "post_interrupt_latency_score",
            "mean_post_interrupt_latency_score",
            "same",
        ),
        ("user_interruption", user_ev, "yield_ms", "mean_yield_ms", None),
        ("user_interruption", user_ev, "yield_score", "mean_yield_score", "same"),
    ]
    for group, ev, field, name, norm in optional:
        value = _mean_of(ev, field, 4 if norm else 3)
        if value is not None:
            key = f"{group}.{name}"
            subs[key] = sub_score(INFO, key, value, "same" if norm else None)
    return subs


def fallback_sub_metrics(ctx: MetricContext) -> dict[str, MetricScore]:
    n_keys = len(ctx.audio_segments_assistant)
    if n_keys == 0:
        return {}
    count = len(ctx.fallback_turn_ids)
    return {
        "fallback_nudge.rate": sub_score(INFO, "fallback_nudge.rate", round(count / n_keys, 4)),
        "fallback_nudge.count": sub_score(INFO, "fallback_nudge.count", count or None, None),
    }


def backchannel_sub_metrics(ctx: MetricContext) -> dict[str, MetricScore]:
    """The caller's backchannels ("mm-hmm" over the agent; timeline events, never turns)
    and how often the agent stopped for one: a ``clear`` within
    ``BACKCHANNEL_STOP_WINDOW_S`` of its end, before the caller started a turn (a clear after
    that answers the turn), which a good agent does not send."""
    spans = [
        (e.t_s, float(e.data.get("end_s", e.t_s)))
        for e in ctx.record.events
        if e.source == "caller" and e.kind == "backchannel"
    ]
    subs = {"backchannel.count": sub_score(INFO, "backchannel.count", len(spans), None)}
    if spans:
        events = ctx.record.events
        clears = [e.t_s for e in events if e.source == "agent" and e.kind == "clear"]
        turns = [e.t_s for e in events if e.source == "caller" and e.kind == "speech_start"]

        def stopped_for(start: float, end: float) -> bool:
            until = min([t for t in turns if t >= start] + [end + BACKCHANNEL_STOP_WINDOW_S])
            return any(start <= c <= until for c in clears)

        stopped = sum(stopped_for(start, end) for start, end in spans)
        key = "backchannel.agent_stopped_rate"
        subs[key] = sub_score(INFO, key, round(stopped / len(spans), 4))
    return subs


def pretoolspeech_rate(trace: list[dict[str, Any]]) -> float | None:
    """Share of tool-call groups the agent led into with speech since the previous group.

    A group is a maximal run of consecutive tool_call / tool_response entries; a caller
    utterance resets the lead-in.
    """
    groups = led_in = 0
    spoke = in_group = False
    for entry in trace:
        if entry.get("type") in ("tool_call", "tool_response"):
            if not in_group:
                groups += 1
                led_in += int(spoke)
                in_group, spoke = True, False
            continue
        in_group = False
        if entry.get("role") == "assistant" and str(entry.get("content", "")).strip():
            spoke = True
        elif entry.get("role") == "user":
            spoke = False
    return round(led_in / groups, 4) if groups else None


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    if not ctx.has_audio:
        return skipped_score(INFO, "no audio segments (text mode): nothing to time")
    turns = evaluable_turns(ctx)
    scored = sorted(set(turns) | {t for t in ctx.fallback_turn_ids if t != 0})
    per_score: dict[int, float] = {}
    per_reason: dict[int, str] = {}
    per_evidence: dict[int, dict[str, Any]] = {}
    for turn in scored:
        per_score[turn], per_reason[turn], per_evidence[turn] = score_turn(ctx, turn)
    missed = ctx.agent_timeout_on_user_turn
    all_keys = set(ctx.audio_segments_user) | set(ctx.audio_segments_assistant)
    details = {
        "per_turn_score": {str(k): v for k, v in per_score.items()},
        "per_turn_reason": {str(k): v for k, v in per_reason.items()},
        "per_turn_evidence": {str(k): v for k, v in per_evidence.items()},
        "num_turns": max(all_keys) if all_keys else 0,
        "num_evaluated": len(per_score),
        "missed_turn": missed,
    }
    if not per_score:  # as the reference: no turn, so no rates or means to report
        return make_score(INFO, 0.0, details=details)
    mean = round(statistics.mean(per_score.values()), 4)
    subs = latency_sub_metrics(ctx, turns)
    subs.update(interruption_sub_metrics(ctx, per_evidence, turns))
    subs.update(fallback_sub_metrics(ctx))
    subs.update(backchannel_sub_metrics(ctx))
    rate = pretoolspeech_rate(ctx.trace)
    if rate is not None:
        subs["pretoolspeech_rate"] = sub_score(INFO, "pretoolspeech_rate", rate)
    return make_score(INFO, 0.0 if missed else mean, details=details, sub_metrics=subs)
