"""Turns, latencies and interruptions from measured speech segments."""

from __future__ import annotations

from tasks.simulate.clocks.timeline import CallLog, UtteranceLog, build_turns
from tasks.simulate.voices import persona_style


def log(**overrides: object) -> CallLog:
    base = CallLog(
        utterances=[
            UtteranceLog(turn_id=1, text="Hi, I need help.", start_s=3.0, end_s=5.0),
            UtteranceLog(turn_id=2, text="Yes.", start_s=9.0, end_s=9.6),
        ],
        caller_segments=[(3.02, 4.9), (9.0, 9.5)],
        agent_segments=[(0.1, 2.0), (5.9, 8.0)],
        agent_texts=[(0.05, "Hello!"), (5.8, "Sure.")],
        agent_transcripts=[(5.7, "hi i need help")],
        caller_heard=[(2.4, "hello"), (8.5, "sure")],
    )
    return base.model_copy(update=overrides)


def test_turns_pair_each_caller_utterance_with_the_reply_after_it() -> None:
    turns = build_turns(log())
    assert [(t.turn_id, t.role) for t in turns] == [
        (0, "assistant"), (1, "user"), (1, "assistant"), (2, "user"),
    ]  # fmt: skip
    greeting, user1, reply1, user2 = turns
    assert greeting.intended_text == "Hello!" and greeting.heard_text == "hello"
    assert user1.heard_text == "hi i need help" and user1.intended_text == "Hi, I need help."
    assert reply1.latency_s == 1.0 and not reply1.interrupts
    assert user2.heard_text == "" and not user2.interrupts
    assert all(s.end_s >= s.start_s for t in turns for s in t.segments)


def test_caller_talking_over_the_agent_is_a_user_interruption() -> None:
    turns = build_turns(log(agent_segments=[(0.1, 2.0), (5.9, 10.2)]))
    reply1 = turns[2]
    user2 = turns[3]
    assert user2.interrupts and reply1.interrupted


def test_agent_starting_before_the_caller_finished_is_an_agent_interruption() -> None:
    turns = build_turns(log(agent_segments=[(0.1, 2.0), (4.5, 8.0)]))
    user1, reply1 = turns[1], turns[2]
    assert reply1.interrupts and user1.interrupted
    assert reply1.latency_s is not None and reply1.latency_s < 0


def test_silent_agent_turn_has_no_assistant_record() -> None:
    turns = build_turns(log(agent_segments=[(0.1, 2.0)], agent_texts=[(0.05, "Hello!")]))
    assert [t.role for t in turns] == ["assistant", "user", "user"]


def test_persona_text_sets_pace_and_patience() -> None:
    impatient = persona_style("You speak curtly and get frustrated if things move slowly.")
    elderly = persona_style("An elderly caller who speaks slowly.")
    plain = persona_style("Polite and clear.")
    assert impatient.barge_in_after_s is not None and impatient.rate_wpm > plain.rate_wpm
    assert elderly.rate_wpm < plain.rate_wpm and elderly.pause_s[0] > plain.pause_s[0]
    assert plain.barge_in_after_s is None and plain.disfluency == 0
