from __future__ import annotations

import pytest

from tasks.metrics.context import build_context, format_trace
from tests.tasks.metrics.builders import (
    agent_timeout_record,
    audio_record,
    make_record,
    make_scenario,
    silent_agent_record,
    text_record,
    turn,
)


def test_text_mode_maps_fall_back_to_intended_text() -> None:
    ctx = build_context(text_record(), make_scenario())
    assert ctx.transcribed_user_turns == ctx.intended_user_turns
    assert set(ctx.intended_assistant_turns) == {0, 1, 2}
    assert set(ctx.intended_user_turns) == {1, 2}
    assert ctx.num_user_turns == 2 and ctx.num_assistant_turns == 3
    assert not ctx.has_audio and ctx.latency_assistant_turns == {}
    assert ctx.audio_segments_user == {1: [], 2: []}
    assert ctx.last_audio_speaker == "assistant"
    assert not ctx.agent_timeout_on_user_turn
    assert ctx.user_persona == "calm" and ctx.expected_db["session"]


def test_audio_maps_segments_and_latency() -> None:
    ctx = build_context(audio_record(), make_scenario())
    assert ctx.transcribed_user_turns[1] == "my code is a b c one two three last name dough"
    assert ctx.intended_assistant_turns[1] == "Let me check. Your flight is rebooked."
    assert ctx.audio_segments_assistant[1] == [(5.8, 6.5), (8.0, 9.5)]
    assert ctx.latency_assistant_turns == {1: pytest.approx(0.8), 2: pytest.approx(1.0)}
    assert 0 not in ctx.latency_assistant_turns
    assert ctx.num_tool_calls == 2
    assert ctx.tool_params[0] == {
        "tool_name": "get_reservation",
        "tool_parameters": {"confirmation_number": "ABC123", "last_name": "doe"},
    }
    assert ctx.tool_responses[1]["tool_response"] == {"status": "success"}


def test_trace_orders_speech_and_tools_by_time() -> None:
    ctx = build_context(audio_record(), make_scenario())
    kinds = [(e.get("role") or e["type"], e["turn_id"]) for e in ctx.trace]
    assert kinds == [
        ("assistant", 0),
        ("user", 1),
        ("assistant", 1),
        ("tool_call", 1),
        ("tool_response", 1),
        ("tool_call", 1),
        ("tool_response", 1),
        ("assistant", 1),
        ("user", 2),
        ("assistant", 2),
    ]
    user1 = ctx.trace[1]
    assert user1["type"] == "transcribed" and "dough" in user1["content"]


def test_trace_user_entries_for_audio_native_pipelines_are_intended() -> None:
    ctx = build_context(audio_record(), make_scenario(), pipeline="s2s")
    user1 = next(e for e in ctx.trace if e.get("role") == "user")
    agent0 = ctx.trace[0]
    assert user1["type"] == "intended" and user1["content"].startswith("My code is ABC123")
    assert agent0["type"] == "transcribed" and ctx.is_s2s and ctx.is_audio_native


def test_untimed_turn_lists_tools_before_reply_and_merges_chunks() -> None:
    ctx = build_context(text_record(), make_scenario())
    turn1 = [e for e in ctx.trace if e["turn_id"] == 1]
    assert [e.get("role") or e["type"] for e in turn1] == [
        "user",
        "tool_call",
        "tool_response",
        "tool_call",
        "tool_response",
        "assistant",
    ]


def test_format_trace_blocks() -> None:
    text = build_context(text_record(), make_scenario()).format_trace()
    blocks = text.split("\n\n")
    assert blocks[0] == "Turn 0:\nassistant: Hello! How can I help you today?"
    assert blocks[1].startswith("Turn 1:\nuser: I need to rebook.")
    assert 'tool_call: get_reservation({"confirmation_number": "ABC123"' in blocks[1]
    assert 'tool_response: get_reservation: {"status": "success"}' in blocks[1]
    assert format_trace([]) == ""


def test_interruption_flags_and_tags() -> None:
    turns = [
        turn(0, "assistant", "Hello there, how can I help?", segments=[(0, 3)], interrupted=True),
        turn(1, "user", "Hi, rebook please", "hi rebook please", [(2.5, 4)], interrupts=True),
        turn(1, "assistant", "Sure", segments=[(3.8, 5)], interrupts=True),
    ]
    ctx = build_context(make_record(turns, mode="audio"), make_scenario())
    assert ctx.user_interrupted_turns == {1}
    assert ctx.assistant_interrupted_turns == {1}
    assert ctx.intended_assistant_turns[0].endswith("[likely cut off by user]")
    assert ctx.intended_assistant_turns[1].startswith("[assistant interrupts]")
    user = next(e for e in ctx.trace if e.get("role") == "user")
    assert user["content"].startswith("[user interrupts]")
    assert user["content"].endswith("[likely cut off by assistant]")


def test_agent_timeout_detection() -> None:
    assert build_context(agent_timeout_record(), make_scenario()).agent_timeout_on_user_turn
    inactivity = agent_timeout_record(end_reason="inactivity_timeout")
    ctx = build_context(inactivity, make_scenario())
    assert ctx.last_audio_speaker == "user" and ctx.agent_timeout_on_user_turn
    caller_silent = audio_record(end_reason="inactivity_timeout", caller_ended=False)
    assert not build_context(caller_silent, make_scenario()).agent_timeout_on_user_turn


def test_silent_agent_has_no_assistant_turns() -> None:
    ctx = build_context(silent_agent_record(), make_scenario())
    assert ctx.num_assistant_turns == 0 and ctx.num_user_turns == 1
    assert ctx.intended_user_turns == {1: "Hello? Is anyone there?"}
