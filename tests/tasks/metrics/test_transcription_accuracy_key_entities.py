"""transcription_accuracy_key_entities metric: unit rules, N/A units and sub-metrics."""

from __future__ import annotations

import json

import pytest

from tasks.metrics.runner import run_metrics
from tests.tasks.judges.fakes import CannedJudge
from tests.tasks.metrics.builders import (
    agent_timeout_record,
    audio_record,
    make_scenario,
    text_record,
)

NAME = "transcription_accuracy_key_entities"


def score(record=None, judges=None, pipeline="cascade"):  # type: ignore[no-untyped-def]
    (result,) = run_metrics(record or text_record(), make_scenario(), [NAME], judges, pipeline)
    return result


def test_text_mode_keeps_every_entity() -> None:
    result = score()
    assert (result.score, result.normalized_score, result.judge) == (1.0, 1.0, "offline")
    assert result.version == "v0.4"


def test_misheard_name_in_audio_mode() -> None:
    result = score(audio_record())  # "Doe" was heard as "dough", the code as spelled letters
    assert result.normalized_score == pytest.approx(0.5)
    assert result.sub_metrics["code_accuracy"].score == 1.0
    assert result.sub_metrics["name_accuracy"].score == 0.0


def test_audio_native_pipelines_check_tool_calls() -> None:
    result = score(audio_record(), pipeline="s2s")
    assert result.details["unit"] == "tool_call_id" and result.score == 1.0
    assert score(agent_timeout_record(), pipeline="audio_llm").skipped  # no tool calls


def test_units_without_entities_are_not_applicable() -> None:
    answer = [
        {
            "turn_id": 1,
            "entities": [
                {"type": "code", "value": "ABC123", "correct": True},
                {"type": "name", "value": "Doe", "correct": False},
                {"type": "name", "value": "X", "correct": False, "skipped": True},
            ],
        },
        {"turn_id": 2, "entities": []},
    ]
    result = score(judges=CannedJudge(json.dumps({"turns": answer})))
    assert result.score == 0.5 and result.details["num_not_applicable"] == 1
    assert result.details["per_turn_ratings"] == {"1": 0.5, "2": -1.0}
    assert result.sub_metrics["name_accuracy"].details["count"] == 1


def test_nothing_applicable_is_skipped_and_garbage_is_an_error() -> None:
    empty = score(judges=CannedJudge(json.dumps([{"turn_id": 1, "entities": []}])))
    assert empty.skipped and empty.score is None and empty.error is None
    assert score(judges=CannedJudge("no json")).error == "Failed to parse judge response"
