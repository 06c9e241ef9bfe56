"""Caller-fidelity rules of the offline user_behavioral_fidelity judge and the spec's
exonerations (spec 4.5): who triggered a write, when hanging up is premature, when
missing information counts."""

from __future__ import annotations

import json

from tasks.judges import JudgeTask, make_judge
from tasks.judges.inputs import BehaviorInput, TraceItem

GOAL = {
    "high_level_user_goal": "Your monitor died. You want a ticket and a technician visit.",
    "information_required": {
        "employee_id": "EMP550523",
        "phone_last_four": "9131",
        "old_phone_last_four_1": "5852",
        "preferred_visit_date": "2026-08-12",
    },
}
WRITES = ["create_incident_ticket", "assign_sla_tier", "schedule_field_dispatch", "order_pizza"]


def user(turn: int, text: str) -> TraceItem:
    return TraceItem(kind="user", turn_id=turn, text=text)


def agent(turn: int, text: str) -> TraceItem:
    return TraceItem(kind="assistant", turn_id=turn, text=text)


def tool(turn: int, name: str, status: str = "success") -> list[TraceItem]:
    return [
        TraceItem(kind="tool_call", turn_id=turn, tool_name=name, params={"n": turn}),
        TraceItem(kind="tool_response", turn_id=turn, tool_name=name, response={"status": status}),
    ]


def detected(trace: list[TraceItem], caller_ended: bool = True) -> set[str]:
    said: dict[int, str] = {}
    for item in trace:
        if item.kind == "user":
            said[item.turn_id] = f"{said.get(item.turn_id, '')} {item.text}".strip()
    inputs = BehaviorInput(
        trace=trace,
        intended_user_turns=said,
        user_goal=GOAL,
        caller_ended=caller_ended,
        write_tools=WRITES,
    )
    verdict = make_judge("offline").evaluate(
        JudgeTask(metric="user_behavioral_fidelity", inputs=inputs)
    )
    answer = json.loads(verdict.raw_text)
    found = {k for k, v in answer["corruption_analysis"].items() if v["detected"]}
    assert answer["rating"] == (0 if found else 1)
    return found


def ticket_call(extra: list[TraceItem]) -> list[TraceItem]:
    return [
        agent(0, "Hello! How can I help?"),
        user(
            1,
            "My monitor died. I'm E M P five five zero five two three, last four nine one "
            "three one.",
        ),
        agent(1, "Did the basic checks help?"),
        user(2, "No, it's still dead and I can't work. Can you open a ticket please?"),
        *extra,
        agent(2, "Your ticket is open. Anything else I can help you with?"),
        user(3, "No, thanks, goodbye."),
    ]


def test_writes_the_agent_chains_after_the_requested_one_are_not_the_callers() -> None:
    trace = ticket_call([*tool(2, "create_incident_ticket"), *tool(2, "assign_sla_tier")])
    assert detected(trace) == set()


def test_an_off_goal_write_the_caller_asked_for_is_still_extra() -> None:
    trace = ticket_call(tool(2, "create_incident_ticket"))
    trace[-2:] = [
        agent(2, "Your ticket is open. Anything else I can help you with?"),
        user(3, "Yes, can you also order a pizza to my desk?"),
        *tool(3, "order_pizza"),
        agent(3, "Done. Anything else?"),
        user(4, "No, bye."),
    ]
    assert detected(trace) == {"extra_modifications"}


def test_agreeing_to_the_agents_proposal_is_not_an_extra_request() -> None:
    trace = ticket_call(tool(2, "create_incident_ticket"))
    trace[-2:] = [
        agent(2, "Ticket open. I can also order you a pizza while you wait. Shall I?"),
        user(3, "Sure, please do."),
        *tool(3, "order_pizza"),
        agent(3, "Done. Anything else?"),
        user(4, "No, bye."),
    ]
    assert detected(trace) == set()


def hang_up_after(last_agent: list[TraceItem]) -> list[TraceItem]:
    return [
        agent(0, "Hello! How can I help?"),
        user(1, "My monitor died, I'm E M P five five zero five two three."),
        *last_agent,
        user(2, "Goodbye."),
    ]


def test_hanging_up_on_a_competent_agent_is_premature() -> None:
    trace = hang_up_after([agent(1, "Which day would suit you for a technician visit?")])
    assert detected(trace) == {"premature_ending"}


