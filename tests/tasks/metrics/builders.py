"""Small builders of scenarios and attempt records for the deterministic-metric tests.

Records are built with ``AttemptRecord(...)`` directly, the way the simulator fills them.
"""

from __future__ import annotations

from typing import Any

from scenarios.models import AgentConfig, Scenario, ToolSpec
from tasks.records import AttemptRecord, Segment, TimelineEvent, ToolCallRecord, TurnRecord

SESSION = {"confirmation_number": "ABC123", "last_name": "doe"}


def make_scenario(
    domain: str = "airline",
    expected_db: dict[str, Any] | None = None,
    tools: list[ToolSpec] | None = None,
    language: str = "en",
) -> Scenario:
    return Scenario(
        id="1.1.1",
        domain=domain,  # type: ignore[arg-type]
        language=language,
        current_date_time="2026-03-17 10:45 CST",
        user_goal={"high_level_user_goal": "rebook"},
        user_config={"name": "Jane Doe", "user_persona": "calm"},
        initial_db={"reservations": {"ABC123": {"status": "confirmed"}}},
        expected_db=expected_db
        if expected_db is not None
        else {"reservations": {"ABC123": {"status": "rebooked"}}, "session": dict(SESSION)},
        agent=AgentConfig(
            id=f"agent_{domain}",
            tools=tools
            or [
                ToolSpec(id="get_reservation", tool_type="auth"),
                ToolSpec(id="rebook_flight", tool_type="write"),
            ],
        ),
    )


def seg(start: float, end: float) -> Segment:
    return Segment(start_s=start, end_s=end)


def turn(
    turn_id: int,
    role: str,
    text: str,
    heard: str = "",
    segments: list[tuple[float, float]] | None = None,
    **kwargs: Any,
) -> TurnRecord:
    return TurnRecord(
        turn_id=turn_id,
        role=role,  # type: ignore[arg-type]
        intended_text=text,
        heard_text=heard,
        segments=[seg(a, b) for a, b in segments or []],
        **kwargs,
    )


def call(
    index: int,
    turn_id: int,
    tool: str,
    response: dict[str, Any] | None = None,
    t: float | None = None,
    **params: Any,
) -> ToolCallRecord:
    return ToolCallRecord(
        index=index,
        turn_id=turn_id,
        tool_name=tool,
        params=params,
        response=response or {"status": "success"},
        t_call_s=t,
        t_response_s=None if t is None else t + 0.1,
    )


def make_record(
    turns: list[TurnRecord],
    tool_calls: list[ToolCallRecord] | None = None,
    events: list[TimelineEvent] | None = None,
    **kwargs: Any,
) -> AttemptRecord:
    fields: dict[str, Any] = {
        "attempt_id": "run/sys/airline/1.1.1/clean/0/1",
        "run_id": "run",
        "system": "sys",
        "scenario_id": "1.1.1",
        "domain": "airline",
        "caller_ended": True,
        "end_reason": "goodbye",
        "final_db": {"reservations": {"ABC123": {"status": "rebooked"}}, "session": SESSION},
    }
    fields.update(kwargs)
    return AttemptRecord(turns=turns, tool_calls=tool_calls or [], events=events or [], **fields)


def text_record(**kwargs: Any) -> AttemptRecord:
    """A clean text-mode conversation: no segments, heard text left empty."""
    turns = [
        turn(0, "assistant", "Hello! How can I help you today?"),
        turn(1, "user", "I need to rebook. My code is ABC123, last name Doe."),
        turn(1, "assistant", "Your flight is rebooked."),
        turn(2, "user", "Thanks, goodbye."),
        turn(2, "assistant", "Goodbye!"),
    ]
    calls = [
        call(0, 1, "get_reservation", confirmation_number="ABC123", last_name="doe"),
        call(1, 1, "rebook_flight", confirmation_number="ABC123"),
    ]
    tool_calls = kwargs.pop("tool_calls", calls)
    return make_record(turns, tool_calls, mode="text", **kwargs)


def audio_record(**kwargs: Any) -> AttemptRecord:
    """An audio-mode conversation with segments and a mild mishearing."""
    turns = [
        turn(
            0,
            "assistant",
            "Hello! How can I help you today?",
            "hello how can i help you today",
            [(0.2, 2.0)],
        ),
        turn(
            1,
            "user",
            "My code is ABC123, last name Doe.",
            "my code is a b c one two three last name dough",
            [(2.6, 5.0)],
        ),
        turn(1, "assistant", "Let me check.", "let me check", [(5.8, 6.5)]),
        turn(1, "assistant", "Your flight is rebooked.", "your flight is rebooked", [(8.0, 9.5)]),
        turn(2, "user", "Thanks, goodbye.", "thanks goodbye", [(10.0, 11.0)]),
        turn(2, "assistant", "Goodbye!", "goodbye", [(12.0, 12.6)]),
    ]
    calls = [
        call(0, 1, "get_reservation", t=6.6, confirmation_number="ABC123", last_name="doe"),
        call(1, 1, "rebook_flight", t=7.0, confirmation_number="ABC123"),
    ]
    return make_record(turns, calls, mode="audio", clock="virtual", duration_s=13.0, **kwargs)


def agent_timeout_record(**kwargs: Any) -> AttemptRecord:
    """The agent answered the greeting turn, then never answered the caller."""
    turns = [
        turn(0, "assistant", "Hello!", "hello", [(0.2, 1.0)]),
        turn(1, "user", "My code is ABC123.", "my code is a b c one two three", [(1.5, 3.0)]),
    ]
    fields: dict[str, Any] = {
        "mode": "audio",
        "end_reason": "agent_timeout",
        "caller_ended": False,
        "status": "agent_error",
        "final_db": {"reservations": {"ABC123": {"status": "confirmed"}}},
    }
    fields.update(kwargs)
    return make_record(turns, **fields)


def silent_agent_record(**kwargs: Any) -> AttemptRecord:
    """The agent never produced any speech at all."""
    turns = [turn(1, "user", "Hello? Is anyone there?", "", [(0.5, 2.0)])]
    fields: dict[str, Any] = {
        "mode": "audio",
        "end_reason": "agent_timeout",
        "caller_ended": False,
        "status": "agent_error",
        "final_db": {},
    }
    fields.update(kwargs)
    return make_record(turns, **fields)
