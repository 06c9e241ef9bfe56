"""Wire protocol parsing: valid messages both ways, malformed frames as error values."""

from __future__ import annotations

import base64
import json

import pytest

from tasks.simulate.wire import protocol as wire


def test_caller_opening_and_media_round_trip() -> None:
    opening = [wire.parse_caller_message(m) for m in wire.start_messages("MZ1", "CA1", {"a": "b"})]
    assert isinstance(opening[0], wire.Connected)
    start = opening[1]
    assert isinstance(start, wire.Start) and start.streamSid == "MZ1"
    assert start.start.mediaFormat.encoding == "audio/x-mulaw"
    assert (start.start.mediaFormat.sampleRate, start.start.mediaFormat.channels) == (8000, 1)
    assert start.start.customParameters == {"a": "b"}
    media = wire.parse_caller_message(wire.media_message("MZ1", b"\x7f" * 160, 40, 3))
    assert isinstance(media, wire.Media)
    assert media.media.audio() == b"\x7f" * 160
    assert media.media.timestamp == "40" and media.media.chunk == "3"


def test_agent_messages_parse() -> None:
    frame = base64.b64encode(b"\xff" * 160).decode()
    cases = {
        "media": {"event": "media", "streamSid": "MZ1", "media": {"payload": frame}},
        "mark": {"event": "mark", "streamSid": "MZ1", "mark": {"name": "reply-1"}},
        "clear": {"event": "clear", "streamSid": "MZ1"},
        "agent_text": {"event": "agent_text", "streamSid": "MZ1", "text": "Hi", "kind": "response"},
        "end_call": {"event": "end_call", "streamSid": "MZ1"},
        "sync": {"event": "sync", "streamSid": "MZ1", "sync": {"tick": 3}},
    }
    for event, payload in cases.items():
        message = wire.parse_agent_message(json.dumps(payload))
        assert not isinstance(message, wire.ProtocolError), (event, message)
        assert message.event == event


def test_speech_events_carry_timestamps() -> None:
    start = wire.parse_caller_message(
        json.dumps({"event": "user_speech_start", "streamSid": "MZ1", "timestamp_ms": "1520"})
    )
    assert isinstance(start, wire.UserSpeechStart) and start.timestamp_ms == 1520
    missing = wire.parse_caller_message(json.dumps({"event": "user_speech_stop", "streamSid": "x"}))
    assert isinstance(missing, wire.ProtocolError) and "timestamp_ms" in missing.reason


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        (b"\x00\x01binary", "binary frame"),
        ("{not json", "invalid JSON"),
        ("[1, 2]", "JSON object"),
        (json.dumps({"streamSid": "MZ1"}), "JSON object with an 'event'"),
        (json.dumps({"event": "media", "streamSid": "MZ1"}), "media"),
        (
            json.dumps({"event": "media", "streamSid": "MZ1", "media": {"payload": "@@@"}}),
            "not valid base64",
        ),
        (json.dumps({"event": "media", "streamSid": "MZ1", "media": {"payload": ""}}), "empty"),
        (json.dumps({"event": "mark", "streamSid": "MZ1", "mark": {"name": ""}}), "mark"),
        (json.dumps({"event": "sync", "streamSid": "MZ1", "sync": {"tick": -1}}), "tick"),
        ("x" * (wire.MAX_MESSAGE_BYTES + 1), "too large"),
    ],
)
def test_malformed_agent_frames_become_error_values(raw: object, needle: str) -> None:
    result = wire.parse_agent_message(raw)
    assert isinstance(result, wire.ProtocolError)
    assert needle in result.reason


def test_unknown_agent_events_are_kept_but_never_break_the_call() -> None:
    other = wire.parse_agent_message(json.dumps({"event": "agent_timing", "latency_ms": 12}))
    assert isinstance(other, wire.OtherEvent) and other.data["latency_ms"] == 12
    assert isinstance(wire.parse_agent_message('{"event": "transcript"}'), wire.OtherEvent)


def test_caller_only_events_are_rejected_from_the_agent() -> None:
    start = wire.start_messages("MZ1", "CA1", {})[1]
    assert isinstance(wire.parse_agent_message(start), wire.ProtocolError)
    clear = json.dumps({"event": "clear", "streamSid": "MZ1"})
    assert isinstance(wire.parse_caller_message(clear), wire.ProtocolError)


def test_wrong_media_format_is_refused() -> None:
    start = json.loads(wire.start_messages("MZ1", "CA1", {})[1])
    start["start"]["mediaFormat"]["sampleRate"] = 16000
    result = wire.parse_caller_message(json.dumps(start))
    assert isinstance(result, wire.ProtocolError) and "sampleRate" in result.reason
