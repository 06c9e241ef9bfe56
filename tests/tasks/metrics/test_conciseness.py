"""conciseness metric: per-turn scoring, failure modes and their rates."""

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


def score(record=None, judges=None):  # type: ignore[no-untyped-def]
    (result,) = run_metrics(record or text_record(), make_scenario(), ["conciseness"], judges)
    return result


@pytest.mark.parametrize("make", [text_record, audio_record, agent_timeout_record])
def test_offline_judge_scores_every_record(make) -> None:  # type: ignore[no-untyped-def]
    result = score(make())
    assert result.error is None and 1.0 <= result.score <= 3.0
    assert result.version == "v0.1" and result.judge == "offline"


def test_per_turn_rules() -> None:
    answer = [
        {"turn_id": 0, "rating": 3, "failure_modes": ["verbosity_or_filler"]},  # cleared on a 3
        {"turn_id": 1, "rating": 1, "failure_modes": ["excess_information_density", "made_up"]},
        {"turn_id": 2, "rating": 2, "failure_modes": ["verbosity_or_filler"]},
        {"turn_id": 7, "rating": 1},  # not a turn of this conversation
    ]
    judge = CannedJudge(json.dumps(answer))
    result = score(judges=judge)
    assert result.score == 2.0 and result.normalized_score == pytest.approx(0.5)
    assert result.details["per_turn_failure_modes"] == {
        "0": [],
        "1": ["excess_information_density"],
        "2": ["verbosity_or_filler"],
    }
    assert result.sub_metrics["verbosity_or_filler_rate"].score == pytest.approx(1 / 3)
    assert result.sub_metrics["excess_information_density_rate"].details["turn_ids"] == [1]
    assert result.details["num_turns"] == 3


def test_no_valid_rating_is_an_error() -> None:
    result = score(judges=CannedJudge(json.dumps([{"turn_id": 1, "rating": None}])))
    assert result.error and result.score == 0.0
