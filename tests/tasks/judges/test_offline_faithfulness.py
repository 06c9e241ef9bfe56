"""The offline faithfulness judge: a clean conversation and one fault per rule."""

from __future__ import annotations

import json

from tasks.judges import JudgeTask, make_judge
from tasks.judges.inputs import ConversationInput, TraceItem

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
