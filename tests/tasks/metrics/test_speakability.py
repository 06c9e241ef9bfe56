"""speakability metric (per-turn 0/1)."""

from __future__ import annotations

from tasks.metrics import get_metric
from tasks.metrics.runner import run_metrics
from tests.tasks.metrics.builders import make_record, make_scenario, text_record, turn


def test_clean_text_is_fully_speakable() -> None:
    (result,) = run_metrics(text_record(), make_scenario(), ["speakability"])
    assert (result.score, result.normalized_score, result.judge) == (1.0, 1.0, "offline")
    assert result.version == "v0.2"


def test_markdown_turn_halves_the_score() -> None:
    record = make_record(
        [
            turn(0, "assistant", "Hello! How can I help?"),
            turn(1, "user", "Rebook me."),
            turn(1, "assistant", "Options:\n- **SK12** at noon"),
        ],
        mode="text",
    )
    (result,) = run_metrics(record, make_scenario(), ["speakability"])
    assert result.score == 0.5 and result.details["per_turn_ratings"] == {"0": 1, "1": 0}


def test_not_run_for_speech_to_speech() -> None:
    assert not get_metric("speakability").supports("s2s")
    assert run_metrics(text_record(), make_scenario(), ["speakability"], pipeline="s2s") == []
