"""conversation_progression metric (judged)."""

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

DIMS = ("unnecessary_tool_calls", "information_loss", "redundant_statements", "question_quality")


def score(record=None, judges=None):  # type: ignore[no-untyped-def]
    (result,) = run_metrics(
        record or text_record(), make_scenario(), ["conversation_progression"], judges
    )
    return result


@pytest.mark.parametrize("make", [text_record, audio_record, agent_timeout_record])
def test_offline_judge_scores_every_record(make) -> None:  # type: ignore[no-untyped-def]
    result = score(make())
    assert result.error is None and result.score in (1.0, 2.0, 3.0)
    assert result.version == "v0.2" and result.judge == "offline"
    assert set(result.sub_metrics) == {f"{d}_rate" for d in DIMS}
    assert "flags_count" in result.details["explanation"]


def test_flags_count_and_rates_from_the_judge() -> None:
    dims = {d: {"evidence": "e", "flagged": d != "information_loss", "rating": 2} for d in DIMS}
    result = score(judges=CannedJudge(json.dumps({"dimensions": dims, "rating": 1})))
    assert (result.score, result.normalized_score, result.passed) == (1.0, 0.0, False)
    assert result.details["explanation"]["flags_count"] == 3
    assert result.sub_metrics["information_loss_rate"].score == 0.0
    assert result.sub_metrics["question_quality_rate"].score == 1.0
