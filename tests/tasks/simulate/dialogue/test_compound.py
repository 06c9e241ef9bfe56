"""Compound questions: the scripted caller answers every part and never hangs up on them;
the reference agent asks for a part the answer left out; text mode completes the records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import scenarios
from scenarios.loader import load_scenario_dir
from scenarios.models import Scenario
from tasks.records import AttemptRecord
from tasks.simulate import SimulationConfig, simulate_text
from tasks.simulate.caller.caller import CLOSING, ScriptedCaller
from tasks.simulate.dialogue.cues import asks_question, clauses, wraps_up

PACK_DIR = Path(scenarios.__file__).resolve().parent / "pack"


@pytest.fixture(scope="module")
def choice() -> dict[str, Scenario]:
    """The two pack records with a seat-and-meal question; "closing": the one whose
    compound answer is also the caller's goodbye."""
    found = [s for s in load_scenario_dir(PACK_DIR, ["airline"])
             if "Meal request" in s.user_goal["information_required"]]  # fmt: skip
    closing = next(s for s in found if s.expected_trace[-1]["event_type"] == "agent_utterance")
    other = next(s for s in found if s is not closing)
    return {"closing": closing, "plain": other}


def test_cues_split_a_compound_question_and_tell_wrap_up_from_open_question() -> None:
    turn = "Shall I book it? And do you have a seat preference, and would you like a meal?"
    assert clauses(turn) == [
        "shall i book it", "do you have a seat preference", "would you like a meal"
    ]  # fmt: skip
    assert asks_question("which one would you like") and asks_question("shall i put you on it")
    assert not asks_question("your seat is twenty one c")
    assert wraps_up("is there anything else i can help you with today")
    assert not wraps_up("would you like a meal")


@pytest.mark.parametrize(
    "question",
    [
        "Could you tell me your seat preference, and what meal would you like?",
        "What seat would you like, and do you want a special meal?",
        "Could you tell me your seat preference and your meal request?",
    ],
)
def test_caller_answers_every_part_it_has_an_answer_for(
    choice: dict[str, Scenario], question: str
) -> None:
    scenario = choice["plain"]
    info = scenario.user_goal["information_required"]
    turn = ScriptedCaller(scenario).respond(question)
    assert turn.kind == "answer" and not turn.end_call
    assert info["Seat preference"] in turn.text
    assert info["Meal request"].replace("_", " ") in turn.text


def _caller_at_last_line(scenario: Scenario) -> ScriptedCaller:
    caller = ScriptedCaller(scenario)
    caller.position = len(caller.script.user_lines) - 1
    return caller


def test_last_line_answering_an_open_question_does_not_hang_up(
    choice: dict[str, Scenario],
) -> None:
    scenario = choice["closing"]
    caller = _caller_at_last_line(scenario)
    offer = caller.script.agent_text(caller.position)
    assert asks_question(offer) and "goodbye" in caller.script.user_lines[-1]
    turn = caller.respond(offer)
    assert turn.text == caller.script.user_lines[-1] and not turn.end_call
    closing = caller.respond(caller.script.agent_text(len(caller.script.user_lines)))
    assert closing.text == CLOSING and closing.end_call


@pytest.mark.parametrize(
    "heard", ["Is there anything else I can help you with today?", "Your booking is all set."]
)
def test_last_line_after_wrap_up_or_statement_hangs_up_at_once(
    choice: dict[str, Scenario], heard: str
) -> None:
    caller = _caller_at_last_line(choice["closing"])
    turn = caller.respond(heard)
    assert turn.text == caller.script.user_lines[-1] and turn.end_call


def test_asked_with_nothing_left_to_say_the_caller_says_so_once_then_closes(
    choice: dict[str, Scenario],
) -> None:
    caller = ScriptedCaller(choice["plain"])
    caller.position = len(caller.script.user_lines)
    first = caller.respond("Would you like to add travel insurance?")
    assert first.kind == "answer" and not first.end_call
    assert caller.respond("Would you like to add travel insurance?").end_call


def _check(record: AttemptRecord) -> None:
    assert record.final_db_hash == record.expected_db_hash
    calls = [c.tool_name for c in record.tool_calls if c.status == "success"]
    assert {"rebook_flight", "assign_seat", "add_meal_request", "issue_meal_voucher"} <= set(calls)
    assert record.caller_ended and record.turns[-1].role == "user"


