"""Response parsing rules of spec 4.1 (conversation-level and per-turn) and aggregation."""

from __future__ import annotations

import pytest

from tasks.judges.parsing import (
    aggregate,
    conversation_rating,
    extract_json_values,
    per_turn_items,
    per_turn_ratings,
    pick_conversation_dict,
)


def test_extracts_every_json_value_around_prose() -> None:
    text = 'Thinking... {"a": 1} then [1, 2] and {"rating": 3, "x": {"y": 2}} done {broken'
    assert extract_json_values(text) == [{"a": 1}, [1, 2], {"rating": 3, "x": {"y": 2}}]


def test_only_dict_wins() -> None:
    assert pick_conversation_dict('```json\n{"rating": 2}\n```') == {"rating": 2}


def test_unique_dict_with_rating_wins_over_larger_dicts() -> None:
    text = '{"notes": "a long note without rating", "more": [1, 2, 3]} {"rating": 1}'
    assert pick_conversation_dict(text) == {"rating": 1}


def test_largest_dict_wins_when_rating_is_not_unique() -> None:
    text = '{"rating": 1} {"rating": 3, "dimensions": {"a": {"flagged": false}}}'
    assert pick_conversation_dict(text) == {"rating": 3, "dimensions": {"a": {"flagged": False}}}


def test_unparseable_gives_none() -> None:
    assert pick_conversation_dict("I cannot rate this conversation.") is None


@pytest.mark.parametrize(
    ("raw", "rating", "normalized", "replaced"),
    [
        (1, 1, 0.0, False),
        (2, 2, 0.5, False),
        (3, 3, 1.0, False),
        ("3", 3, 1.0, False),
        (5, 1, 0.0, True),
        (0, 1, 0.0, True),
        (None, 1, 0.0, True),
        (2.5, 1, 0.0, True),
    ],
)
def test_conversation_rating_out_of_scale_becomes_minimum(
    raw: object, rating: int, normalized: float, replaced: bool
) -> None:
    result = conversation_rating({"rating": raw}, 1, 3)
    assert (result.rating, result.normalized, result.replaced) == (rating, normalized, replaced)


def test_per_turn_accepts_array_single_dict_and_wrappers() -> None:
    assert per_turn_items('[{"turn_id": 1, "rating": 3}]') == [{"turn_id": 1, "rating": 3}]
    assert per_turn_items('{"turn_id": 2, "rating": 1}') == [{"turn_id": 2, "rating": 1}]
    assert per_turn_items('{"turns": [{"turn_id": 4, "rating": 0}]}') == [
        {"turn_id": 4, "rating": 0}
    ]
    assert per_turn_items("no json here") is None


def test_per_turn_ids_must_be_expected_and_bad_ratings_are_null() -> None:
    items = [
        {"turn_id": 1, "rating": 3},
        {"turn_id": 2, "rating": None},  # not applicable
        {"turn_id": 3, "rating": 7},  # out of range -> null
        {"turn_id": 9, "rating": 2},  # not expected: dropped, no positional fallback
        {"rating": 2},  # no id: dropped
        {"turn_id": 1, "rating": 1},  # duplicate id: first one wins
    ]
    ratings, kept = per_turn_ratings(items, [1, 2, 3, 4], 1, 3)
    assert ratings == {1: 3, 2: None, 3: None}
    assert set(kept) == {1, 2, 3}


def test_aggregations() -> None:
    values = [1.0, 0.5, 0.25]
    assert aggregate(values, "mean") == pytest.approx(0.58333, abs=1e-4)
    assert aggregate(values, "min") == 0.25
    assert aggregate(values, "hmean") == pytest.approx(3 / (1 + 2 + 4))
    assert aggregate([-1.0, 0.5], "abs_mean") == 0.75
    assert aggregate([0.0, 1.0], "hmean") == 0.0
    assert aggregate([], "mean") is None
    with pytest.raises(ValueError, match="valid: mean"):
        aggregate(values, "median")  # type: ignore[arg-type]
