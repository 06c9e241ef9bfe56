"""The scripted caller under a behaviour persona, turn by turn (tasks.simulate.caller.persona)."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from perturbations.behavior import FORGETFUL_DISORGANIZED, PersonaParams, behavior_rng
from perturbations.conditions import ConditionSpec
from scenarios.loader import load_scenario_dir
from scenarios.models import Scenario
from tasks.metrics.runner import run_metrics
from tasks.simulate import SimulationConfig, simulate_text
from tasks.simulate.caller.caller import REPEAT_REQUEST, ScriptedCaller
from tasks.simulate.caller.persona import ASK_REPEAT, LIKE_I_SAID, WITHHOLD, persona_rngs
from tasks.simulate.callers import build_caller
from tasks.simulate.channel import channel_seed
from tasks.simulate.dialogue.cues import is_repeat_request
from tasks.simulate.dialogue.script import build_script
from tasks.simulate.reference.asking import WHICH_ONE
from tasks.sources import BUILTIN_PACK


@cache
def pack() -> dict[str, Scenario]:
    return {s.id: s for s in load_scenario_dir(BUILTIN_PACK)}


def persona(**rates: float) -> PersonaParams:
    return PersonaParams(behavior="test", persona_text="A test caller.", **rates)


def forced(**rates: float) -> ConditionSpec:
    return ConditionSpec(name="forced", persona=persona(**rates))


def caller(sid: str, **rates: float) -> ScriptedCaller:
    return ScriptedCaller(pack()[sid], persona(**rates), persona_rngs(7))


def test_asks_to_repeat_at_most_every_other_turn_and_never_on_an_empty_turn() -> None:
    c = caller("air-001", ask_repeat_rate=1.0)
    greeting = "Hello! How can I help you today?"
    first = c.respond(greeting)
    assert first.text == ASK_REPEAT and first.behavior == ["ask_repeat"]
    assert is_repeat_request(ASK_REPEAT)
    second = c.respond(greeting)  # the agent said it again: now the caller answers
    assert second.behavior == [] and second.text == build_script(pack()["air-001"]).user_lines[0]
    assert c.respond("Could you spell that?").behavior == ["ask_repeat"]
    empty = c.respond("")  # heard nothing: the plain repeat request, not a persona draw
    assert empty.text == REPEAT_REQUEST and empty.behavior == []
    assert "ask_repeat" not in c.respond("Okay, and your last name?").behavior
    asks = [e for e in c.events if e.kind == "persona"]
    assert [e.data["behavior"] for e in asks] == ["ask_repeat", "ask_repeat"]


def test_repeats_a_piece_it_said_but_never_on_its_first_line() -> None:
    c = caller("itsm-004", repeat_rate=1.0)
    lines = build_script(pack()["itsm-004"]).user_lines
    first = c.respond("Hello! How can I help you today?")
    assert first.text == lines[0] and first.behavior == []
    second = c.respond(build_script(pack()["itsm-004"]).agent_text(1))
    assert second.behavior == ["repeated"]
    assert second.text.startswith(LIKE_I_SAID) and second.text.endswith(lines[1])
    piece = second.text[len(LIKE_I_SAID) : -len(lines[1])].strip(" .").lower()
    assert piece and piece in lines[0].lower()


def test_withholds_only_what_the_agent_did_not_just_ask_for() -> None:
    script = build_script(pack()["hr-002"])
    asked = ScriptedCaller(pack()["hr-002"], persona(withhold_rate=1.0), persona_rngs(1))
    # The agent asks for the employee ID and date of birth: the line giving them is said.
    asked.respond(script.agent_text(0))
    said = asked.respond(script.agent_text(1))
    assert said.text == script.user_lines[1] and said.behavior == []


def test_a_withheld_value_is_given_as_soon_as_the_agent_asks() -> None:
    scenario = pack()["hr-002"]
    record = simulate_text(scenario, SimulationConfig(condition=forced(withhold_rate=1.0)))
    withheld = [e for e in record.events if e.kind == "persona"]
    assert withheld and all(e.data["behavior"] == "withheld" for e in withheld)
    user = [t.intended_text for t in record.turns if t.role == "user"]
    excuse = next(i for i, text in enumerate(user) if WITHHOLD in text)
    # The colleague's employee id, not the caller's own, answers "your colleague employee id".
    assert any("seven two two nine three nine" in text for text in user[excuse + 1 :])
    scores = {s.name: s for s in run_metrics(record, scenario, ["task_completion"])}
    assert scores["task_completion"].score == 1.0


def test_each_turn_draws_from_its_own_generator() -> None:
    asked: list[int] = []

    def rngs(turn: int) -> np.random.Generator:
        asked.append(turn)
        return behavior_rng(3, "persona", turn)

    c = ScriptedCaller(pack()["air-001"], FORGETFUL_DISORGANIZED, rngs)
    for _ in range(4):
        c.respond("")  # whatever the branch, each turn takes its own draw
    assert asked == [0, 1, 2, 3]


def test_the_same_trial_behaves_the_same_and_another_trial_differently() -> None:
    scenario = pack()["hr-002"]

    def said(trial: int) -> list[str]:
        config = SimulationConfig(condition="forgetful_disorganized", trial=trial)
        return [t.intended_text for t in simulate_text(scenario, config).turns]

    assert said(0) == said(0)
    assert any(said(0) != said(t) for t in range(1, 6))


@pytest.mark.parametrize("condition", ["elderly_slow", "forgetful_disorganized+noise"])
def test_scripted_definition_plays_the_condition_persona(condition: str) -> None:
    scenario = pack()["air-001"]
    config = SimulationConfig(condition=condition, seed=5)
    built = build_caller("scripted", scenario, config)
    assert isinstance(built, ScriptedCaller) and built.persona is not None
    assert built.persona.params.behavior == condition.split("+")[0]
    # Its draws come from the trial's channel seed, not from anything the agent does.
    expected = behavior_rng(channel_seed(scenario, config), "persona", 0).random(4)
    assert built.persona.rng_for(0).random(4).tolist() == expected.tolist()


def test_without_a_persona_the_caller_is_unchanged() -> None:
    scenario = pack()["air-001"]
    built = build_caller("scripted", scenario, SimulationConfig(condition="noise"))
    assert isinstance(built, ScriptedCaller) and built.persona is None
    record = simulate_text(scenario, SimulationConfig())
    assert not [e for e in record.events if e.kind == "persona"]
    lines = build_script(scenario).user_lines
    assert [t.intended_text for t in record.turns if t.role == "user"] == lines


def test_owed_value_answers_a_question_it_cannot_place_but_not_a_say_again() -> None:
    script = build_script(pack()["itsm-004"])
    c = ScriptedCaller(pack()["itsm-004"], persona(withhold_rate=1.0), persona_rngs(2))
    for block in range(3):
        said = c.respond(script.agent_text(block))
    assert said.behavior == ["withheld"] and WITHHOLD in said.text
    assert c.persona is not None and [it.value for it in c.persona.pending] == ["AST-MON-697064"]
    again = c.respond(WHICH_ONE)
    assert again.kind == "repeat" and again.text == said.text
    answer = c.respond("Could you please tell me your affected system?")
    assert answer.kind == "answer" and "six nine seven zero six four" in answer.text
    assert not c.persona.pending
