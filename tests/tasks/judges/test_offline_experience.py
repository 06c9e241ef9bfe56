"""Offline conciseness and conversation-progression judges."""

from __future__ import annotations

import json

from tasks.judges import JudgeTask, make_judge
from tasks.judges.inputs import ConcisenessInput, ConversationInput, TraceItem

WRITE_TOOLS = [
    {"id": "rebook_flight", "tool_type": "write"},
    {"id": "get_reservation", "tool_type": "auth"},
]
LIST_TURN = (
    "I have several options to Boston today. Flight six eighty two at eleven forty a.m., "
    "arriving two ten p.m., no fare difference. Flight four sixteen at two fifty five p.m., "
    "arriving five thirty p.m., forty-eight dollars more. Flight nine oh three at four twenty "
    "p.m. with a connection, arriving nine fifty five p.m., twenty dollars more. And flight two "
    "forty eight at seven thirty p.m., arriving ten oh five p.m., sixty-nine dollars more. On "
    "the earlier flights only middle seats remain, but I can request an aisle. Which one?"
)


def conciseness(trace: list[TraceItem]) -> dict[int, dict]:
    verdict = make_judge("offline").evaluate(
        JudgeTask(metric="conciseness", inputs=ConcisenessInput(trace=trace))
    )
    return {item["turn_id"]: item for item in json.loads(verdict.raw_text)}


def test_conciseness_short_turn_is_3_and_list_reading_is_1() -> None:
    trace = [
        TraceItem(kind="assistant", turn_id=0, text="Hi! How can I help?"),
        TraceItem(kind="user", turn_id=1, text="I missed my flight to Boston."),
        TraceItem(kind="assistant", turn_id=1, text=LIST_TURN),
        TraceItem(kind="user", turn_id=2, text="The first one."),
    ]
    out = conciseness(trace)
    assert out[0]["rating"] == 3 and out[0]["failure_modes"] == []
    assert out[1]["rating"] == 1
    assert {"excess_information_density", "over_enumeration_or_list_exhaustion"} <= set(
        out[1]["failure_modes"]
    )
    assert out[2]["rating"] is None  # no assistant speech in turn 2


def test_conciseness_medium_turn_is_2() -> None:
    text = (
        "Thanks. I see your booking from Atlanta to Boston today, and the flight already left. "
        "When a flight departs the booking is usually marked as a no-show, which can lock it. "
        "You are still inside the same-day window, so I can reinstate and rebook it. "
        "I can also check whether an aisle seat is still open on the later flights. "
        "Do you want the earliest flight out, or something later this afternoon?"
    )
    out = conciseness(
        [
            TraceItem(kind="assistant", turn_id=1, text=text),
            TraceItem(kind="assistant", turn_id=2, text="Okay."),
        ]
    )
    assert out[1]["rating"] == 2 and out[1]["failure_modes"]


def progression(trace: list[TraceItem]) -> dict:
    inputs = ConversationInput(trace=trace, tools=WRITE_TOOLS)
    verdict = make_judge("offline").evaluate(
        JudgeTask(metric="conversation_progression", inputs=inputs)
    )
    return json.loads(verdict.raw_text)


def lookup(turn: int, code: str = "ZK3FFW", ok: bool = True) -> list[TraceItem]:
    return [
        TraceItem(
            kind="tool_call",
            turn_id=turn,
            tool_name="get_reservation",
            params={"confirmation_number": code},
        ),
        TraceItem(
            kind="tool_response",
            turn_id=turn,
            tool_name="get_reservation",
            response={"status": "success" if ok else "error"},
        ),
    ]


def test_progression_clean_is_3() -> None:
    trace = [
        TraceItem(kind="assistant", turn_id=0, text="Hello, what is your confirmation code?"),
        TraceItem(kind="user", turn_id=1, text="Z K three F F W."),
        *lookup(1),
        TraceItem(kind="assistant", turn_id=1, text="Found it. Which date would you like instead?"),
    ]
    answer = progression(trace)
    assert answer["rating"] == 3
    assert all(not d["flagged"] and d["evidence"] for d in answer["dimensions"].values())


def test_progression_repeated_call_and_re_asking_are_flagged() -> None:
    trace = [
        TraceItem(kind="assistant", turn_id=0, text="Hello!"),
        *lookup(0, code="UNKNOWN", ok=False),
        TraceItem(kind="user", turn_id=1, text="Z K three F F W."),
        *lookup(1),
        *lookup(1),
        TraceItem(
            kind="assistant", turn_id=1, text="Could you give me your confirmation number again?"
        ),
    ]
    answer = progression(trace)
    dims = answer["dimensions"]
    assert dims["unnecessary_tool_calls"]["flagged"] and dims["information_loss"]["flagged"]
    assert answer["rating"] in (1, 2)


def test_progression_duplicate_successful_write_is_severe() -> None:
    write = [
        TraceItem(kind="tool_call", turn_id=2, tool_name="rebook_flight", params={"to": "SK1"}),
        TraceItem(
            kind="tool_response",
            turn_id=2,
            tool_name="rebook_flight",
            response={"status": "success"},
        ),
    ]
    trace = [TraceItem(kind="user", turn_id=2, text="Yes, book it."), *write, *write]
    assert progression(trace)["dimensions"]["unnecessary_tool_calls"]["rating"] == 1


def test_progression_redundant_statement_across_turns() -> None:
    sentence = "Your new flight leaves Boston at nine forty tomorrow morning from gate twelve."
    trace = [
        TraceItem(kind="assistant", turn_id=1, text=sentence),
        TraceItem(kind="user", turn_id=2, text="Okay, and my bag?"),
        TraceItem(kind="assistant", turn_id=2, text=f"Your bag is moved. {sentence}"),
        TraceItem(kind="user", turn_id=3, text="Thanks, bye."),
        TraceItem(kind="assistant", turn_id=3, text="Goodbye!"),
    ]
    assert progression(trace)["dimensions"]["redundant_statements"]["flagged"]
