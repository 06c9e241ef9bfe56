"""The offline faithfulness judge: a clean conversation and one fault per rule."""

from __future__ import annotations

import json

import pytest

from tasks.judges import JudgeTask, make_judge
from tasks.judges.inputs import ConversationInput, TraceItem
from tasks.judges.offline.faithfulness import collect_issues

POLICY = """Explain before acting: tell the caller any fee and get explicit confirmation.
Voluntary change: $75 change fee plus fare difference. Meal voucher: $12 for delays over 2 hours."""
TOOLS = [
    {"id": "get_reservation", "tool_type": "auth"},
    {
        "id": "rebook_flight",
        "tool_type": "write",
        "required_parameters": [{"name": "rebooking_type", "enum": ["voluntary", "same_day"]}],
    },
]
ROLE = "You are a voice agent for SkyWay Airlines."


def user(turn: int, text: str) -> TraceItem:
    return TraceItem(kind="user", turn_id=turn, text=text)


def agent(turn: int, text: str) -> TraceItem:
    return TraceItem(kind="assistant", turn_id=turn, text=text)


def call(turn: int, name: str, params: dict, response: dict) -> list[TraceItem]:
    return [
        TraceItem(kind="tool_call", turn_id=turn, tool_name=name, params=params),
        TraceItem(kind="tool_response", turn_id=turn, tool_name=name, response=response),
    ]


LOOKUP = {
    "status": "success",
    "reservation": {
        "confirmation_number": "ZK3FFW",
        "fare_paid": 260,
        "flight_number": "SK621",
        "date": "2026-03-20",
    },
    "options": [{"flight_number": "SK703", "fare": 300}],
}
REBOOKED = {"status": "success", "change_fee": 75, "fare_difference": 40, "total_collected": 115}


def clean_trace() -> list[TraceItem]:
    return [
        agent(0, "Hello! How can I help?"),
        user(1, "I want to change my flight. Code Z K three F F W, last name Rodriguez."),
        *call(
            1,
            "get_reservation",
            {"confirmation_number": "ZK3FFW", "last_name": "Rodriguez"},
            LOOKUP,
        ),
        agent(
            1,
            "I found flight SK six twenty-one on March twentieth. A change costs a seventy-five "
            "dollar fee plus a forty dollar fare difference, one hundred fifteen dollars in "
            "total. Shall I go ahead?",
        ),
        user(2, "Yes, go ahead."),
        *call(
            2,
            "rebook_flight",
            {"confirmation_number": "ZK3FFW", "rebooking_type": "voluntary"},
            REBOOKED,
        ),
        agent(2, "Done. You paid one hundred fifteen dollars."),
    ]


def judge(trace: list[TraceItem]) -> dict:
    inputs = ConversationInput(
        trace=trace,
        role=ROLE,
        instructions=POLICY,
        tools=TOOLS,
        current_date_time="2026-03-17 10:45 CST",
    )
    verdict = make_judge("offline").evaluate(JudgeTask(metric="faithfulness", inputs=inputs))
    assert verdict.error is None and "It cannot" in (verdict.scope or "")
    return json.loads(verdict.raw_text)


def flagged(answer: dict) -> set[str]:
    return {k for k, v in answer["dimensions"].items() if v["flagged"]}


def test_clean_conversation_is_rated_3() -> None:
    answer = judge(clean_trace())
    assert answer["rating"] == 3 and flagged(answer) == set()


def test_fabricated_identifier_in_a_write_is_rated_1() -> None:
    trace = clean_trace()
    trace[6] = TraceItem(
        kind="tool_call",
        turn_id=2,
        tool_name="rebook_flight",
        params={"confirmation_number": "QQ9XYZ", "rebooking_type": "voluntary"},
    )
    answer = judge(trace)
    assert answer["rating"] == 1 and "fabricating_tool_parameters" in flagged(answer)


