from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from evaflow_core.registry import UnknownNameError
from tasks.metrics import METRICS
from tasks.metrics.base import MetricInfo, make_score, register_metric
from tasks.metrics.runner import NO_TURNS_ERROR, resolve_metric_names, run_metrics
from tests.tasks.metrics.builders import (
    audio_record,
    make_record,
    make_scenario,
    silent_agent_record,
    text_record,
)

OWN_METRICS = [
    "task_completion",
    "turn_taking",
    "conversation_valid_end",
    "authentication_success",
    "response_speed",
    "stt_wer",
    "tool_call_validity",
    "conversation_correctly_finished",
    "conversation_completed_on_time",
]


@pytest.fixture
def temporary_metrics() -> Iterator[list[str]]:
    """Register throwaway metrics and remove them afterwards."""
    added: list[str] = []

    def boom(ctx: Any, judges: Any) -> Any:
        raise RuntimeError("metric exploded")

    def s2s_only(ctx: Any, judges: Any) -> Any:
        return make_score(S2S_INFO, 1.0)

    register_metric(BOOM_INFO)(boom)
    register_metric(S2S_INFO)(s2s_only)
    added += [BOOM_INFO.name, S2S_INFO.name]
    yield added
    for name in added:
        METRICS._items.pop(name, None)


BOOM_INFO = MetricInfo(name="_test_boom", category="diagnostic", version="v0")
S2S_INFO = MetricInfo(name="_test_s2s", category="diagnostic", version="v0", pipelines=("s2s",))


def test_runs_requested_metrics_in_order() -> None:
    scores = run_metrics(audio_record(), make_scenario(), names=OWN_METRICS)
    assert [s.name for s in scores] == OWN_METRICS
    assert all(s.error is None for s in scores)


def test_exception_becomes_error_score(temporary_metrics: list[str]) -> None:
    (score,) = run_metrics(text_record(), make_scenario(), names=["_test_boom"])
    assert score.score == 0.0 and score.error == "RuntimeError: metric exploded"
    assert score.version == "v0"


def test_unsupported_pipeline_is_not_computed(temporary_metrics: list[str]) -> None:
    names = ["_test_s2s", "stt_wer"]
    assert [s.name for s in run_metrics(text_record(), make_scenario(), names)] == ["stt_wer"]
    assert [s.name for s in run_metrics(text_record(), make_scenario(), names, pipeline="s2s")] == [
        "_test_s2s"
    ]


def test_no_turns_rule_applies_to_every_metric() -> None:
    for record in (silent_agent_record(), make_record([])):
        scores = run_metrics(record, make_scenario(), names=OWN_METRICS)
        assert len(scores) == len(OWN_METRICS)
        assert all(s.score == 0.0 and s.error == NO_TURNS_ERROR for s in scores)


def test_unknown_names_and_bad_pipeline_never_raise() -> None:
    (score,) = run_metrics(text_record(), make_scenario(), names=["nope"])
    assert score.error is not None and "valid names" in score.error
    scores = run_metrics(text_record(), make_scenario(), names=["task_completion"], pipeline="x")
    assert "unknown pipeline" in (scores[0].error or "")
    with pytest.raises(UnknownNameError):
        resolve_metric_names(["nope"])


def test_alias_and_duplicates_are_canonicalised() -> None:
    scores = run_metrics(
        text_record(), make_scenario(), names=["conversation_finished", "conversation_valid_end"]
    )
    assert [s.name for s in scores] == ["conversation_valid_end"]


def test_context_failure_becomes_error_scores() -> None:
    record = text_record()
    record.turns[0].segments = "not a list"  # type: ignore[assignment]  # corrupt on purpose
    scores = run_metrics(record, make_scenario(), names=["task_completion", "nope"])
    assert "could not build metric context" in (scores[0].error or "")
    assert "valid names" in (scores[1].error or "")


def test_default_set_and_threads() -> None:
    sequential = run_metrics(audio_record(), make_scenario())
    threaded = run_metrics(audio_record(), make_scenario(), max_workers=4)
    assert [s.model_dump() for s in sequential] == [s.model_dump() for s in threaded]
    names = [s.name for s in sequential]
    assert "conversation_valid_end" not in names and "task_completion" in names
