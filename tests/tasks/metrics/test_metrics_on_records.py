"""Every deterministic metric on a text-mode, an audio-mode and misbehaving records."""

from __future__ import annotations

import pytest

from tasks.metrics.base import METRICS
from tasks.metrics.runner import NO_TURNS_ERROR, run_metrics
from tasks.records import AttemptRecord, MetricScore
from tests.tasks.metrics.builders import (
    agent_timeout_record,
    audio_record,
    make_scenario,
    silent_agent_record,
    text_record,
)
from tests.tasks.metrics.test_runner import OWN_METRICS

RECORDS = {
    "text": text_record,
    "audio": audio_record,
    "agent_timeout": agent_timeout_record,
    "silent_agent": silent_agent_record,
}


def _outcome(score: MetricScore) -> str:
    if score.error is not None:
        return "error"
    if score.skipped:
        return "skipped"
    assert score.score is not None
    return "score"


def _expect(default: str, **others: str) -> dict[str, str]:
    return {name: others.get(name, default) for name in OWN_METRICS}


# What each record must give, whatever the pipeline (spec 4.1 runner rules, 4.6 metrics):
# text mode has no timing, so turn-taking and response speed skip (the reference would score
# turn-taking 0 there; tasks/metrics/turn_taking.py documents why we skip); an agent that never
# answered the caller leaves no latency to average; a record without an assistant turn
# gives every metric the runner's "no assistant or user turns" error. Nothing else errors.
EXPECTED = {
    "text": _expect("score", turn_taking="skipped", response_speed="skipped"),
    "audio": _expect("score"),
    "agent_timeout": _expect("score", response_speed="skipped"),
    "silent_agent": _expect("error"),
}


@pytest.mark.parametrize("kind", list(RECORDS))
@pytest.mark.parametrize("pipeline", ["cascade", "audio_llm", "s2s"])
def test_every_metric_gives_its_expected_outcome(kind: str, pipeline: str) -> None:
    record: AttemptRecord = RECORDS[kind]()
    scores = run_metrics(record, make_scenario(), names=OWN_METRICS, pipeline=pipeline)
    # Exactly the metrics declaring this pipeline run, in order (stt_wer is cascade-only).
    supported = [n for n in OWN_METRICS if pipeline in METRICS.get(n).info.pipelines]
    assert [s.name for s in scores] == supported
    assert ("stt_wer" in supported) == (pipeline == "cascade")
    assert {s.name: _outcome(s) for s in scores} == {n: EXPECTED[kind][n] for n in supported}
    for score in scores:
        if score.error is not None:
            assert (score.error, score.score) == (NO_TURNS_ERROR, 0.0)
        if score.normalized_score is not None:
            assert 0.0 <= score.normalized_score <= 1.0


def test_expected_outcomes_per_record() -> None:
    text = {s.name: s for s in run_metrics(text_record(), make_scenario(), OWN_METRICS)}
    assert text["task_completion"].score == 1.0
    assert text["turn_taking"].skipped and text["response_speed"].skipped
    assert text["stt_wer"].score == 0.0
    audio = {s.name: s for s in run_metrics(audio_record(), make_scenario(), OWN_METRICS)}
    assert audio["turn_taking"].score == 1.0
    assert audio["response_speed"].score == pytest.approx(0.9)
    assert 0.0 < (audio["stt_wer"].score or 0.0) < 1.0  # "doe" heard as "dough"
    timeout = {s.name: s for s in run_metrics(agent_timeout_record(), make_scenario(), OWN_METRICS)}
    assert timeout["conversation_valid_end"].score == 1.0
    assert timeout["conversation_correctly_finished"].score == 0.0
    assert timeout["task_completion"].score == 0.0
    assert timeout["turn_taking"].score == 0.0
    assert timeout["authentication_success"].score == 0.0