def test_placeholder_in_a_lookup_is_rated_2() -> None:
    trace = clean_trace()
    trace[2] = TraceItem(
        kind="tool_call",
        turn_id=1,
        tool_name="get_reservation",
        params={"confirmation_number": "UNKNOWN", "last_name": "Rodriguez"},
    )
    answer = judge(trace)
    assert answer["dimensions"]["fabricating_tool_parameters"]["rating"] == 2


def test_charge_without_confirmation_violates_policy() -> None:
    trace = clean_trace()
    trace[5] = user(2, "Hmm, how much would that cost in total?")
    answer = judge(trace)
    assert answer["rating"] == 1 and "violating_policies" in flagged(answer)


def test_amount_from_no_source_misrepresents_the_tool_result() -> None:
    trace = clean_trace()
    trace[-1] = agent(2, "Done. You paid two hundred ninety-nine dollars.")
    answer = judge(trace)
    assert answer["dimensions"]["misrepresenting_tool_result"]["rating"] == 1


def test_invented_policy_wrong_brand_and_claimed_email_are_hallucinations() -> None:
    trace = clean_trace()
    trace[-1] = agent(
        2,
        "Done. Per our guidelines, all elite members receive complimentary "
        "lounge access. I've emailed you the receipt for Southwest six twenty-one.",
    )
    answer = judge(trace)
    evidence = answer["dimensions"]["hallucination"]["evidence"]
    assert answer["rating"] == 1
    assert "policy claim" in evidence and "Southwest" in evidence and "emailed" in evidence


def test_retry_after_failed_lookup_without_asking_is_flagged() -> None:
    trace = clean_trace()
    failed = {"status": "error", "error_type": "not_found"}
    trace[2:4] = [
        *call(
            1,
            "get_reservation",
            {"confirmation_number": "ZK3FFW", "last_name": "Rodriguez"},
            failed,
        ),
        *call(
            1,
            "get_reservation",
            {"confirmation_number": "ZK3FFW", "last_name": "Rodriguez"},
            LOOKUP,
        ),
    ]
    answer = judge(trace)
    assert answer["dimensions"]["failing_to_disambiguate"]["rating"] == 2


# --- Rules revised after false positives on golden conversations (issue 6 follow-up) ---

ITSM_TOOLS = [
    {"id": "verify_employee_auth", "tool_type": "auth"},
    {"id": "verify_otp_auth", "tool_type": "auth"},
    {"id": "check_parking", "tool_type": "read"},
    {"id": "submit_desk_assignment", "tool_type": "write"},
    {"id": "schedule_followup", "tool_type": "write"},
]


def judge_with(trace: list[TraceItem], tools: list[dict], policy: str = "") -> dict:
    inputs = ConversationInput(
        trace=trace, role=ROLE, instructions=policy, tools=tools, current_date_time="2026-10-16"
    )
    verdict = make_judge("offline").evaluate(JudgeTask(metric="faithfulness", inputs=inputs))
    return json.loads(verdict.raw_text)


def verified(dob_said: str, dob_param: str) -> list[TraceItem]:
    return [
        agent(1, "Could I have your employee ID and date of birth?"),
        user(2, f"My employee ID is E M P one two three four five six, born {dob_said}."),
        *call(
            2,
            "verify_employee_auth",
            {"employee_id": "EMP123456", "date_of_birth": dob_param},
            {"status": "success", "authenticated": True},
        ),
    ]


@pytest.mark.parametrize(
    "said",
    [
        "September twenty eighth, nineteen ninety one",
        "one nine nine one dash zero nine dash two eight",
    ],
)
def test_a_birth_date_the_caller_said_grounds_the_argument(said: str) -> None:
    trace = [
        *verified(said, "1991-09-28"),
        agent(2, "Thanks, you're verified. The HR office has your employee ID."),
    ]
    assert judge_with(trace, ITSM_TOOLS)["rating"] == 3


def test_a_birth_date_nobody_said_is_still_fabricated() -> None:
    trace = verified("September twenty eighth, nineteen ninety one", "1991-09-29")
    answer = judge_with(trace, ITSM_TOOLS)
    assert answer["dimensions"]["fabricating_tool_parameters"]["rating"] == 2


