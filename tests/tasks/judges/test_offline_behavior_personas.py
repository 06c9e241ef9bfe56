"""What a behaviour persona may do (spec 8.1) is not a corrupted test: withholding a value
it gives once asked, restating itself, asking the agent to say it again. Real drift is
still flagged."""

from __future__ import annotations

from tasks.judges.inputs import TraceItem
from tasks.judges.offline.behavior import asks_for_action
from tasks.simulate.caller.persona import ASK_REPEAT, LIKE_I_SAID, WITHHOLD
from tests.tasks.judges.test_offline_behavior import agent, detected, tool, user

HELLO = agent(0, "Hello! How can I help?")
ASK_ID = agent(1, "Could you please tell me your employee ID?")


def test_a_value_withheld_then_given_when_asked_is_not_missing() -> None:
    trace = [
        HELLO,
        user(1, f"My monitor died. {WITHHOLD}"),
        ASK_ID,
        user(2, "E M P five five zero five two three."),
        agent(2, "Thanks. Anything else I can help you with?"),
        user(3, "No, thanks, goodbye."),
    ]
    assert detected(trace) == set()


def test_a_value_withheld_and_never_given_is_still_missing() -> None:
    trace = [
        HELLO,
        user(1, f"My monitor died. {WITHHOLD}"),
        ASK_ID,
        user(2, "I don't know, sorry."),
        agent(2, "I can't open a ticket without it. Anything else I can help you with?"),
        user(3, "No, goodbye."),
    ]
    assert detected(trace) == {"missing_information"}


def _twice(between: str) -> list[TraceItem]:
    return [
        HELLO,
        user(1, "My monitor died, I'm E M P five five zero five two three."),
        agent(1, "Shall I open a ticket?"),
        user(2, "Yes, please open a ticket."),
        *tool(2, "create_incident_ticket"),
        agent(2, "Your ticket is open."),
        user(3, between),
        TraceItem(kind="tool_call", turn_id=3, tool_name="create_incident_ticket", params={"n": 2}),
        TraceItem(
            kind="tool_response",
            turn_id=3,
            tool_name="create_incident_ticket",
            response={"status": "success"},
        ),
        agent(3, "Ticket open. Anything else I can help you with?"),
        user(4, "No, thanks, goodbye."),
    ]


def test_asking_to_hear_it_again_or_restating_is_not_asking_again() -> None:
    assert detected(_twice(ASK_REPEAT)) == set()
    assert detected(_twice(f"{LIKE_I_SAID} please open a ticket. Okay, thanks.")) == set()


def test_a_caller_that_asks_for_the_write_again_still_duplicates_it() -> None:
    assert detected(_twice("Can you open a ticket please?")) == {"duplicate_modifications"}
    assert detected(_twice(f"{LIKE_I_SAID} my monitor died. Can you open it again?")) == {
        "duplicate_modifications"
    }


def test_an_off_goal_request_after_an_ask_repeat_is_still_extra() -> None:
    trace = [
        HELLO,
        user(1, "My monitor died."),
        agent(1, "Ticket open."),
        user(2, ASK_REPEAT),
        agent(2, "Your ticket is open."),
        user(3, "Great. Can you also order a pizza to my desk?"),
        *tool(3, "order_pizza"),
        agent(3, "Done. Anything else I can help you with?"),
        user(4, "No, goodbye."),
    ]
    assert detected(trace) == {"extra_modifications"}


def test_what_asks_for_an_action() -> None:
    assert not asks_for_action(ASK_REPEAT)
    assert not asks_for_action("Sorry, I didn't catch that. Could you repeat it?")
    assert not asks_for_action(f"{LIKE_I_SAID} I need a new monitor. Yes, that's right.")
    assert asks_for_action(f"{LIKE_I_SAID} I need a new monitor. Could you book a visit?")
    assert asks_for_action("Could you say that again and also book a visit for Friday please?")
