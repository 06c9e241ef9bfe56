from __future__ import annotations

import pytest

from tasks.metrics.context import build_context
from tasks.metrics.turn_taking import (
    agent_interrupt_evidence,
    interrupt_count_score,
    latency_score,
    overlap_score,
    percentile,
    pretoolspeech_rate,
    yield_score,
)
from tasks.metrics.turn_taking import compute as turn_taking
from tasks.records import TimelineEvent
from tests.tasks.metrics.builders import (
    agent_timeout_record,
    audio_record,
    call,
    make_record,
    make_scenario,
    text_record,
    turn,
)


@pytest.mark.parametrize(
    ("x_ms", "plain", "tool"),
    [
        (-600, 0.0, 0.0),
        (-500, 0.0, 0.0),
        (0, 0.5, 0.5),
        (200, 0.7, 0.7),
        (500, 1.0, 1.0),
        (2000, 1.0, 1.0),
        (2750, 0.5, 1.0),
        (3000, 1 / 3, 1.0),
        (3500, 0.0, 0.75),
        (4000, 0.0, 0.5),
        (5000, 0.0, 0.0),
    ],
)
def test_latency_curve_matches_spec_examples(x_ms: float, plain: float, tool: float) -> None:
    assert latency_score(x_ms, False) == pytest.approx(plain, abs=1e-9)
    assert latency_score(x_ms, True) == pytest.approx(tool, abs=1e-9)


def test_interruption_component_scores() -> None:
    assert overlap_score(0) == 0.5
    assert overlap_score(1000) == 0.25
    assert overlap_score(2500) == 0.0
    assert [interrupt_count_score(n) for n in (1, 2, 3, 4)] == [0.5, 0.25, 0.0, 0.0]
    assert yield_score(600) == pytest.approx(0.7)
    assert yield_score(1000) == pytest.approx(0.5)
    assert yield_score(3000) == 0.0


def test_agent_interrupt_takes_minimum_of_defined_scores() -> None:
    # The agent starts 0.5 s before the caller stops, then answers 1 s after she stops.
    user = [(0.0, 3.0)]
    agent = [(2.5, 2.9), (4.0, 5.0)]
    ev = agent_interrupt_evidence(user, agent, tool=False)
    assert ev["overlap_ms"] == pytest.approx(400.0)
    assert ev["overlap_score"] == pytest.approx(0.5 * (1 - 400 / 2000))
    assert ev["n_interrupt_segments"] == 1
    assert ev["interrupt_count_score"] == 0.5
    assert ev["post_interrupt_latency_ms"] == pytest.approx(1000.0)
    assert ev["post_interrupt_latency_score"] == 1.0
    assert ev["score"] == pytest.approx(0.4)


def test_post_interrupt_latency_skipped_when_agent_spans_user_end() -> None:
    ev = agent_interrupt_evidence([(0.0, 3.0)], [(2.0, 4.0)], tool=False)
    assert "post_interrupt_latency_ms" not in ev
    assert ev["score"] == pytest.approx(min(0.5 * (1 - 1000 / 2000), 0.5))


def test_percentile_uses_floor_index() -> None:
    values = [100.0, 200.0, 300.0, 400.0]
    assert percentile(values, 0.5) == 300.0
    assert percentile(values, 0.9) == 400.0


def _timed_record(
    user_segs: dict[int, list[tuple[float, float]]],
    agent_segs: dict[int, list[tuple[float, float]]],
    **turn_flags: dict[str, bool],
):
    turns = []
    for t in sorted(set(user_segs) | set(agent_segs)):
        if t in user_segs:
            turns.append(
                turn(
                    t,
                    "user",
                    f"user {t}",
                    f"user {t}",
                    user_segs[t],
                    **turn_flags.get(f"user{t}", {}),
                )
            )
        if t in agent_segs:
            turns.append(
                turn(
                    t,
                    "assistant",
                    f"agent {t}",
                    f"agent {t}",
                    agent_segs[t],
                    **turn_flags.get(f"agent{t}", {}),
                )
            )
    return make_record(turns, mode="audio")


def test_plain_latency_turns_score_by_curve() -> None:
    rec = _timed_record(
        {1: [(3.0, 5.0)], 2: [(9.0, 10.0)]}, {0: [(0, 2)], 1: [(5.2, 7.0)], 2: [(13.5, 14.5)]}
    )
    score = turn_taking(build_context(rec, make_scenario()))
    assert score.details["per_turn_score"] == {"1": 0.7, "2": 0.0}
    assert score.details["per_turn_reason"] == {"1": "latency", "2": "latency"}
    assert score.score == pytest.approx(0.35)
    assert score.normalized_score == score.score
    subs = score.sub_metrics
    assert subs["mean_latency_ms"].score == pytest.approx(1850.0)
    assert subs["mean_latency_ms"].normalized_score is None
    assert subs["late_rate"].score == 0.5 and subs["on_time_rate"].score == 0.5
    assert subs["early_rate"].score == 0.0