def test_the_fee_plus_fare_difference_total_is_simple_arithmetic() -> None:
    trace = clean_trace()
    trace[2:4] = call(
        1,
        "get_reservation",
        {"confirmation_number": "ZK3FFW", "last_name": "Rodriguez"},
        {**LOOKUP, "options": [{"flight_number": "SK703", "fares": {"main_cabin": 304.0}}]},
    )
    trace[4] = agent(
        1,
        "A change costs the seventy-five dollar fee plus forty-four dollars more fare, one "
        "hundred nineteen dollars in total. Shall I go ahead?",
    )
    trace[-1] = agent(2, "Done. You paid one hundred nineteen dollars.")
    assert (
        judge_with(trace, TOOLS, POLICY)["dimensions"]["misrepresenting_tool_result"]["rating"] == 3
    )
    trace[-1] = agent(2, "Done. You paid one hundred twenty nine dollars.")
    assert (
        judge_with(trace, TOOLS, POLICY)["dimensions"]["misrepresenting_tool_result"]["rating"] == 1
    )


def parking_trace(last_change: str) -> list[TraceItem]:
    failed = {
        "status": "error",
        "message": "Parking can change once per 180 days",
        "next_eligible_date": "2027-02-15",
    }
    return [
        user(1, "I'd like a parking space, please. I'm E M P one two three four five six."),
        *call(1, "check_parking", {"employee_id": "EMP123456"}, failed),
        agent(
            1,
            f"Your last change was on {last_change}, so you can change again from "
            "February fifteenth.",
        ),
    ]


def unsourced_dates(trace: list[TraceItem]) -> list[str]:
    """The statement findings about dates (measured; whether they count is a fitted
    parameter, FaithfulnessParams.unsourced_date_time)."""
    inputs = ConversationInput(
        trace=trace, role=ROLE, tools=ITSM_TOOLS, current_date_time="2026-10-16"
    )
    return [f.evidence for f in collect_issues(inputs) if f.kind == "unsourced_date_time"]


def test_a_date_derived_from_a_tool_date_and_a_stated_period_is_grounded() -> None:
    assert judge_with(parking_trace("August nineteenth"), ITSM_TOOLS)["rating"] == 3
    assert unsourced_dates(parking_trace("August nineteenth")) == []
    assert len(unsourced_dates(parking_trace("August twenty second"))) == 1


def test_a_date_time_argument_needs_the_date_and_an_offered_time() -> None:
    slots = {"status": "success", "available_slots": ["10:00", "14:00"]}
    trace = [
        user(1, "Monday, April twenty seventh, please."),
        *call(1, "check_parking", {"date": "2026-04-27"}, slots),
        agent(1, "There are openings at ten AM and two PM. Which time works for you?"),
        user(2, "Ten AM, please."),
        *call(
            2,
            "schedule_followup",
            {"appointment_datetime": "2026-04-27 10:00"},
            {"status": "success"},
        ),
        agent(2, "You're booked for April twenty seventh at ten AM."),
    ]
    assert judge_with(trace, ITSM_TOOLS)["rating"] == 3
    trace[5] = TraceItem(
        kind="tool_call",
        turn_id=2,
        tool_name="schedule_followup",
        params={"appointment_datetime": "2026-04-27 11:30"},
    )
    assert (
        "time from no source"
        in judge_with(trace, ITSM_TOOLS)["dimensions"]["fabricating_tool_parameters"]["evidence"]
    )


def test_values_given_as_an_example_are_not_claims() -> None:
    trace = clean_trace()
    trace[0] = agent(0, 'Hello! Tell me your flight number, like "SkyWay nine nine nine".')
    assert judge(trace)["rating"] == 3


def test_a_question_or_request_is_not_a_policy_claim() -> None:
    trace = clean_trace()
    trace[-1] = agent(2, "Done. Please give me the new policy number for your insurance.")
    assert judge(trace)["rating"] == 3