def test_hanging_up_after_a_failure_or_a_transfer_offer_is_not() -> None:
    failure = [*tool(1, "create_incident_ticket", "error"), agent(1, "That failed. Try again?")]
    transfer = [agent(1, "I can't open tickets for monitors. Shall I transfer you to a person?")]
    assert detected(hang_up_after(failure)) == set()
    assert detected(hang_up_after(transfer)) == set()


def echo_call(caller_lines: list[str]) -> list[TraceItem]:
    trace = [agent(0, "Hello! How can I help?")]
    for turn, line in enumerate(caller_lines, start=1):
        trace += [user(turn, line), agent(turn, f"I heard: {line}")]
    return [*trace, user(len(caller_lines) + 1, "This isn't working. Goodbye.")]


def test_hanging_up_on_a_parroting_agent_is_not_premature() -> None:
    # The echo agent's last reply ends with the caller's own question; the agent never
    # progressed (spec 4.5: not flagged when the agent was stuck).
    lines = [
        "My monitor died, can you help?",
        "My employee ID is E M P five five zero five two three.",
        "The last four are nine one three one. Can you open a ticket?",
    ]
    assert detected(echo_call(lines)) == set()
    # Fewer parroting turns than STALL_TURNS is not yet a stall.
    assert detected(echo_call(lines[-1:])) == {"premature_ending"}


def test_an_agent_repeating_itself_or_erring_is_not_progressing() -> None:
    ask = "Could you tell me which day suits you for a technician visit?"
    looping = [agent(0, "Hello! How can I help?")]
    lines = ["My monitor died.", "Tuesday.", "I said Tuesday!", "Tuesday, please."]
    for turn, line in enumerate(lines, start=1):
        looping += [user(turn, line), agent(turn, ask)]
    # The first ask is progress; the three repeats after it are a stall.
    assert detected([*looping, user(5, "Goodbye.")]) == set()
    assert detected([*looping[:-2], user(4, "Goodbye.")]) == {"premature_ending"}
    erred = [agent(1, "I'm sorry, I encountered an error processing your request. Try again?")]
    assert detected(hang_up_after(erred)) == set()


def test_a_progressing_agent_that_reads_back_is_still_judged() -> None:
    trace = [
        agent(0, "Hello! How can I help?"),
        user(1, "My monitor died, I'm E M P five five zero five two three."),
        *tool(1, "verify_employee"),
        agent(1, "Thanks, you're verified. What are the last four digits of your phone?"),
        user(2, "Nine one three one."),
        agent(2, "Nine one three one, got it. Which day suits you for a visit?"),
        user(3, "Goodbye."),
    ]
    assert detected(trace) == {"premature_ending"}


def auth_call(reply: str, after: list[TraceItem] | None = None) -> list[TraceItem]:
    return [
        agent(0, "Hello! How can I help?"),
        user(1, "My monitor died."),
        agent(1, "Could I have the last four digits of your phone number?"),
        user(2, reply),
        *(after or []),
        agent(2, "I can't verify you without them, sorry."),
        user(3, "Okay, goodbye."),
    ]


def test_withholding_a_requested_item_is_missing_information() -> None:
    assert detected(auth_call("I'd rather not say.")) == {"missing_information"}


def test_a_variant_value_from_the_instructions_answers_the_request() -> None:
    assert detected(auth_call("It's five eight five two.")) == set()


def test_a_yes_no_confirmation_is_not_a_request_for_the_value() -> None:
    trace = auth_call("Yes, that's mine.")
    trace[2] = agent(1, "Does the phone number ending in nine one three one match yours?")
    assert detected(trace) == set()


def test_a_request_cut_off_by_the_end_of_the_call_withheld_nothing() -> None:
    """The time limit (or the agent) ended the call while the agent asked: the caller had
    no turn to answer. Hanging up on the request instead is still withholding it."""
    asked = [
        agent(0, "Hello! How can I help?"),
        user(1, "My monitor died."),
        agent(1, "Could I have the last four digits of your phone number?"),
    ]
    assert detected(asked, caller_ended=False) == set()
    assert "missing_information" in detected(asked, caller_ended=True)


def test_withholding_that_blocked_no_write_is_exonerated() -> None:
    trace = auth_call("I'd rather not say.", after=tool(2, "create_incident_ticket"))
    assert detected(trace) == set()
