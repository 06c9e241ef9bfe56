"""conversation_valid_end, conversation_correctly_finished, conversation_completed_on_time."""

from __future__ import annotations

import pytest

from tasks.metrics.context import build_context
from tasks.metrics.conversation_completed_on_time import compute as on_time
from tasks.metrics.conversation_correctly_finished import compute as correctly_finished
from tasks.metrics.conversation_valid_end import compute as valid_end
from tests.tasks.metrics.builders import (
    agent_timeout_record,
    audio_record,
    make_record,
    make_scenario,
    text_record,
)


def _ctx(record):
    return build_context(record, make_scenario())


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, 1.0),
        ({"end_reason": "transfer"}, 1.0),
        ({"caller_ended": False}, 0.0),
        ({"end_reason": "max_duration", "caller_ended": False}, 0.0),
        ({"end_reason": "inactivity_timeout", "caller_ended": False}, 0.0),
    ],
)
def test_valid_end_rules(fields: dict, expected: float) -> None:
    score = valid_end(_ctx(audio_record(**fields)))
    assert score.score == expected and score.error is None
    assert score.details["ended_properly"] is (expected == 1.0)


@pytest.mark.parametrize("end_reason", ["goodbye", "transfer"])
def test_an_agent_that_hangs_up_ends_the_call_validly(end_reason: str) -> None:
    from tasks.records import TimelineEvent

    record = audio_record(end_reason=end_reason, caller_ended=False)
    record.events.append(TimelineEvent(t_s=9.0, source="agent", kind="end_call"))
    score = valid_end(_ctx(record))
    assert score.score == 1.0 and score.details["reason"] == "agent_ended_call"
    # A time-limited call is not an agent hang-up, whatever events it carries.
    record.end_reason = "max_duration"
    assert valid_end(_ctx(record)).score == 0.0


def test_agent_timeout_is_a_valid_end() -> None:
    score = valid_end(_ctx(agent_timeout_record()))
    assert score.score == 1.0 and score.details["reason"] == "agent_timeout_on_user_turn"


def test_harness_error_and_empty_record_are_errors() -> None:
    crashed = valid_end(
        _ctx(text_record(status="infra_error", end_reason="harness_error", error="socket died"))
    )
    assert crashed.error is not None and "socket died" in crashed.error
    empty = valid_end(_ctx(make_record([])))
    assert empty.error is not None and empty.score == 0.0


def test_correctly_finished_and_on_time() -> None:
    assert correctly_finished(_ctx(audio_record())).score == 1.0
    missed = correctly_finished(_ctx(agent_timeout_record(end_reason="inactivity_timeout")))
    assert missed.score == 0.0 and missed.details["last_audio_speaker"] == "user"
    assert on_time(_ctx(audio_record())).score == 1.0
    assert on_time(_ctx(audio_record(end_reason="max_duration"))).score == 0.0
    assert on_time(_ctx(audio_record(end_reason="inactivity_timeout"))).score == 1.0
