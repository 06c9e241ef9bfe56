"""Text-mode integrity under EVA's behaviour personas, over the built-in pack.

The reference agent and the scripted caller play every pack record under each persona:
the caller's behaviour must never corrupt the test (user_behavioral_fidelity 1, a valid
end, the task completed as under ``clean``) and each persona must measurably change the
caller. The audio style differs too (rate, pauses, hesitations: audio mode only)."""

from __future__ import annotations

from collections import Counter
from functools import cache

import pytest

from scenarios.loader import load_scenario_dir
from scenarios.models import Scenario
from tasks.metrics.runner import run_metrics
from tasks.records import AttemptRecord, TurnRecord
from tasks.simulate import SimulationConfig, simulate_text
from tasks.simulate.dialogue.cues import is_request
from tasks.simulate.dialogue.slots import signature, tokens
from tasks.simulate.voices import trial_style
from tasks.sources import BUILTIN_PACK

PERSONAS = ("aggressive_impatient", "elderly_slow", "forgetful_disorganized")
METRICS = ["task_completion", "conversation_valid_end", "user_behavioral_fidelity"]


@cache
def pack() -> list[Scenario]:
    return load_scenario_dir(BUILTIN_PACK)


@cache
def runs(condition: str, seed: int = 0) -> list[tuple[Scenario, AttemptRecord]]:
    config = SimulationConfig(condition=condition, seed=seed)
    return [(s, simulate_text(s, config)) for s in pack()]


def behaviours(condition: str, seed: int = 0) -> Counter[str]:
    return Counter(
        e.data["behavior"]
        for _, r in runs(condition, seed)
        for e in r.events
        if e.kind == "persona"
    )


def corrupted(condition: str, seed: int = 0) -> dict[str, str]:
    """Records where the persona run is not a valid, completed conversation like clean's."""
    clean = {s.id: r for s, r in runs("clean", seed)}
    bad = {}
    for scenario, record in runs(condition, seed):
        scores = {m.name: m for m in run_metrics(record, scenario, METRICS)}
        base = {m.name: m for m in run_metrics(clean[scenario.id], scenario, METRICS[:1])}
        fidelity = scores["user_behavioral_fidelity"]
        if (
            scores["task_completion"].score != base["task_completion"].score
            or scores["task_completion"].score != 1.0
            or scores["conversation_valid_end"].score != 1.0
            or fidelity.error
            or not fidelity.passed
        ):
            bad[scenario.id] = str(fidelity.details.get("corruption_analysis"))[:400]
    return bad


@pytest.mark.parametrize("condition", PERSONAS)
def test_no_persona_corrupts_a_pack_conversation(condition: str) -> None:
    assert len(pack()) >= 40
    assert not corrupted(condition), corrupted(condition)


def test_each_persona_changes_the_caller_as_it_should() -> None:
    forgetful, elderly = behaviours("forgetful_disorganized"), behaviours("elderly_slow")
    assert forgetful["withheld"] > 0 and forgetful["repeated"] > 0
    assert forgetful["ask_repeat"] == 0
    assert elderly["ask_repeat"] > 0 and elderly["withheld"] == elderly["repeated"] == 0
    # The impatient caller's words are the clean caller's: it differs in audio only.
    assert not behaviours("aggressive_impatient")
    clean = {s.id: r.turns for s, r in runs("clean")}
    for scenario, record in runs("aggressive_impatient"):
        said = [t.intended_text for t in record.turns]
        assert said == [t.intended_text for t in clean[scenario.id]], scenario.id


def test_withheld_values_are_given_when_the_agent_asks() -> None:
    """A withheld value said later is said in answer to the agent's request."""
    given = 0
    for _, record in runs("forgetful_disorganized"):
        for event in (e for e in record.events if e.data.get("behavior") == "withheld"):
            turn = event.data["turn"] + 1  # caller turn n+1 answers agent turn n
            for value in event.data["values"]:
                said = [
                    t
                    for t in record.turns
                    if t.role == "user" and t.turn_id > turn and signature(value) in _sig(t)
                ]
                if not said:
                    continue  # the agent went on without it (the judges say if it asked)
                asked = next(
                    t
                    for t in record.turns
                    if t.role == "assistant" and t.turn_id == said[0].turn_id - 1
                )
                assert is_request(asked.intended_text), (record.scenario_id, asked.intended_text)
                given += 1
    assert given > 0


def _sig(turn: TurnRecord) -> str:
    return "".join(signature(t) for t in tokens(turn.intended_text))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1, 6))
@pytest.mark.parametrize("condition", PERSONAS)
def test_no_persona_corrupts_a_pack_conversation_on_other_seeds(condition: str, seed: int) -> None:
    assert not corrupted(condition, seed), corrupted(condition, seed)


def test_elderly_audio_style_is_slower_with_longer_pauses_and_hesitations() -> None:
    scenario = pack()[0]
    clean, elderly = trial_style(scenario, "clean"), trial_style(scenario, "elderly_slow")
    assert elderly.rate_wpm < clean.rate_wpm
    assert elderly.pause_s[0] > clean.pause_s[0] and elderly.pause_s[1] > clean.pause_s[1]
    assert elderly.hesitation_rate > 0 == clean.hesitation_rate
    assert trial_style(scenario, "aggressive_impatient").rate_wpm > clean.rate_wpm
