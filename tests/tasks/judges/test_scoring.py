"""Scoring rules: conversation-level dimension judges and per-turn judges (spec 4.1)."""

from __future__ import annotations

import json

import pytest

from tasks.judges import JudgeVerdict
from tasks.judges.scoring import rate_sub_metrics, score_dimensions, score_per_turn

DIMS = ("alpha", "beta")


def verdict(text: str, error: str | None = None) -> JudgeVerdict:
    return JudgeVerdict(judge="test", metric="m", raw_text=text, error=error, prompt_hash="abc")


def dims_answer(rating: object, flagged: dict[str, bool]) -> str:
    dims = {k: {"evidence": "e", "flagged": v, "rating": 2 if v else 3} for k, v in flagged.items()}
    return json.dumps({"dimensions": dims, "rating": rating})


@pytest.mark.parametrize(
    ("rating", "score", "normalized"), [(1, 1.0, 0.0), (2, 2.0, 0.5), (3, 3.0, 1.0)]
)
def test_dimension_score_and_normalisation(rating: int, score: float, normalized: float) -> None:
    result = score_dimensions("m", verdict(dims_answer(rating, {"alpha": True})), DIMS, num_turns=4)
    assert (result.score, result.normalized_score) == (score, normalized)
    assert result.sub_metrics["alpha_rate"].score == 1.0
    assert result.sub_metrics["beta_rate"].score == 0.0
    assert result.sub_metrics["alpha_rate"].name == "m.alpha_rate"
    assert (
        result.details["num_turns"] == 4 and result.judge == "test" and result.prompt_hash == "abc"
    )


def test_out_of_scale_rating_is_minimum_not_error() -> None:
    result = score_dimensions("m", verdict(dims_answer(9, {})), DIMS)
    assert result.error is None
    assert (result.score, result.normalized_score) == (1.0, 0.0)
    assert result.details["rating_replaced"]["original"] == 9


def test_unparseable_and_transport_errors_score_zero_with_error() -> None:
    bad = score_dimensions("m", verdict("no json"), DIMS)
    assert (bad.score, bad.error) == (0.0, "Failed to parse judge response")
    failed = score_dimensions("m", verdict("", error="HTTP 500"), DIMS)
    assert (failed.score, failed.error) == (0.0, "HTTP 500")


def test_flags_count_for_progression() -> None:
    text = dims_answer(2, {"alpha": True, "beta": True})
    result = score_dimensions("m", verdict(text), DIMS, count_flags=True)
    assert result.details["explanation"]["flags_count"] == 2


def test_per_turn_mean_of_raw_and_of_normalized() -> None:
    text = json.dumps(
        [
            {"turn_id": 0, "rating": 3, "explanation": "ok"},
            {"turn_id": 1, "rating": 2},
            {"turn_id": 2, "rating": None},
            {"turn_id": 3, "rating": 1},
        ]
    )
    result = score_per_turn("m", verdict(text), [0, 1, 2, 3], low=1, high=3)
    assert result.score == 2.0
    assert result.normalized_score == pytest.approx(0.5)
    assert result.details["num_turns"] == 4 and result.details["num_evaluated"] == 3
    assert result.details["per_turn_ratings"] == {"0": 3, "1": 2, "2": None, "3": 1}
    assert result.details["per_turn_normalized"]["1"] == 0.5


def test_per_turn_binary_has_no_normalized_map_and_rounds_score() -> None:
    text = json.dumps([{"turn_id": t, "rating": r} for t, r in [(1, 1), (2, 0), (3, 0)]])
    result = score_per_turn("m", verdict(text), [1, 2, 3], low=0, high=1)
    assert result.score == 0.333 and result.normalized_score == pytest.approx(1 / 3)
    assert "per_turn_normalized" not in result.details


def test_per_turn_without_valid_rating_is_an_error() -> None:
    text = json.dumps([{"turn_id": 1, "rating": None}, {"turn_id": 2, "rating": 9}])
    result = score_per_turn("m", verdict(text), [1, 2], low=1, high=3)
    assert result.score == 0.0 and result.error


def test_rate_sub_metrics_over_rated_turns() -> None:
    subs = rate_sub_metrics("c", [1, 2, 3, 4], {1: ["a"], 2: ["a", "b"]}, ("a", "b"))
    assert subs["a_rate"].score == 0.5 and subs["b_rate"].score == 0.25
    assert subs["a_rate"].details == {"count": 2, "num_rated": 4, "turn_ids": [1, 2]}
    assert rate_sub_metrics("c", [], {}, ("a",)) == {}