@pytest.mark.parametrize("which", ["closing", "plain"])
def test_text_mode_completes_the_compound_question_records(
    choice: dict[str, Scenario], which: str
) -> None:
    _check(simulate_text(choice[which], SimulationConfig()))


def test_agent_asks_for_the_part_a_compound_answer_left_out(
    choice: dict[str, Scenario], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caller names the flight and the seat but forgets the meal: the agent asks for
    it (never takes the trace's meal unheard) and the booking still completes."""
    from tasks.simulate.clocks import text_mode

    scenario = choice["closing"]
    meal = scenario.user_goal["information_required"]["Meal request"].replace("_", " ")
    real = text_mode.build_caller

    class Forgetful:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def respond(self, heard: str) -> Any:
            turn = self.inner.respond(heard)
            return turn.model_copy(update={"text": turn.text.replace(f", and a {meal} meal", "")})

    monkeypatch.setattr(text_mode, "build_caller", lambda *a, **k: Forgetful(real(*a, **k)))
    record = simulate_text(scenario, SimulationConfig())
    asked = [
        t.intended_text for t in record.turns_of("assistant") if "meal type" in t.intended_text
    ]
    assert asked == ["Could you please tell me your meal type?"]
    _check(record)


def _offers(scenario: Scenario) -> list[dict[str, Any]]:
    response = next(e["response"] for e in scenario.expected_trace
                    if e.get("tool_name") == "search_rebooking_options"
                    and e["event_type"] == "tool_response")  # fmt: skip
    return list(response["options"])


def _with_caller_words(monkeypatch: pytest.MonkeyPatch, old: str, new: str, times: int) -> None:
    """The agent hears ``new`` where the caller said ``old``, the first ``times`` times."""
    from tasks.simulate.clocks import text_mode

    real = text_mode.build_caller
    left = [times]

    class Rewording:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def respond(self, heard: str) -> Any:
            turn = self.inner.respond(heard)
            if old in turn.text and left[0] > 0:
                left[0] -= 1
                return turn.model_copy(update={"text": turn.text.replace(old, new)})
            return turn

    monkeypatch.setattr(text_mode, "build_caller", lambda *a, **k: Rewording(real(*a, **k)))


def _rebooked(record: AttemptRecord) -> str:
    return next(c.params["new_journey_id"] for c in record.tool_calls
                if c.tool_name == "rebook_flight")  # fmt: skip


def test_agent_books_the_flight_it_heard_chosen_not_the_traces(
    choice: dict[str, Scenario], monkeypatch: pytest.MonkeyPatch
) -> None:
    from scenarios.generate.spoken import spoken_time

    scenario = choice["plain"]
    first, second = _offers(scenario)[:2]
    said = spoken_time(second["segments"][0]["scheduled_departure"])
    other = spoken_time(first["segments"][0]["scheduled_departure"])
    _with_caller_words(monkeypatch, f"take the {said} one", f"take the {other} one", 9)
    record = simulate_text(scenario, SimulationConfig())
    assert _rebooked(record) == first["journey_id"]  # the trace booked the second
    assert record.final_db_hash != record.expected_db_hash


def test_agent_asks_again_when_it_did_not_hear_which_flight(
    choice: dict[str, Scenario], monkeypatch: pytest.MonkeyPatch
) -> None:
    from scenarios.generate.spoken import spoken_time
    from tasks.simulate.reference.asking import WHICH_ONE

    scenario = choice["plain"]
    second = _offers(scenario)[1]
    said = spoken_time(second["segments"][0]["scheduled_departure"])
    _with_caller_words(monkeypatch, f"take the {said} one", "take that one", 1)
    record = simulate_text(scenario, SimulationConfig())
    spoken = [t.intended_text for t in record.turns_of("assistant")]
    assert spoken.count(WHICH_ONE) == 1
    assert _rebooked(record) == second["journey_id"]
    assert record.final_db_hash == record.expected_db_hash


def test_caller_repeats_its_choice_when_asked_which_one_again(choice: dict[str, Scenario]) -> None:
    """Even with "say that again" misheard, "sorry, which one" asks for the choice again."""
    caller = ScriptedCaller(choice["plain"])
    line = caller.respond("")  # heard nothing: asks to repeat
    first = caller.respond("Hello! How can I help you today?")
    assert first.kind == "line" and line.kind == "repeat_request"
    again = caller.respond("sorry which one would you like could you a match id")
    assert again.kind == "repeat" and again.text == first.text
