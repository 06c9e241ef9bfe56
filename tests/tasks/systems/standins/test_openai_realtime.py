"""The official ``openai`` SDK's realtime client talks to the fake unchanged (through
``websocket_base_url``): audio both ways, a function call, usage, barge-in."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import numpy as np
import pytest

from perturbations.audio import Clip, VoiceSpec
from tasks.systems.standins.openai_realtime import FakeOpenAIRealtime
from tasks.voice.stt import Recognizer, SttSpec
from tasks.voice.telephony import resample
from tasks.voice.tts import synthesize
from tasks.voice.vad import speech_segments

openai = pytest.importorskip("openai")

CALLER = VoiceSpec(voice="en-us+klatt3", pitch=50)


def scripted_brain(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A test double of the brain: greet, call a tool with what was heard, then answer."""
    last = messages[-1]
    if last["role"] == "user":
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "lookup", "arguments": json.dumps({"heard": last["content"]})},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    if last["role"] == "tool":
        return {
            "role": "assistant",
            "content": f"The answer is {json.loads(last['content'])['answer']}.",
        }
    return {"role": "assistant", "content": "Hello, how can I help you today?"}


@pytest.fixture(scope="module")
def recognizer(tmp_path_factory: pytest.TempPathFactory) -> Recognizer:
    return Recognizer(SttSpec(lm="general"), None, tmp_path_factory.mktemp("lm"))


def pcm24(text: str, silence_s: float = 1.0) -> bytes:
    clip = resample(synthesize(text, CALLER), 24000)
    clip = Clip.concat(Clip.silence(0.3, 24000), clip, Clip.silence(silence_s, 24000))
    return clip.to_int16().astype("<i2").tobytes()


async def append(conn: Any, pcm: bytes) -> None:
    step = 24000 * 2 // 10  # 100 ms
    for i in range(0, len(pcm), step):
        await conn.input_audio_buffer.append(audio=base64.b64encode(pcm[i : i + step]).decode())


async def until(conn: Any, type_: str, seen: list[Any]) -> Any:
    async with asyncio.timeout(20):
        while True:
            event = await conn.recv()
            seen.append(event)
            if event.type == "error":
                raise AssertionError(f"fake sent an error: {event}")
            if event.type == type_:
                return event


def audio_of(events: list[Any]) -> Clip:
    data = b"".join(
        base64.b64decode(e.delta) for e in events if e.type == "response.output_audio.delta"
    )
    return Clip.from_int16(np.frombuffer(data, dtype="<i2"), 24000)


async def conversation(base_url: str) -> dict[str, Any]:
    client = openai.AsyncOpenAI(api_key="test-key", websocket_base_url=base_url)
    out: dict[str, Any] = {}
    async with client.realtime.connect(model="gpt-realtime") as conn:
        await until(conn, "session.created", [])
        await conn.session.update(
            session={
                "type": "realtime",
                "instructions": "You are a test agent.",
                "audio": {
                    "input": {
                        "format": {"type": "audio/pcm", "rate": 24000},
                        "transcription": {"model": "gpt-realtime-whisper"},
                    },
                    "output": {"format": {"type": "audio/pcm", "rate": 24000}},
                },
                "tools": [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}],
            }
        )
        await until(conn, "session.updated", [])
        await conn.response.create()
        greeting: list[Any] = []
        out["greeting_done"] = await until(conn, "response.done", greeting)
        out["greeting"] = audio_of(greeting)
        await append(conn, pcm24("What is the weather in Boston"))
        turn: list[Any] = []
        call = await until(conn, "response.function_call_arguments.done", turn)
        out["turn"] = [e.type for e in turn]
        out["call"] = call
        await until(conn, "response.done", turn)
        await conn.conversation.item.create(
            item={
                "type": "function_call_output",
                "call_id": call.call_id,
                "output": json.dumps({"answer": "sunny"}),
            }
        )
        await conn.response.create()
        answer: list[Any] = []
        out["answer_done"] = await until(conn, "response.done", answer)
        out["answer"] = audio_of(answer)
        out["answer_transcript"] = "".join(
            e.delta for e in answer if e.type == "response.output_audio_transcript.delta"
        )
        # Barge-in: speak while the next (paced) response is still being sent.
        await conn.response.create()
        barge: list[Any] = []
        await until(conn, "response.output_audio.delta", barge)
        await append(conn, pcm24("Wait, stop", silence_s=0.1))
        out["barge_started"] = await until(conn, "input_audio_buffer.speech_started", barge)
        out["barge_done"] = await until(conn, "response.done", barge)
    return out


def test_openai_sdk_realtime_client_against_the_fake(recognizer: Recognizer) -> None:
    with FakeOpenAIRealtime(scripted_brain, recognizer) as fake:
        out = asyncio.run(conversation(fake.base_url))
    greeting = out["greeting"]
    assert greeting.duration_s > 1.0 and speech_segments(greeting), "greeting is real speech"
    assert out["turn"][:4] == [
        "input_audio_buffer.speech_started",
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed",
        "conversation.item.added",
    ]
    assert "conversation.item.input_audio_transcription.completed" in out["turn"]
    heard = json.loads(out["call"].arguments)["heard"]
    assert "weather" in heard, heard  # the fake's ears decoded the caller's speech
    assert out["call"].name == "lookup"
    assert out["answer_transcript"] == "The answer is sunny."
    assert out["answer"].duration_s > 1.0
    usage = out["answer_done"].response.usage
    assert usage.output_token_details.audio_tokens > 0
    assert usage.input_token_details.audio_tokens > 0
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert out["barge_done"].response.status == "cancelled"
