"""Judge response parsing and per-turn aggregation (spec 4.1, "Response parsing").

Conversation-level judges: every JSON value in the text is extracted; the only dict wins,
else the unique dict carrying a ``rating`` key, else the largest dict. A rating outside the
scale is replaced by the scale's *minimum* (spec 12.18). Per-turn judges: a JSON array (a
single dict is wrapped, a dict wrapping the array under a known key is unwrapped); each item
must carry a ``turn_id`` from the expected list; a null or out-of-range rating means "not
applicable" for that turn.
"""

from __future__ import annotations

import json
import math
import statistics
from typing import Any, Literal

from pydantic import BaseModel, Field

Aggregation = Literal["mean", "hmean", "abs_mean", "min"]

PARSE_ERROR = "Failed to parse judge response"
# Keys under which judges sometimes wrap a per-unit array (spec 4.6, key entities).
WRAPPER_KEYS = ("turns", "evaluations", "results", "turn_evaluations")


def extract_json_values(text: str) -> list[Any]:
    """Every top-level JSON object or array embedded in ``text``, in order."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    i = 0
    while i < len(text):
        if text[i] not in "{[":
            i += 1
            continue
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i += 1
            continue
        values.append(value)
        i = end
    return values


def pick_conversation_dict(text: str) -> dict[str, Any] | None:
    """The dict a conversation-level judge meant as its answer, or None."""
    dicts = [v for v in extract_json_values(text) if isinstance(v, dict)]
    if not dicts:
        return None
    if len(dicts) == 1:
        return dicts[0]
    rated = [d for d in dicts if "rating" in d]
    if len(rated) == 1:
        return rated[0]
    return max(dicts, key=lambda d: len(json.dumps(d)))


def as_int_rating(value: Any) -> int | None:
    """An integral rating, or None for null/non-numeric/fractional values."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, int | float) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    return None


class ConversationRating(BaseModel):
    """A conversation-level rating after the spec's out-of-range rule."""

    rating: int = Field(description="Rating on the native scale (minimum if invalid)")
    normalized: float = Field(description="(rating - min) / (max - min)")
    replaced: bool = Field(default=False, description="Original rating was out of scale")
    original: Any = Field(default=None, description="The rating value as returned")


def normalize_rating(rating: float, low: int, high: int) -> float:
    return (rating - low) / (high - low) if high != low else float(rating)


def conversation_rating(answer: dict[str, Any], low: int, high: int) -> ConversationRating:
    """Apply the spec's rule: a rating outside [low, high] is replaced by ``low``."""
    original = answer.get("rating")
    rating = as_int_rating(original)
    replaced = rating is None or not low <= rating <= high
    final = low if replaced else int(rating)  # type: ignore[arg-type]
    return ConversationRating(
        rating=final,
        normalized=normalize_rating(final, low, high),
        replaced=replaced,
        original=original,
    )


def per_turn_items(text: str) -> list[dict[str, Any]] | None:
    """The list of per-turn dicts in a per-turn judge's response, or None if unparseable."""
    for value in extract_json_values(text):
        if isinstance(value, list):
            return [item for item in value if isinstance(item, dict)]
        if isinstance(value, dict):
            for key in WRAPPER_KEYS:
                if isinstance(value.get(key), list):
                    return [item for item in value[key] if isinstance(item, dict)]
            return [value]
    return None


def per_turn_ratings(
    items: list[dict[str, Any]],
    expected: list[int],
    low: int,
    high: int,
    id_key: str = "turn_id",
) -> tuple[dict[int, int | None], dict[int, dict[str, Any]]]:
    """Ratings keyed by expected turn id (None = not applicable or invalid) and the items.

    Items whose id is not expected are dropped (no positional fallback, spec 4.1).
    """
    ratings: dict[int, int | None] = {}
    kept: dict[int, dict[str, Any]] = {}
    wanted = set(expected)
    for item in items:
        turn = as_int_rating(item.get(id_key))
        if turn is None or turn not in wanted or turn in kept:
            continue
        rating = as_int_rating(item.get("rating"))
        ratings[turn] = rating if rating is not None and low <= rating <= high else None
        kept[turn] = item
    return ratings, kept


def aggregate(values: list[float], method: Aggregation = "mean") -> float | None:
    """Aggregate per-turn values; None when there is nothing to aggregate."""
    if not values:
        return None
    if method == "mean":
        return statistics.fmean(values)
    if method == "abs_mean":
        return statistics.fmean(abs(v) for v in values)
    if method == "min":
        return min(values)
    if method == "hmean":
        if any(v <= 0 for v in values):
            return 0.0
        return statistics.harmonic_mean(values)
    raise ValueError(f"unknown aggregation {method!r}; valid: mean, hmean, abs_mean, min")
