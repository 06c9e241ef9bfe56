"""user_speech_fidelity metric: clean caller track, per-turn 1-3."""

from __future__ import annotations

import json
from pathlib import Path

from tasks.judges import JudgeConfig
from tasks.metrics.runner import run_metrics
from tests.tasks.judges.fakes import CannedJudge, scripted_transcriber, with_tracks
from tests.tasks.metrics.builders import audio_record, make_scenario, text_record

NAME = "user_speech_fidelity"


def score(record, judges=None):  # type: ignore[no-untyped-def]
    (result,) = run_metrics(record, make_scenario(), [NAME], judges)
    return result


def test_text_mode_is_skipped() -> None:
    assert score(text_record()).skipped


def test_offline_judge_per_turn_ratings(tmp_path: Path) -> None:
    record = with_tracks(audio_record(), tmp_path)
    heard = scripted_transcriber("my code is a b c one two three last name doe", "thanks goodbye")
    result = score(record, JudgeConfig(name="offline", params={"transcriber": heard}))
    assert result.details["per_turn_ratings"] == {"1": 3, "2": 3}
    assert (result.score, result.normalized_score) == (3.0, 1.0)
    wrong = scripted_transcriber("my code is a b d one two three last name doe", "thanks goodbye")
    failed = score(record, JudgeConfig(name="offline", params={"transcriber": wrong}))
    assert failed.details["per_turn_ratings"]["1"] == 1  # an entity error fails validation


def test_llm_style_answer_is_scored(tmp_path: Path) -> None:
    record = with_tracks(audio_record(), tmp_path)
    answer = {"turns": [{"turn_id": 1, "rating": 2}, {"turn_id": 2, "rating": 3}]}
    result = score(record, CannedJudge(json.dumps(answer)))
    assert result.score == 2.5 and result.normalized_score == 0.75
