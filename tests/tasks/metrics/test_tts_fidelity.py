"""tts_fidelity metric: opt-in, binary per turn with failure-mode rates."""

from __future__ import annotations

import json
from pathlib import Path

from tasks.metrics import DEFAULT_METRICS, get_metric
from tasks.metrics.runner import run_metrics
from tests.tasks.judges.fakes import CannedJudge, with_tracks
from tests.tasks.metrics.builders import audio_record, make_scenario, text_record

NAME = "tts_fidelity"


def test_opt_in_and_pipelines() -> None:
    info = get_metric(NAME).info
    assert NAME not in DEFAULT_METRICS and info.exclude_from_pass_at_k
    assert info.pipelines == ("cascade", "audio_llm")
    (skipped,) = run_metrics(text_record(), make_scenario(), [NAME])
    assert skipped.skipped


def test_failure_modes_cleared_on_passing_turns(tmp_path: Path) -> None:
    answer = {
        "turns": [
            {"turn_id": 0, "rating": 1, "failure_modes": ["truncation"]},
            {"turn_id": 1, "rating": 0, "failure_modes": ["entity_error", "truncation"]},
            {"turn_id": 2, "rating": 1, "failure_modes": []},
        ]
    }
    (result,) = run_metrics(
        with_tracks(audio_record(), tmp_path),
        make_scenario(),
        [NAME],
        CannedJudge(json.dumps(answer)),
    )
    assert result.score == 0.667 and result.version == "v0.3"
    assert result.details["per_turn_failure_modes"]["0"] == []
    assert result.sub_metrics["truncation_rate"].score == 1 / 3
    assert result.sub_metrics["wrong_language_rate"].score == 0.0
