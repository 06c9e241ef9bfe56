"""The trial's stages as injected callables (issue 30): the loop calls simulate and
validate once per attempt and judge once, on the kept attempt; judging leaves its input
as it was (a retried judging task starts again from the validation scores); and the
providers each stage's tags and limits name."""

from __future__ import annotations

from collections import Counter

import pytest

import tasks.simulation as simulation_mod
from scenarios.models import Scenario
from tasks.config import JudgeSpec, SystemSpec
from tasks.records import AttemptRecord
from tasks.stage_providers import judge_limit_name, judge_provider, simulation_providers
from tasks.trial import (
    AttemptResult,
    TrialStages,
    judge_kept,
    run_attempt,
    run_trial,
    simulate_attempt_step,
    validate_attempt_step,
)
from tasks.trial_spec import TrialSpec


def counting_stages(calls: Counter[str]) -> TrialStages:
    def simulate(spec: TrialSpec, scenario: Scenario, attempt: int) -> AttemptRecord:
        calls["simulate"] += 1
        return simulate_attempt_step(spec, scenario, attempt)

    def validate(spec: TrialSpec, scenario: Scenario, record: AttemptRecord) -> AttemptResult:
        calls["validate"] += 1
        return validate_attempt_step(spec, scenario, record)

    def judge(spec: TrialSpec, scenario: Scenario, kept: AttemptResult) -> AttemptResult:
        calls["judge"] += 1
        return judge_kept(spec, scenario, kept)

    return TrialStages(simulate=simulate, validate=validate, judge=judge)


def test_injected_stages_run_per_attempt_and_judge_once(
    monkeypatch: pytest.MonkeyPatch, text_trial: tuple[TrialSpec, Scenario]
) -> None:
    spec, scenario = text_trial
    real = simulation_mod.simulate_attempt

    def simulate(spec: TrialSpec, scenario: Scenario, attempt: int) -> AttemptRecord:
        record = real(spec, scenario, attempt)
        record.caller_ended = attempt > 1  # the first attempt: a simulator fault
        return record

    monkeypatch.setattr(simulation_mod, "simulate_attempt", simulate)
    calls: Counter[str] = Counter()
    staged = run_trial(spec, scenario, counting_stages(calls))
    plain = run_trial(spec, scenario)

    assert calls == {"simulate": 2, "validate": 2, "judge": 1}
    for result in (staged, plain):
        assert [a.validation["reason"] for a in result.attempts] == ["not_finished", "ok"]
    assert [s.name for s in staged.final.scores] == [s.name for s in plain.final.scores]
    assert [s.score for s in staged.final.scores] == [s.score for s in plain.final.scores]


def test_judging_leaves_its_input_unchanged(text_trial: tuple[TrialSpec, Scenario]) -> None:
    spec, scenario = text_trial
    kept = run_attempt(spec, scenario, 1)
    before = kept.model_dump(mode="json")
    first = judge_kept(spec, scenario, kept)
    again = judge_kept(spec, scenario, kept)  # as a retried task would

    assert kept.model_dump(mode="json") == before
    assert len(first.scores) > len(kept.scores)
    assert [s.name for s in again.scores] == [s.name for s in first.scores]
    assert again.record.stage_seconds["judge"] >= 0 and "judge" not in kept.record.stage_seconds


def test_judge_provider_and_limit_names() -> None:
    assert judge_provider(JudgeSpec()) is None  # offline: no provider, no limit
    openai = JudgeSpec(name="llm", params={"base_url": "https://api.openai.com/v1"})
    assert judge_provider(openai) == "openai"
    assert judge_limit_name("openai") == "judge:openai"
    local = JudgeSpec(name="llm", params={"base_url": "http://127.0.0.1:8011/v1"})
    assert judge_provider(local) == "127.0.0.1:8011"
    assert judge_provider(JudgeSpec(name="llm")) == "127.0.0.1:8000"  # the client's default


def test_simulation_providers(text_trial: tuple[TrialSpec, Scenario]) -> None:
    spec, _ = text_trial
    assert simulation_providers(spec) == []  # in-process agent, scripted caller
    components = {
        "stt": {"provider": "deepgram", "model": "nova-3"},
        "llm": {"provider": "openai", "model": "gpt-4.1"},
        "tts": {"provider": "evaflow-espeak", "model": None},  # offline: calls nobody
    }
    pipecat = SystemSpec(
        name="cascade",
        agent="pipecat",
        params={"architecture": "cascade", "components": components},
    )
    assert simulation_providers(spec.model_copy(update={"system": pipecat})) == [
        "deepgram",
        "openai",
    ]


def test_prefect_remembers_tags_without_limits_for_the_run() -> None:
    """Importing the stage tasks makes Prefect's "no tag limit" memory last the process's
    life (tasks.steps: otherwise each tag set is asked again after 5 s, and on SQLite the
    request often costs a 2 s retry)."""
    from prefect.concurrency import services

    from tasks.steps import NO_TAG_LIMIT_MEMORY_S, remember_tags_without_limits

    assert services._no_limits_cache.ttl == NO_TAG_LIMIT_MEMORY_S
    services._no_limits_cache[frozenset({"tag:stage:probe"})] = True
    assert remember_tags_without_limits()  # already long: the memory is kept, not replaced
    assert services._no_limits_cache.get(frozenset({"tag:stage:probe"})) is True
    services._no_limits_cache.pop(frozenset({"tag:stage:probe"}))
