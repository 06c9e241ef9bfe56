"""faithfulness metric: spec scoring through the framework, with the offline and a canned judge."""

from __future__ import annotations

import json

import pytest

from tasks.judges.inputs import ConversationInput
from tasks.metrics.runner import run_metrics
from tests.tasks.judges.fakes import CannedJudge
from tests.tasks.metrics.builders import (
    agent_timeout_record,
    audio_record,
    make_scenario,
    text_record,
)

DIMS = (
    "fabricating_tool_parameters",
    "misrepresenting_tool_result",
    "violating_policies",
    "failing_to_disambiguate",
    "hallucination",
)


def answer(rating: object, flagged: tuple[str, ...] = ()) -> str:
    dims = {
        d: {
            "evidence": "x" if d in flagged else "",
            "flagged": d in flagged,
            "rating": 2 if d in flagged else 3,
        }
        for d in DIMS
    }
    return json.dumps({"dimensions": dims, "rating": rating})


def score(record=None, judges=None, pipeline="cascade"):  # type: ignore[no-untyped-def]
    (result,) = run_metrics(
        record or text_record(), make_scenario(), ["faithfulness"], judges, pipeline
    )
    return result


@pytest.mark.parametrize("make", [text_record, audio_record, agent_timeout_record])
@pytest.mark.parametrize("pipeline", ["cascade", "s2s"])
def test_offline_judge_scores_every_record(make, pipeline) -> None:  # type: ignore[no-untyped-def]
    result = score(make(), None, pipeline)
    assert result.error is None and result.score in (1.0, 2.0, 3.0)
    assert result.judge == "offline" and len(result.prompt_hash or "") == 12
    assert result.version == "v0.3" and result.threshold == 0.5
    assert set(result.sub_metrics) == {f"{d}_rate" for d in DIMS}
    assert "judge_scope" in result.details


@pytest.mark.parametrize(
    ("rating", "norm", "passed"), [(1, 0.0, False), (2, 0.5, True), (3, 1.0, True)]
)
def test_rating_normalisation_and_pass(rating: int, norm: float, passed: bool) -> None:
    judge = CannedJudge(answer(rating, ("hallucination",)))
    result = score(judges=judge)
    assert (result.score, result.normalized_score, result.passed) == (rating, norm, passed)
    assert result.sub_metrics["hallucination_rate"].score == 1.0
    assert result.sub_metrics["hallucination_rate"].details["evidence"] == "x"
    assert result.details["num_turns"] == len(judge.tasks[0].inputs.trace)  # type: ignore[attr-defined]
    inputs = judge.tasks[0].inputs
    assert isinstance(inputs, ConversationInput) and inputs.current_date_time.startswith(
        "2026-03-17"
    )


def test_invalid_rating_is_minimum_and_garbage_is_an_error() -> None:
    assert score(judges=CannedJudge(answer(0))).normalized_score == 0.0
    bad = score(judges=CannedJudge("The agent was fine."))
    assert bad.score == 0.0 and bad.error == "Failed to parse judge response" and bad.passed is None
    down = score(judges=CannedJudge(error="HTTP 503"))
    assert down.error == "HTTP 503"


def test_judges_mapping_selects_per_metric() -> None:
    result = score(judges={"faithfulness": CannedJudge(answer(3)), "default": "offline"})
    assert result.judge == "canned" and result.score == 3.0
