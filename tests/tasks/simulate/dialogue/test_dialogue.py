"""The scripted caller and the reference policy, turn by turn, on one real record."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarios.loader import load_eva_scenarios
from scenarios.models import Scenario
from tasks.simulate.caller.caller import REPEAT_REQUEST, ScriptedCaller, say_value
from tasks.simulate.clocks.record import new_gateway
from tasks.simulate.dialogue.script import build_script
from tasks.simulate.reference.policy import GREETING, NOT_HEARD, ReferencePolicy
from tasks.spoken import speak_code


@pytest.fixture(scope="module")
def airline(eva_root: Path) -> Scenario:
    return load_eva_scenarios(eva_root, ["airline"], ["1.1.2"])[0]


@pytest.fixture(scope="module")
def itsm(eva_root: Path) -> Scenario:
    return load_eva_scenarios(eva_root, ["itsm"], ["14"])[0]


def test_script_cuts_trace_into_lines_and_blocks(airline: Scenario) -> None:
    script = build_script(airline)
    assert len(script.blocks) == len(script.user_lines) + 1
    calls = [s for b in script.blocks for s in b if s.kind == "call"]
    assert calls[0].tool == "get_reservation" and calls[0].trace_response is not None


def test_caller_asks_to_repeat_when_it_heard_nothing(airline: Scenario) -> None:
    caller = ScriptedCaller(airline)
    assert caller.respond("").text == REPEAT_REQUEST
    assert caller.respond("uh").text == REPEAT_REQUEST
    assert caller.respond("").kind == "line"  # after two tries it goes on with its script


def test_caller_repeats_its_line_when_the_agent_asks(airline: Scenario) -> None:
    caller = ScriptedCaller(airline)
    first = caller.respond(GREETING)
    again = caller.respond("sorry could you say that again")
    assert again.kind == "repeat" and again.text == first.text


def test_caller_answers_a_question_its_script_does_not(itsm: Scenario) -> None:
    caller = ScriptedCaller(itsm)
    caller.respond(GREETING)
    answer = caller.respond("Could you please tell me your otp code?")
    otp = str(itsm.user_goal["information_required"]["otp_code"])
    assert answer.kind == "answer" and answer.text.rstrip(".") == say_value(otp, spell=False)
    spelled = caller.respond("I'm sorry, could you please spell your last name for me?")
    last = str(itsm.user_goal["information_required"]["last_name"])
    assert spelled.kind == "answer" and spelled.text.rstrip(".") == speak_code(last, "nato")


def test_caller_gives_up_when_the_agent_does(airline: Scenario) -> None:
    caller = ScriptedCaller(airline)
    caller.respond(GREETING)
    turn = caller.respond("I'm sorry, I'm not able to verify that information.")
    assert turn.kind == "give_up" and turn.end_call


def test_policy_asks_for_a_value_it_never_heard(itsm: Scenario) -> None:
    """The trace's agent used an OTP nobody said; ours must ask for it."""
    policy = ReferencePolicy(itsm, new_gateway(itsm))
    caller = ScriptedCaller(itsm)
    reply = policy.greet()
    asked = False
    for _ in range(12):
        said = caller.respond(reply.text)
        if said.end_call:
            break
        reply = policy.respond(said.text)
        asked = asked or "otp code" in reply.text
    assert asked


def test_policy_reads_what_it_heard_not_the_trace(airline: Scenario) -> None:
    gateway = new_gateway(airline)
    policy = ReferencePolicy(airline, gateway)
    policy.greet()
    policy.respond("Hi, I need to change my flight to March 25.")
    reply = policy.respond("Z K three F F X. Last name Rodriguez.")
    call = gateway.calls[0]
    assert call.params["confirmation_number"] == "ZK3FFX" and call.status == "error"
    assert "spell your confirmation number" in reply.text and policy.expects_code
    # A confirmation code's format (six symbols) is known from the tool schema.
    assert policy.expectation == "code:XXXXXX"


def test_caller_hears_a_request_through_homophones(itsm: Scenario) -> None:
    caller = ScriptedCaller(itsm)
    caller.respond(GREETING)
    caller.respond(build_script(itsm).agent_text(1))  # the line that gives the phone digits
    # "phone last four" misheard as "phone match for": still the same key.
    answer = caller.respond("i'm sorry could you please spell your phone match for")
    assert answer.kind == "answer" and answer.text.rstrip(".") == say_value("8174", spell=True)


def test_caller_takes_a_number_for_a_code(airline: Scenario) -> None:
    """Asked for its "confirmation code", the caller gives its confirmation number."""
    caller = ScriptedCaller(airline)
    caller.respond(GREETING)
    caller.respond(build_script(airline).agent_text(1))
    info = airline.user_goal["information_required"]
    code = next(str(v) for k, v in info.items() if "confirmation" in k.lower())
    heard = "sorry i couldn't find that could you please spell your confirmation code"
    answer = caller.respond(heard)
    assert answer.kind == "answer" and answer.text.rstrip(".") == say_value(code, spell=True)


def test_policy_asks_again_when_nothing_was_heard(airline: Scenario) -> None:
    policy = ReferencePolicy(airline, new_gateway(airline))
    policy.greet()
    assert policy.respond("").text == NOT_HEARD
    assert policy.next_line == 0
