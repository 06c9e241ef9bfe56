"""user_behavioral_fidelity metric (validation gate, 0/1)."""

from __future__ import annotations

import json

import pytest

from tasks.metrics import get_metric
from tasks.metrics.runner import run_metrics
from tests.tasks.judges.fakes import CannedJudge
from tests.tasks.metrics.builders import (
    agent_timeout_record,
    audio_record,
    make_scenario,
    text_record,
)

NAME = "user_behavioral_fidelity"


def score(record=None, judges=None):  # type: ignore[no-untyped-def]
    (result,) = run_metrics(record or text_record(), make_scenario(), [NAME], judges)
    return result


@pytest.mark.parametrize("make", [text_record, audio_record, agent_timeout_record])
def test_offline_judge_on_records(make) -> None:  # type: ignore[no-untyped-def]
    result = score(make())
    assert result.error is None and result.score in (0.0, 1.0)
    assert result.details["corrupted"] is (result.score == 0.0)
    assert len(result.sub_metrics) == 6


def test_corruption_from_the_judge() -> None:
    analysis = {"premature_ending": {"analysis": "hung up", "detected": True}}
    result = score(judges=CannedJudge(json.dumps({"corruption_analysis": analysis, "rating": 0})))
    assert (result.score, result.normalized_score, result.details["corrupted"]) == (0.0, 0.0, True)
    assert result.sub_metrics["premature_ending_rate"].score == 1.0
    assert result.sub_metrics["wrong_language_rate"].score == 0.0
    assert score(judges=CannedJudge('{"rating": 4}')).score == 0.0  # out of scale -> minimum


def test_is_a_validation_metric() -> None:
    info = get_metric(NAME).info
    assert info.category == "validation" and info.exclude_from_default
