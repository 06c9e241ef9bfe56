"""agent_speech_fidelity metric: audio, entity turns, skips and errors."""

from __future__ import annotations

import json
from pathlib import Path

from tasks.judges import JudgeConfig
from tasks.metrics import get_metric
from tasks.metrics.context import build_context
from tasks.metrics.runner import run_metrics
from tests.tasks.judges.fakes import CannedJudge, scripted_transcriber, with_tracks
from tests.tasks.metrics.builders import audio_record, make_record, make_scenario, text_record, turn

NAME = "agent_speech_fidelity"


def score(record, judges=None):  # type: ignore[no-untyped-def]
    (result,) = run_metrics(record, make_scenario(), [NAME], judges)
    return result


def test_text_mode_is_skipped() -> None:
    result = score(text_record())
    assert result.skipped and result.error is None and result.score is None


def test_offline_judge_recognises_the_agent_track(tmp_path: Path) -> None:
    record = with_tracks(audio_record(), tmp_path)
    heard = scripted_transcriber(
        "hello how can i help you today", "your flight is rebooked", "goodbye"
    )
    judge = JudgeConfig(name="offline", params={"transcriber": heard})
    result = score(record, judge)
    # No assistant turn carries an entity: nothing to rate, so skipped without error.
    assert result.skipped and result.error is None
    assert result.details["num_skipped_no_entities"] == 3


def test_entity_turns_are_rated_and_others_excluded(tmp_path: Path) -> None:
    record = with_tracks(audio_record(), tmp_path)
    answer = {
        "turns": [
            {"turn_id": 0, "has_entities": False, "rating": 1},
            {"turn_id": 1, "has_entities": True, "rating": 0, "language": "en"},
            {"turn_id": 2, "has_entities": True, "rating": 1},
        ]
    }
    result = score(record, CannedJudge(json.dumps(answer)))
    assert (result.score, result.normalized_score, result.passed) == (0.5, 0.5, False)
    assert result.details["num_evaluated"] == 2 and result.details["num_skipped_no_entities"] == 1
    assert result.threshold == 0.95 and result.version == "v0.4"


def test_no_assistant_turn_in_the_trace_is_an_error() -> None:
    record = make_record([turn(1, "user", "Hello?")], mode="audio")
    ctx = build_context(record, make_scenario())
    result = get_metric(NAME).compute(ctx, None)
    assert result.error and result.score == 0.0
