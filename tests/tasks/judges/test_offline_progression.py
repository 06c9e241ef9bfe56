"""What the offline progression and disambiguation checks measure (their findings), and how
fitted parameters turn findings into ratings."""

from __future__ import annotations

from typing import Any

from tasks.judges.inputs import ConversationInput, TraceItem, trace_from_events
from tasks.judges.offline.disambiguation import disambiguation_findings
from tasks.judges.offline.params import ProgressionParams
from tasks.judges.offline.progression import decide_progression, measure_progression
from tasks.judges.offline.tuning import Finding

TOOLS = [
    {"id": "get_reservation", "tool_type": "auth"},
    {"id": "get_flight_status", "tool_type": "read"},
    {"id": "search_rebooking_options", "tool_type": "read"},
    {"id": "rebook_flight", "tool_type": "write"},
]
RESERVATION = {
    "status": "success",
    "reservation": {"confirmation_number": "ZK3FFW", "flight": "SK610", "date": "2026-06-30"},
}


def agent(turn: int, text: str) -> TraceItem:
    return TraceItem(kind="assistant", turn_id=turn, text=text)


def user(turn: int, text: str) -> TraceItem:
    return TraceItem(kind="user", turn_id=turn, text=text)


def call(turn: int, name: str, params: dict[str, Any], response: Any) -> list[TraceItem]:
    return [
        TraceItem(kind="tool_call", turn_id=turn, tool_name=name, params=params),
        TraceItem(kind="tool_response", turn_id=turn, tool_name=name, response=response),
    ]


def kinds(trace: list[TraceItem]) -> list[str]:
    return [f.kind for f in measure_progression(ConversationInput(trace=trace, tools=TOOLS))]


def test_asking_again_for_what_the_caller_gave() -> None:
    trace = [
        agent(0, "What is your confirmation number?"),
        user(1, "It's Z K three F F W."),
        agent(1, "Sorry, could you repeat your confirmation number one more time?"),
    ]
    assert {"reask_said", "asks_to_remind"} <= set(kinds(trace))


def test_asking_again_after_a_failed_lookup_is_fair() -> None:
    missing = {"status": "error", "message": "No reservation found for ZK3FFW"}
    trace = [
        agent(0, "What is your confirmation number?"),
        user(1, "It's Z K three F F W."),
        *call(1, "get_reservation", {"confirmation_number": "ZK3FFW"}, missing),
        agent(1, "I can't find it. Could you repeat your confirmation number one more time?"),
    ]
    assert not {"reask_said", "asks_to_remind"} & set(kinds(trace))


def test_a_lookup_that_returns_only_known_data_is_measured() -> None:
    trace = [
        user(1, "My code is Z K three F F W."),
        *call(1, "get_reservation", {"confirmation_number": "ZK3FFW"}, RESERVATION),
        *call(1, "get_flight_status", {"flight_number": "SK610"}, RESERVATION),
        agent(1, "Found it."),
    ]
    (found,) = [
        f
        for f in measure_progression(ConversationInput(trace=trace, tools=TOOLS))
        if f.kind == "known_data_call"
    ]
    assert found.measures["known"] == 1.0


def test_an_announced_repetition_counts_unless_the_caller_asked() -> None:
    said = "Just to repeat it clearly: you are on standby for the eleven AM flight."
    trace = [agent(1, said), user(2, "Thanks, bye."), agent(2, "Goodbye!")]
    assert "announced_repeat" in kinds(trace)
    asked = [user(1, "Can you repeat that?"), agent(1, said), user(2, "Bye."), agent(2, "Bye!")]
    assert "announced_repeat" not in kinds(asked)


def test_an_open_ended_question_while_the_request_is_pending() -> None:
    trace = [
        user(1, "I need to cancel my flight."),
        agent(1, "Before I go ahead, is there anything else on your mind?"),
        user(2, "No."),
        *call(2, "get_reservation", {"confirmation_number": "ZK3FFW"}, RESERVATION),
        agent(2, "Done. Is there anything else I can help with?"),
    ]
    assert kinds(trace).count("vague_question") == 1  # the closing question is fine


def test_tool_arguments_and_responses_logged_as_json_strings_are_read() -> None:
    events = [
        {"event_type": "user_utterance", "utterance": "Code Z K three F F W."},
        {
            "event_type": "tool_call",
            "tool_name": "get_reservation",
            "params": '{"confirmation_number": "ZK3FFW"}',
        },
        {
            "event_type": "tool_response",
            "tool_name": "get_reservation",
            "response": '{"is_error": true, "error": "Reservation ZK3FFW not found"}',
        },
    ]
    trace = trace_from_events(events)
    assert trace[1].params == {"confirmation_number": "ZK3FFW"}
    assert trace[2].response == {"is_error": True, "error": "Reservation ZK3FFW not found"}


def finding(kind: str, dimension: str, **measures: float) -> Finding:
    return Finding(kind=kind, dimension=dimension, turn=1, evidence=kind, measures=measures)


def test_parameters_decide_which_findings_count_and_how_much() -> None:
    p = ProgressionParams()
    weak = finding("repeated_sentence", "redundant_statements", similarity=p.similarity - 0.05)
    strong = finding("repeated_sentence", "redundant_statements", similarity=p.similarity)
    assert decide_progression([weak], p)["rating"] == 3
    assert decide_progression([strong], p)["rating"] == p.repeated_sentence
    off = p.model_copy(update={"repeated_sentence": 3})
    assert decide_progression([strong], off)["rating"] == 3
    # The spec's combination: two findings in a dimension ("multiple") make it 1.
    assert (
        decide_progression([strong, strong], p)["dimensions"]["redundant_statements"]["rating"] == 1
    )


def test_disambiguation_findings() -> None:
    missing = {"status": "error", "message": "No reservation found for ZK3FFW"}
    refused = {"status": "error", "message": "Changes allowed once per 180 days"}
    base = [user(1, "My code is Z K three F F W.")]
    lookup = call(1, "get_reservation", {"confirmation_number": "ZK3FFW"}, missing)
    no_check = [*base, *lookup, agent(1, "Do you have another booking?")]
    check = [*base, *lookup, agent(1, "Could you spell the code for me, one letter at a time?")]
    refusal = [
        *base,
        *call(1, "get_reservation", {"confirmation_number": "ZK3FFW"}, refused),
        agent(1, "You can change it again in February."),
    ]
    assert [f.kind for f in disambiguation_findings(no_check, TOOLS)] == [
        "unverified_after_failure"
    ]
    assert disambiguation_findings(check, TOOLS) == []
    assert disambiguation_findings(refusal, TOOLS) == []
    conflict = [
        user(1, "June fifteenth, actually make that June sixteenth."),
        *call(1, "search_rebooking_options", {"date": "2026-06-16"}, {"status": "success"}),
    ]
    assert [f.kind for f in disambiguation_findings(conflict, TOOLS)] == ["conflict_read"]
