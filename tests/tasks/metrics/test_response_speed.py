from __future__ import annotations

import pytest

from tasks.metrics.context import build_context
from tasks.metrics.response_speed import compute as response_speed
from tests.tasks.metrics.builders import audio_record, make_record, make_scenario, text_record, turn


def test_mean_and_tool_split() -> None:
    score = response_speed(build_context(audio_record(), make_scenario()))
    assert score.score == pytest.approx(0.9) and score.normalized_score is None
    assert score.passed is None
    assert score.details["per_turn_speeds"] == {"1": 0.8, "2": 1.0}
    assert score.sub_metrics["with_tool_calls"].score == pytest.approx(0.8)
    assert score.sub_metrics["no_tool_calls"].score == pytest.approx(1.0)


def test_out_of_range_latencies_are_dropped() -> None:
    turns = [
        turn(1, "user", "a", "a", [(0.0, 2.0)]),
        turn(1, "assistant", "b", "b", [(1.5, 3.0)]),  # started early: negative latency
        turn(2, "user", "c", "c", [(4.0, 5.0)]),
        turn(2, "assistant", "d", "d", [(7.0, 8.0)]),
    ]
    score = response_speed(build_context(make_record(turns, mode="audio"), make_scenario()))
    assert score.score == pytest.approx(2.0)
    assert score.details["dropped_latencies"] == {"1": pytest.approx(-0.5)}


def test_harness_latency_used_without_segments_and_skip_without_any() -> None:
    assert response_speed(build_context(text_record(), make_scenario())).skipped
    record = text_record()
    record.turns[2].latency_s = 1.25
    assert response_speed(build_context(record, make_scenario())).score == 1.25
