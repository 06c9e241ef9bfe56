"""Golden conversations must pass the offline judges (issue 6 follow-up).

In text mode the reference agent replays each built-in scenario's golden trace and the
scripted caller follows the golden caller turns: the task completes, the caller keeps to
its goal and nothing is misheard. Any failure of faithfulness, user_behavioral_fidelity
or transcription_accuracy_key_entities here is a false positive of a rule.
"""

from __future__ import annotations

from functools import cache

import pytest

from scenarios.loader import load_scenario_dir
from scenarios.models import Scenario
from tasks.metrics.runner import run_metrics
from tasks.records import AttemptRecord, MetricScore
from tasks.simulate import SimulationConfig, simulate
from tasks.sources import BUILTIN_PACK

METRICS = [
    "task_completion",
    "faithfulness",
    "user_behavioral_fidelity",
    "transcription_accuracy_key_entities",
]
JUDGED = METRICS[1:]


@cache
def golden_runs() -> list[tuple[Scenario, AttemptRecord]]:
    scenarios = load_scenario_dir(BUILTIN_PACK)
    return [(s, simulate(s, SimulationConfig(mode="text"))) for s in scenarios]


@cache
def golden_scores() -> dict[str, dict[str, MetricScore]]:
    return {
        scenario.id: {s.name: s for s in run_metrics(record, scenario, METRICS)}
        for scenario, record in golden_runs()
    }


def _why(score: MetricScore) -> str:
    details = score.details or {}
    found = details.get("explanation") or details.get("corruption_analysis") or details
    return f"{score.error or ''} {str(found)[:600]}"


def test_the_pack_is_replayed_to_completion() -> None:
    scores = golden_scores()
    assert len(scores) >= 40
    unfinished = [sid for sid, by in scores.items() if by["task_completion"].score != 1.0]
    assert not unfinished, f"golden replays that did not complete the task: {unfinished}"


@pytest.mark.parametrize("metric", JUDGED)
def test_golden_conversations_pass_the_offline_judges(metric: str) -> None:
    failures = {
        sid: _why(by[metric])
        for sid, by in golden_scores().items()
        if by[metric].error or not by[metric].passed
    }
    assert not failures, f"{metric} false positives on golden conversations: {failures}"


def test_heard_equals_said_keeps_every_key_entity() -> None:
    for sid, by in golden_scores().items():
        score = by["transcription_accuracy_key_entities"]
        if not score.skipped:
            assert score.normalized_score == 1.0, f"{sid}: {_why(score)}"
