"""Turning judge verdicts into ``MetricScore``s with the spec's scoring rules (spec 4.1).

Scores returned here carry the metric name, judge and prompt hash; the metric framework
(``tasks.metrics.base.Metric.compute``) stamps version, threshold and ``passed``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from tasks.judges.base import JudgeVerdict
from tasks.judges.parsing import (
    PARSE_ERROR,
    Aggregation,
    aggregate,
    conversation_rating,
    normalize_rating,
    per_turn_items,
    per_turn_ratings,
    pick_conversation_dict,
)
from tasks.records import MetricScore


def judge_details(verdict: JudgeVerdict) -> dict[str, Any]:
    """Details every judged score stores: response, usage, model and the offline scope."""
    details: dict[str, Any] = {"judge_response": verdict.raw_text}
    if verdict.usage:
        details["judge_usage"] = [u.model_dump() for u in verdict.usage]
    if verdict.model:
        details["judge_model"] = verdict.model
    if verdict.scope:
        details["judge_scope"] = verdict.scope
    if verdict.extra:
        details["judge_extra"] = verdict.extra
    return details


def _base(name: str, verdict: JudgeVerdict, **fields: Any) -> MetricScore:
    return MetricScore(name=name, judge=verdict.judge, prompt_hash=verdict.prompt_hash, **fields)


def failed_score(name: str, verdict: JudgeVerdict, message: str, **details: Any) -> MetricScore:
    """Score 0 with an error (unparseable response, transport failure, no valid rating)."""
    return _base(
        name,
        verdict,
        score=0.0,
        normalized_score=0.0,
        error=message,
        details={**judge_details(verdict), **details},
    )


def skipped_verdict_score(
    name: str, verdict: JudgeVerdict, reason: str, **details: Any
) -> MetricScore:
    return _base(
        name,
        verdict,
        score=None,
        normalized_score=None,
        skipped=True,
        details={"reason": reason, **judge_details(verdict), **details},
    )


def binary_sub(name: str, key: str, flagged: bool, details: dict[str, Any]) -> MetricScore:
    """A 0/1 sub-metric ``<name>.<key>`` (1.0 = flagged/detected)."""
    value = 1.0 if flagged else 0.0
    return MetricScore(name=f"{name}.{key}", score=value, normalized_score=value, details=details)


def score_dimensions(
    name: str,
    verdict: JudgeVerdict,
    dimensions: tuple[str, ...],
    *,
    low: int = 1,
    high: int = 3,
    num_turns: int = 0,
    count_flags: bool = False,
) -> MetricScore:
    """Conversation-level dimension judges (faithfulness, conversation_progression).

    Score = overall rating (invalid => scale minimum), normalized (r - low)/(high - low),
    sub-metrics ``<dimension>_rate`` = 1.0 when the dimension is flagged.
    """
    if verdict.error:
        return failed_score(name, verdict, verdict.error)
    answer = pick_conversation_dict(verdict.raw_text)
    if answer is None:
        return failed_score(name, verdict, PARSE_ERROR)
    rated = conversation_rating(answer, low, high)
    found = answer.get("dimensions")
    raw_dims: dict[str, Any] = found if isinstance(found, dict) else {}
    dims = {key: _dimension(raw_dims.get(key)) for key in dimensions}
    explanation: dict[str, Any] = {"dimensions": {k: v.model_dump() for k, v in dims.items()}}
    if count_flags:
        explanation["flags_count"] = sum(1 for v in dims.values() if v.flagged)
    details = {
        "rating": rated.rating,
        "explanation": explanation,
        "num_turns": num_turns,
        **judge_details(verdict),
    }
    if rated.replaced:
        details["rating_replaced"] = {"original": rated.original, "reason": "out of scale"}
    subs = {
        f"{key}_rate": binary_sub(name, f"{key}_rate", dim.flagged, dim.model_dump())
        for key, dim in dims.items()
    }
    return _base(
        name,
        verdict,
        score=float(rated.rating),
        normalized_score=rated.normalized,
        details=details,
        sub_metrics=subs,
    )


class DimensionVerdict(BaseModel):
    """One dimension of a conversation-level rubric as the judge reported it."""

    flagged: bool = False
    rating: int | None = None
    evidence: str = Field(default="")


def _dimension(raw: Any) -> DimensionVerdict:
    if not isinstance(raw, dict):
        return DimensionVerdict()
    rating = raw.get("rating")
    return DimensionVerdict(
        flagged=bool(raw.get("flagged", False)),
        rating=rating if isinstance(rating, int) and not isinstance(rating, bool) else None,
        evidence=str(raw.get("evidence") or ""),
    )


class PerTurnResult(BaseModel):
    """Parsed per-turn verdict: ratings (None = not applicable) and the judge's items."""

    ratings: dict[int, int | None]
    items: dict[int, dict[str, Any]]


