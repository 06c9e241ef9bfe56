"""A full call on the real-time clock: the openai_realtime caller (the official SDK client
against the local fake in the caller role, its "model" the scripted caller over what it
hears) phones the reference agent on a short pack record."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from scenarios.loader import load_scenario_dir
from tasks.records import AttemptRecord
from tasks.simulate import SimulationConfig, simulate
from tasks.simulate.dialogue.cues import says_goodbye
from tasks.simulate.voices import caller_recognizer
from tasks.voice.stt import SttSpec
from tests.fakes.openai_realtime_caller import FakeOpenAIRealtimeCaller, scripted_caller_brain
from tests.tasks.simulate.clocks.short_calls import first_lines

pytest.importorskip("openai")
PACK = Path(__file__).resolve().parents[4] / "scenarios" / "pack"


@pytest.fixture(scope="module")
def call(tmp_path_factory: pytest.TempPathFactory) -> tuple[AttemptRecord, Any]:
    full = next(s for s in load_scenario_dir(PACK) if s.key == "airline/air-002")
    scenario = first_lines(full, 1).model_copy(update={"expected_db": full.initial_db})
    cache = tmp_path_factory.mktemp("rt-caller-cache")
    ears = caller_recognizer(scenario, SttSpec(), cache, 0)
    with (
        pytest.MonkeyPatch.context() as env,
        FakeOpenAIRealtimeCaller(scripted_caller_brain(scenario), ears) as fake,
    ):
        env.setenv("OPENAI_API_KEY", "test-key")
        config = SimulationConfig(
            mode="audio",
            clock="realtime",
            caller="openai_realtime",
            caller_params={"base_url": fake.base_url},
            condition="noise",
            cache_dir=cache,
            max_duration_s=60,
        )
        record = simulate(scenario, config)
    return record, fake.sessions[0]


def test_the_call_ends_goodbye_with_the_callers_own_words_as_turns(
    call: tuple[AttemptRecord, Any],
) -> None:
    record, session = call
    assert (record.status, record.end_reason) == ("ok", "goodbye"), record.error
    assert record.caller_ended
    users = record.turns_of("user")
    spoken = [m["content"] for m in session.dialogue.messages if m["role"] == "assistant"]
    assert len(users) >= 2 and [u.intended_text for u in users] == spoken
    assert users[0].intended_text.startswith("Hi, my flight today was just cancelled")
    assert says_goodbye(users[-1].intended_text)
    assert all(u.segments for u in users), "each turn's audio went on the line"
    assert any(u.heard_text for u in users), "the agent heard the caller's voice"


def test_the_session_is_configured_as_the_spec_says(call: tuple[AttemptRecord, Any]) -> None:
    _, session = call
    updates = [e for e in session.received if e["type"] == "session.update"]
    assert len(updates) == 1
    audio = updates[0]["session"]["audio"]
    detection = audio["input"]["turn_detection"]
    assert (detection["threshold"], detection["prefix_padding_ms"]) == (0.5, 300)
    assert detection["silence_duration_ms"] == 500
    assert detection["create_response"] is False and detection["interrupt_response"] is False
    assert audio["input"]["format"] == {"type": "audio/pcmu"}
    assert audio["input"]["transcription"]["model"] == "whisper-1"
    assert audio["output"]["voice"] == "marin"
    assert session.session["model"] == "gpt-realtime-1.5"
    appends = [e for e in session.received if e["type"] == "input_audio_buffer.append"]
    assert appends and all(len(base64.b64decode(e["audio"])) == 2000 for e in appends)


def test_responses_only_after_the_agents_silence_and_end_call_after_goodbye(
    call: tuple[AttemptRecord, Any],
) -> None:
    record, _ = call
    caller = [e for e in record.events if e.source == "caller"]
    created = [e.t_s for e in caller if e.kind == "caller_response_created"]
    transcribed = [e.t_s for e in caller if e.kind == "assistant_speech"]
    agent_ends = [e.t_s for e in record.events if e.source == "agent" and e.kind == "speech_end"]
    assert len(created) == len(record.turns_of("user"))
    for t in created:
        assert any(h <= t for h in transcribed), "a transcription arrived first"
        last_end = max(e for e in agent_ends if e <= t + 0.05)
        # VAD's speech_end lags the last voiced frame a little; 2 s of quiet is the rule.
        assert t - last_end >= 1.7, (t, last_end)
    hangups = [e for e in caller if e.kind == "tool_call"]
    assert [h.data["refused"] for h in hangups] == [None]
    last_turn_start = record.turns_of("user")[-1].segments[0].start_s
    assert hangups[0].t_s <= last_turn_start + 0.5  # asked with the goodbye turn...
    assert record.duration_s >= record.turns_of("user")[-1].segments[-1].end_s  # ...ended after
