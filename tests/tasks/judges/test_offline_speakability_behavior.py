"""Offline speakability and user-behavioural-fidelity judges."""

from __future__ import annotations

import json

import pytest

from tasks.judges import JudgeTask, make_judge
from tasks.judges.inputs import BehaviorInput, TraceItem, TurnTextInput
from tasks.judges.offline.speakability import speakability_problems


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Your seat is **14C**.", "markdown emphasis"),
        ("## Options\nOne flight left.", "markdown header"),
        ("Options:\n- SK12 at noon\n- SK14 at two", "list marker"),
        ("| flight | time |", "table"),
        ("Done!!! ------", "repeated symbols"),
        ('Result: {"status": "ok"}', "braces"),
        ("See [link] for details", "brackets"),
        ("It is done.Your code is ready", "glued words"),
        ("Have a great flight \U0001f600", "emoji"),
    ],
)
def test_speakability_problems(text: str, problem: str) -> None:
    assert problem in speakability_problems(text)


def test_speakability_plain_speech_and_tags_are_fine() -> None:
    assert (
        speakability_problems(
            "Your flight SK six twenty-one leaves at nine. [pause] Anything else?"
        )
        == []
    )
    assert speakability_problems("予約は完了しました。ありがとうございます") == []


def test_speakability_judge_output() -> None:
    task = JudgeTask(
        metric="speakability", inputs=TurnTextInput(turns={1: "Sure thing.", 2: "**Bold** claim"})
    )
    out = json.loads(make_judge("offline").evaluate(task).raw_text)
    assert [(o["turn_id"], o["rating"]) for o in out] == [(1, 1), (2, 0)]


GOAL = {
    "high_level_user_goal": "Rebook your flight to tomorrow morning.",
    "information_required": {"confirmation_number": "ZK3FFW", "last_name": "Rodriguez"},
}


def behave(trace: list[TraceItem], said: dict[int, str], **kwargs: object) -> dict:
    inputs = BehaviorInput(
        trace=trace,
        intended_user_turns=said,
        user_goal=GOAL,
        write_tools=["rebook_flight", "cancel_reservation"],
        **kwargs,
    )
    verdict = make_judge("offline").evaluate(
        JudgeTask(metric="user_behavioral_fidelity", inputs=inputs)
    )
    return json.loads(verdict.raw_text)


def conversation(last_agent: str, last_user: str) -> tuple[list[TraceItem], dict[int, str]]:
    said = {1: "I need to rebook, code Z K three F F W, last name Rodriguez.", 2: last_user}
    trace = [
        TraceItem(kind="assistant", turn_id=0, text="Hello!"),
        TraceItem(kind="user", turn_id=1, text=said[1]),
        TraceItem(kind="assistant", turn_id=1, text=last_agent),
        TraceItem(kind="user", turn_id=2, text=last_user),
    ]
    return trace, said


def test_clean_caller_is_rated_1() -> None:
    trace, said = conversation("You are rebooked. Anything else I can help you with?", "No, bye.")
    trace.insert(3, TraceItem(kind="tool_call", turn_id=1, tool_name="rebook_flight", params={}))
    answer = behave(trace, said, caller_ended=True, end_reason="goodbye")
    assert answer["rating"] == 1
    assert (
        answer["corruption_analysis"]["decision_tree_violation"]["analysis"]
        == "Not checkable by rule."
    )


def test_hanging_up_on_a_pending_question_is_premature() -> None:
    trace, said = conversation("I found a 9 AM flight for 75 dollars. Shall I book it?", "Bye.")
    answer = behave(trace, said, caller_ended=True, end_reason="goodbye")
    assert answer["rating"] == 0 and answer["corruption_analysis"]["premature_ending"]["detected"]


def test_withholding_required_information_is_detected() -> None:
    said = {1: "I need to rebook my flight.", 2: "I don't want to say."}
    trace = [
        TraceItem(kind="user", turn_id=1, text=said[1]),
        TraceItem(kind="assistant", turn_id=1, text="What is your confirmation number?"),
        TraceItem(kind="user", turn_id=2, text=said[2]),
    ]
    answer = behave(trace, said)
    assert answer["corruption_analysis"]["missing_information"]["detected"]


def test_wrong_language_is_detected() -> None:
    trace, said = conversation("Anything else I can help you with?", "Necesito cambiar mi vuelo")
    said = {
        1: "Hola, necesito cambiar mi vuelo para mañana por la mañana, por favor, gracias.",
        2: "Sí, el código es el mismo de siempre, muchas gracias por la ayuda de hoy señor.",
    }
    answer = behave(trace, said, language="en")
    assert answer["corruption_analysis"]["wrong_language"]["detected"]
