"""The trial loop judges only the kept attempt (issue 30): every attempt runs the
validation metrics, the full metric set runs once, on the attempt the trial keeps."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

import tasks.metrics.runner as runner_mod
import tasks.simulation as simulation_mod
from scenarios.models import Scenario
from tasks.judges import make_judge
from tasks.judges.base import JudgeTask, JudgeVerdict
from tasks.metrics.base import VALIDATION_METRICS
from tasks.records import AttemptRecord
from tasks.scoring import composite_scores, judged_names, metric_names
from tasks.tables import metric_rows
from tasks.trial import run_trial
from tasks.trial_spec import TrialSpec


class CountingJudge:
    """The offline judge, counting its calls per metric."""

    def __init__(self) -> None:
        self.inner = make_judge("offline")
        self.name = self.inner.name
        self.calls: Counter[str] = Counter()

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        self.calls[task.metric] += 1
        return self.inner.evaluate(task)

    def prompt_hash(self, metric: str) -> str:
        return self.inner.prompt_hash(metric)


def _unfinished_first(monkeypatch: pytest.MonkeyPatch, bad: int) -> None:
    """The first ``bad`` attempts end without the caller hanging up (the gate fails on a
    simulator fault: regenerated); the next is the real conversation."""
    real = simulation_mod.simulate_attempt

    def simulate(spec: TrialSpec, scenario: Scenario, attempt: int) -> AttemptRecord:
        record = real(spec, scenario, attempt)
        if attempt <= bad:
            record.caller_ended = False
        return record

    monkeypatch.setattr(simulation_mod, "simulate_attempt", simulate)


def _count(monkeypatch: pytest.MonkeyPatch) -> tuple[CountingJudge, Counter[str]]:
    judge = CountingJudge()
    computed: Counter[str] = Counter()
    real = runner_mod.compute_one

    def compute_one(metric: Any, ctx: Any, judges: Any) -> Any:
        computed[metric.info.name] += 1
        return real(metric, ctx, judges)

    monkeypatch.setattr("tasks.judges.make_judge", lambda _spec: judge)
    monkeypatch.setattr(runner_mod, "compute_one", compute_one)
    return judge, computed


def test_the_full_set_runs_once_on_the_kept_attempt(
    monkeypatch: pytest.MonkeyPatch, text_trial: tuple[TrialSpec, Scenario]
) -> None:
    spec, scenario = text_trial
    _unfinished_first(monkeypatch, bad=2)
    judge, computed = _count(monkeypatch)
    result = run_trial(spec, scenario)

    assert [a.validation["reason"] for a in result.attempts] == [
        "not_finished",
        "not_finished",
        "ok",
    ]
    for name in VALIDATION_METRICS:
        assert computed[name] == 3, name
    full = judged_names(spec)
    assert full and all(computed[name] == 1 for name in full), computed
    assert set(computed) == {*VALIDATION_METRICS, *full}
    # The judge: a judged validation metric is asked once per attempt, the rest once.
    single = _single_pass_calls(spec, scenario)
    assert set(single) & set(VALIDATION_METRICS) and set(single) - set(VALIDATION_METRICS)
    assert judge.calls == Counter(
        {n: c * (3 if n in VALIDATION_METRICS else 1) for n, c in single.items()}
    )

    # Discarded attempts keep their validation rows and nothing else.
    for discarded in result.attempts[:-1]:
        assert [s.name for s in discarded.scores] == list(VALIDATION_METRICS)
    kept = result.final
    composites = [s.name for s in composite_scores([])]
    assert [s.name for s in kept.scores] == [*metric_names(spec), *composites]
    assert kept.record.stage_seconds["judge"] > 0
    rows = metric_rows(kept.record, "b", kept.scores)
    assert {r["metric"] for r in rows if r["parent"] is None} >= set(full)


def _single_pass_calls(spec: TrialSpec, scenario: Scenario) -> Counter[str]:
    """Judge calls per metric of one attempt scored alone (the conversation is the same)."""
    judge = CountingJudge()
    record = simulation_mod.simulate_attempt(spec, scenario, 1)
    runner_mod.run_metrics(record, scenario, metric_names(spec), judge)
    return judge.calls


def test_a_trial_that_keeps_no_attempt_is_not_judged(
    monkeypatch: pytest.MonkeyPatch, text_trial: tuple[TrialSpec, Scenario]
) -> None:
    spec, scenario = text_trial
    _unfinished_first(monkeypatch, bad=3)
    _judge, computed = _count(monkeypatch)
    result = run_trial(spec, scenario)
    assert len(result.attempts) == 3 and not result.final.validation["valid"]
    assert computed == Counter({name: 3 for name in VALIDATION_METRICS})
    assert all("judge" not in a.record.stage_seconds for a in result.attempts)


def test_the_kept_attempts_scores_equal_one_pass_over_every_metric(
    text_trial: tuple[TrialSpec, Scenario],
) -> None:
    """Judging in two stages changes no value: same rows as one run over the whole set."""
    spec, scenario = text_trial
    result = run_trial(spec, scenario)
    record = simulation_mod.simulate_attempt(spec, scenario, 1)
    one_pass = runner_mod.run_metrics(record, scenario, metric_names(spec), make_judge("offline"))
    one_pass += composite_scores(one_pass)
    assert [s.model_dump() for s in result.final.scores] == [s.model_dump() for s in one_pass]