def test_user_interrupt_scores_yield() -> None:
    # Agent turn 1 runs to 9.0; the caller barges in at 8.4 -> yield 600 ms -> 0.7.
    rec = _timed_record(
        {1: [(2.0, 3.0)], 2: [(8.4, 10.0)]},
        {0: [(0, 1.5)], 1: [(3.5, 9.0)], 2: [(11.0, 12.0)]},
        user2={"interrupts": True},
    )
    ctx = build_context(rec, make_scenario())
    assert ctx.user_interrupted_turns == {2}
    score = turn_taking(ctx)
    assert score.details["per_turn_reason"]["2"] == "user_interrupt"
    assert score.details["per_turn_score"]["2"] == pytest.approx(0.7)
    assert score.sub_metrics["user_interruption.mean_yield_ms"].score == pytest.approx(600.0)


def test_dual_interrupt_takes_minimum() -> None:
    rec = _timed_record(
        {1: [(2.0, 3.0)], 2: [(8.0, 10.0)]},
        {0: [(0, 1.5)], 1: [(3.5, 9.0)], 2: [(9.5, 11.0)]},
        user2={"interrupts": True},
        agent2={"interrupts": True},
    )
    score = turn_taking(build_context(rec, make_scenario()))
    ev = score.details["per_turn_evidence"]["2"]
    assert score.details["per_turn_reason"]["2"] == "dual_interrupt"
    assert ev["yield_score"] == pytest.approx(0.5)
    assert score.details["per_turn_score"]["2"] == pytest.approx(
        min(ev["yield_score"], ev["overlap_score"])
    )
    assert score.sub_metrics["agent_interruption.rate"].score == 0.5


def test_fallback_turn_scores_zero() -> None:
    rec = _timed_record({1: [(2.0, 3.0)]}, {0: [(0, 1.5)], 1: [(3.6, 5.0)]})
    rec = rec.model_copy(
        update={
            "events": [
                TimelineEvent(t_s=3.5, source="agent", kind="turn_fallback", data={"turn_id": 1})
            ]
        }
    )
    score = turn_taking(build_context(rec, make_scenario()))
    assert score.details["per_turn_reason"] == {"1": "turn_end_fallback"}
    assert score.score == 0.0
    assert score.sub_metrics["fallback_nudge.count"].score == 1


def test_tool_turn_uses_wider_sweet_spot() -> None:
    rec = audio_record()
    ctx = build_context(rec, make_scenario())
    assert ctx.tool_call_turn_ids == {1}
    score = turn_taking(ctx)
    assert score.details["per_turn_evidence"]["1"]["has_tool_call"] is True
    assert score.score == 1.0
    assert score.passed is True
    assert score.sub_metrics["pretoolspeech_rate"].score == 1.0


def test_missed_turn_forces_zero() -> None:
    score = turn_taking(build_context(agent_timeout_record(), make_scenario()))
    assert score.details["missed_turn"] is True
    assert score.score == 0.0 and score.error is None


def test_text_mode_is_skipped() -> None:
    score = turn_taking(build_context(text_record(), make_scenario()))
    assert score.skipped and score.score is None and score.passed is None


def test_pretoolspeech_groups() -> None:
    trace = [
        {"role": "user", "content": "hi", "turn_id": 1},
        {"type": "tool_call", "turn_id": 1},
        {"type": "tool_response", "turn_id": 1},
        {"role": "assistant", "content": "one moment", "turn_id": 1},
        {"type": "tool_call", "turn_id": 1},
        {"type": "tool_response", "turn_id": 1},
    ]
    assert pretoolspeech_rate(trace) == 0.5
    assert pretoolspeech_rate(trace[:1]) is None


def test_turn_zero_is_not_evaluated() -> None:
    rec = _timed_record({}, {0: [(0.0, 1.0)]})
    rec = rec.model_copy(
        update={"turns": [*rec.turns, turn(1, "user", "hi", "hi")], "tool_calls": [call(0, 1, "x")]}
    )
    score = turn_taking(build_context(rec, make_scenario()))
    assert score.details["num_evaluated"] == 0
    assert score.score == 0.0


def _backchannel(t: float, end: float) -> TimelineEvent:
    return TimelineEvent(t_s=t, source="caller", kind="backchannel", data={"end_s": end})


def test_backchannels_are_counted_and_a_clear_is_blamed_only_before_the_next_turn() -> None:
    rec = _timed_record(
        {1: [(2.0, 3.0)], 2: [(12.0, 14.0)]},
        {0: [(0, 1.5)], 1: [(3.6, 12.5)], 2: [(14.8, 16.0)]},
    )
    rec.events = [
        _backchannel(5.0, 5.5),
        TimelineEvent(t_s=5.9, source="agent", kind="clear"),  # stopped for "mm-hmm"
        _backchannel(11.5, 11.9),
        TimelineEvent(t_s=12.0, source="caller", kind="speech_start"),
        TimelineEvent(t_s=12.6, source="agent", kind="clear"),  # yields to the turn instead
    ]
    subs = turn_taking(build_context(rec, make_scenario())).sub_metrics
    assert subs["backchannel.count"].score == 2
    assert subs["backchannel.agent_stopped_rate"].score == 0.5
    rec.events = []
    subs = turn_taking(build_context(rec, make_scenario())).sub_metrics
    assert subs["backchannel.count"].score == 0 and "backchannel.agent_stopped_rate" not in subs