def parse_per_turn(
    verdict: JudgeVerdict, expected: list[int], low: int, high: int, id_key: str = "turn_id"
) -> PerTurnResult | None:
    items = per_turn_items(verdict.raw_text)
    if items is None:
        return None
    ratings, kept = per_turn_ratings(items, expected, low, high, id_key)
    return PerTurnResult(ratings=ratings, items=kept)


def score_per_turn(
    name: str,
    verdict: JudgeVerdict,
    expected: list[int],
    *,
    low: int,
    high: int,
    aggregation: Aggregation = "mean",
    parsed: PerTurnResult | None = None,
) -> MetricScore:
    """Per-turn judges (spec 4.1): score = aggregate of raw ratings (3 decimals),
    normalized = aggregate of normalized ratings; no valid rating => score 0 with error."""
    if verdict.error:
        return failed_score(name, verdict, verdict.error)
    parsed = parsed or parse_per_turn(verdict, expected, low, high)
    if parsed is None:
        return failed_score(name, verdict, PARSE_ERROR)
    valid = {t: r for t, r in parsed.ratings.items() if r is not None}
    details: dict[str, Any] = {
        "per_turn_ratings": {str(t): parsed.ratings.get(t) for t in expected},
        "per_turn_explanations": {
            str(t): str(item.get("explanation", "")) for t, item in parsed.items.items()
        },
        "num_turns": len(expected),
        "num_evaluated": len(valid),
        "aggregation": aggregation,
        **judge_details(verdict),
    }
    if (low, high) != (0, 1):
        details["per_turn_normalized"] = {
            str(t): normalize_rating(r, low, high) for t, r in valid.items()
        }
    if not valid:
        return failed_score(name, verdict, "No valid per-turn ratings from the judge", **details)
    raw = aggregate([float(r) for r in valid.values()], aggregation)
    norm = aggregate([normalize_rating(r, low, high) for r in valid.values()], aggregation)
    return _base(name, verdict, score=round(raw or 0.0, 3), normalized_score=norm, details=details)


def rate_sub_metrics(
    name: str, rated_turns: list[int], flags: dict[int, list[str]], modes: tuple[str, ...]
) -> dict[str, MetricScore]:
    """``<failure_mode>_rate`` = flagged rated turns / rated turns (conciseness, tts)."""
    subs: dict[str, MetricScore] = {}
    if not rated_turns:
        return subs
    for mode in modes:
        hit = [t for t in rated_turns if mode in flags.get(t, [])]
        value = len(hit) / len(rated_turns)
        subs[f"{mode}_rate"] = MetricScore(
            name=f"{name}.{mode}_rate",
            score=value,
            normalized_score=value,
            details={"count": len(hit), "num_rated": len(rated_turns), "turn_ids": hit},
        )
    return subs


def with_judge(score: MetricScore, judge: Any, metric: str) -> MetricScore:
    """Stamp the judge name and prompt hash on a score built without a verdict (skips)."""
    return score.model_copy(update={"judge": judge.name, "prompt_hash": judge.prompt_hash(metric)})