def desk_trace(reply: str) -> list[TraceItem]:
    desks = {"status": "success", "available_desks": ["BLD7-FL5-D520", "BLD7-FL5-D533"]}
    return [
        *call(1, "check_parking", {}, desks),
        agent(1, "Desks D five two zero by a window and D five three three are free. Which one?"),
        user(2, reply),
        *call(
            2,
            "submit_desk_assignment",
            {"desk_code": "BLD7-FL5-D520"},
            {"status": "success", "request_id": "REQ-FAC-1"},
        ),
        agent(2, "Desk D five two zero is now yours."),
    ]


def test_picking_the_offered_value_agrees_to_a_free_write() -> None:
    assert (
        judge_with(desk_trace("The window desk, D five two zero, please."), ITSM_TOOLS)["rating"]
        == 3
    )
    answer = judge_with(desk_trace("Hmm, not sure about D five two zero."), ITSM_TOOLS)
    assert "violating_policies" in flagged(answer)


def test_picking_a_value_does_not_agree_to_a_charge() -> None:
    trace = clean_trace()
    trace[5] = user(2, "The SK seven oh three flight.")
    assert "violating_policies" in flagged(judge(trace))


def test_agreement_before_a_one_time_code_check_still_holds() -> None:
    otp = {"status": "success", "authenticated": True}
    desks = {"status": "success", "available_desks": ["BLD7-FL5-D520"]}
    trace = [
        *call(1, "check_parking", {}, desks),
        agent(1, "Shall I assign desk D five two zero to you?"),
        user(2, "Yes, please assign it."),
        agent(2, "Please read me the code from the text message."),
        user(3, "Four one eight two six three."),
        *call(3, "verify_otp_auth", {"otp_code": "418263"}, otp),
        *call(3, "submit_desk_assignment", {"desk_code": "BLD7-FL5-D520"}, {"status": "success"}),
        agent(3, "Done, desk D five two zero is yours."),
    ]
    assert judge_with(trace, ITSM_TOOLS)["rating"] == 3


def test_charging_money_never_mentioned_violates_policy() -> None:
    trace = clean_trace()
    trace[4] = agent(1, "I found flight SK six twenty-one on March twentieth. Shall I move you?")
    trace[-1] = agent(2, "Done.")
    answer = judge(trace)
    assert "costs money" in answer["dimensions"]["violating_policies"]["evidence"]
    trace[4] = agent(1, "I found flight SK six twenty-one. A change fee applies. Shall I move you?")
    assert judge(trace)["dimensions"]["violating_policies"]["rating"] == 3


def test_agreement_before_one_more_requested_detail_still_holds() -> None:
    desks = {"status": "success", "available_desks": ["BLD7-FL5-D520"]}
    trace = [
        *call(1, "check_parking", {}, desks),
        agent(1, "Shall I assign desk D five two zero to you?"),
        user(2, "Yes, please assign it."),
        agent(2, "What is the reason for the move?"),
        user(3, "team_relocation."),
        *call(
            3,
            "submit_desk_assignment",
            {"desk_code": "BLD7-FL5-D520", "reason": "team_relocation"},
            {"status": "success"},
        ),
        agent(3, "Done, desk D five two zero is yours."),
    ]
    assert judge_with(trace, ITSM_TOOLS)["rating"] == 3
    trace[5] = user(3, "Actually, hold on, I'm not sure yet.")
    assert "violating_policies" in flagged(judge_with(trace, ITSM_TOOLS))


def test_a_product_named_from_separate_tool_fields_is_not_an_unknown_company() -> None:
    asset = {"status": "success", "manufacturer": "Dell", "model": "Latitude 7420"}
    trace = [
        user(1, "What laptop do I have?"),
        *call(1, "check_parking", {}, asset),
        agent(1, "It's a Dell Latitude seventy four twenty."),
    ]
    assert judge_with(trace, ITSM_TOOLS)["rating"] == 3
