from __future__ import annotations

import pydantic
import pytest

from evaflow_core.registry import UnknownNameError
from tasks.metrics import DEFAULT_METRICS, METRICS, VALIDATION_METRICS
from tasks.metrics.base import (
    Metric,
    MetricInfo,
    at_least,
    error_score,
    get_metric,
    make_score,
    skipped_score,
    stamp,
    sub_score,
)
from tasks.records import MetricScore

INFO = MetricInfo(name="demo", category="diagnostic", version="v9.9", threshold=0.8)


def test_metric_info_is_frozen_with_spec_defaults() -> None:
    info = MetricInfo(name="x", category="accuracy", version="v0.1")
    assert info.threshold == 0.5
    assert info.kind == "code"
    assert info.pipelines == ("cascade", "audio_llm", "s2s")
    assert info.higher_is_better and not info.exclude_from_pass_at_k
    with pytest.raises(pydantic.ValidationError):
        info.threshold = 0.9  # type: ignore[misc]


def test_make_score_stamps_version_threshold_and_passed() -> None:
    score = make_score(INFO, 0.8 - 1e-12, sub_metrics={"a": sub_score(INFO, "a", 3, None)})
    assert score.name == "demo" and score.version == "v9.9" and score.threshold == 0.8
    assert score.passed is True  # within the 1e-9 tolerance
    assert score.sub_metrics["a"].name == "demo.a"
    assert score.sub_metrics["a"].version == "v9.9"
    assert make_score(INFO, 0.7).passed is False
    assert make_score(INFO, 5.0, None).passed is None


def test_error_and_skipped_scores_have_no_pass() -> None:
    err = error_score(INFO, "boom")
    assert err.score == 0.0 and err.error == "boom" and err.passed is None
    skip = skipped_score(INFO, "nothing to do")
    assert skip.skipped and skip.score is None and skip.details["reason"] == "nothing to do"
    assert skip.passed is None


def test_metric_compute_stamps_whatever_the_function_returns() -> None:
    metric = Metric(
        info=INFO, fn=lambda ctx, judges: MetricScore(name="wrong", score=1.0, normalized_score=1.0)
    )
    result = metric.compute(None)  # type: ignore[arg-type]
    assert result.name == "demo" and result.version == "v9.9" and result.passed is True
    assert metric.supports("s2s")


def test_stamp_keeps_explicit_fields() -> None:
    raw = MetricScore(
        name="demo", score=2.0, normalized_score=0.5, judge="offline", prompt_hash="abc"
    )
    out = stamp(raw, INFO)
    assert out.judge == "offline" and out.prompt_hash == "abc" and out.passed is False


def test_at_least_tolerance() -> None:
    assert at_least(0.95 - 5e-10, 0.95)
    assert not at_least(0.95 - 1e-6, 0.95)


def test_registry_lookup_and_aliases() -> None:
    assert get_metric("conversation_finished").info.name == "conversation_valid_end"
    with pytest.raises(UnknownNameError, match="valid names: .*task_completion"):
        get_metric("no_such_metric")


def test_default_and_validation_sets_follow_spec() -> None:
    assert len(DEFAULT_METRICS) == 14
    assert "tts_fidelity" not in DEFAULT_METRICS
    assert not set(VALIDATION_METRICS) & set(DEFAULT_METRICS)
    for name in ("task_completion", "turn_taking", "stt_wer", "tool_call_validity"):
        assert name in DEFAULT_METRICS and name in METRICS
    assert METRICS.get("conversation_valid_end").info.exclude_from_default


@pytest.mark.parametrize(
    ("name", "version", "threshold", "category", "excluded"),
    [
        ("task_completion", "v0.1", 1.0, "accuracy", False),
        ("turn_taking", "v0.2", 0.8, "experience", False),
        ("conversation_valid_end", "v0.1", 0.5, "validation", False),
        ("authentication_success", "v0.1", 0.5, "diagnostic", True),
        ("conversation_correctly_finished", "v0.1", 0.5, "diagnostic", True),
        ("conversation_completed_on_time", "v0.1", 0.5, "diagnostic", True),
        ("response_speed", "v0.2", 0.5, "diagnostic", True),
        ("stt_wer", "v0.1", 0.5, "diagnostic", True),
        ("tool_call_validity", "v0.1", 0.5, "diagnostic", True),
    ],
)
def test_deterministic_metric_constants(
    name: str, version: str, threshold: float, category: str, excluded: bool
) -> None:
    info = METRICS.get(name).info
    assert (info.version, info.threshold, info.category) == (version, threshold, category)
    assert info.exclude_from_pass_at_k is excluded
    assert info.kind == "code"


def test_pipeline_restrictions_and_direction() -> None:
    assert METRICS.get("stt_wer").info.pipelines == ("cascade",)
    assert METRICS.get("response_speed").info.higher_is_better is False
