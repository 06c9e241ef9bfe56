"""The official ``google-genai`` live client talks to the fake unchanged (through
``HttpOptions(base_url=...)`` and the standard ``SSL_CERT_FILE`` trust setting): audio
both ways, transcriptions, a function call, usage, barge-in."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from perturbations.audio import Clip
from tasks.systems.standins.gemini_live import FakeGeminiLive, LiveSession, camel
from tasks.voice.stt import Recognizer, SttSpec
from tasks.voice.telephony import resample
from tasks.voice.tts import synthesize
from tasks.voice.vad import speech_segments
from tests.tasks.systems.standins.test_openai_realtime import CALLER, scripted_brain

genai = pytest.importorskip("google.genai")
types = pytest.importorskip("google.genai.types")


@pytest.fixture(scope="module")
def recognizer(tmp_path_factory: pytest.TempPathFactory) -> Recognizer:
    return Recognizer(SttSpec(lm="general"), None, tmp_path_factory.mktemp("lm"))


def pcm16k(text: str, silence_s: float = 1.0) -> bytes:
    clip = resample(synthesize(text, CALLER), 16000)
    clip = Clip.concat(Clip.silence(0.3, 16000), clip, Clip.silence(silence_s, 16000))
    return clip.to_int16().astype("<i2").tobytes()


async def stream(session: Any, pcm: bytes) -> None:
    step = 16000 * 2 // 10
    for i in range(0, len(pcm), step):
        blob = types.Blob(data=pcm[i : i + step], mime_type="audio/pcm;rate=16000")
        await session.send_realtime_input(audio=blob)


async def collect(session: Any, stop: str) -> list[Any]:
    """Server messages up to and including the first whose ``stop`` part is set."""
    seen: list[Any] = []
    async with asyncio.timeout(20):
        while True:
            async for message in session.receive():
                seen.append(message)
                sc = message.server_content
                if (stop == "tool_call" and message.tool_call) or (
                    sc is not None and getattr(sc, stop, None)
                ):
                    return seen


def audio_of(messages: list[Any]) -> Clip:
    data = b"".join(
        p.inline_data.data
        for m in messages
        if m.server_content and m.server_content.model_turn
        for p in m.server_content.model_turn.parts or []
        if p.inline_data
    )
    return Clip.from_int16(np.frombuffer(data, dtype="<i2"), 24000)


async def conversation(base_url: str) -> dict[str, Any]:
    client = genai.Client(api_key="test-key", http_options=types.HttpOptions(base_url=base_url))
    config = types.LiveConnectConfig(
        response_modalities=["AUDIO"],
        system_instruction="You are a test agent.",
        tools=[{"function_declarations": [{"name": "lookup", "description": "look up"}]}],
        input_audio_transcription={},
        output_audio_transcription={},
    )
    out: dict[str, Any] = {}
    async with client.aio.live.connect(model="gemini-live-test", config=config) as session:
        await session.send_client_content(turn_complete=True)
        greeting = await collect(session, "turn_complete")
        out["greeting"] = audio_of(greeting)
        await stream(session, pcm16k("What is the weather in Boston"))
        turn = await collect(session, "tool_call")
        out["heard"] = [
            m.server_content.input_transcription.text
            for m in turn
            if m.server_content and m.server_content.input_transcription
        ]
        call = turn[-1].tool_call.function_calls[0]
        out["call"] = call
        response = types.FunctionResponse(id=call.id, name=call.name, response={"answer": "sunny"})
        await session.send_tool_response(function_responses=[response])
        answer = await collect(session, "turn_complete")
        out["answer"] = audio_of(answer)
        out["transcript"] = "".join(
            m.server_content.output_transcription.text
            for m in answer
            if m.server_content and m.server_content.output_transcription
        )
        out["usage"] = answer[-1].usage_metadata
        await session.send_client_content(turn_complete=True)
        await collect(session, "model_turn")
        await stream(session, pcm16k("Wait, stop", silence_s=0.1))
        out["barge"] = await collect(session, "interrupted")
    return out


def test_google_genai_live_client_against_the_fake(
    recognizer: Recognizer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeGeminiLive(scripted_brain, recognizer, tmp_path) as fake:
        monkeypatch.setenv("SSL_CERT_FILE", str(fake.cert_file))
        out = asyncio.run(conversation(fake.base_url))
    assert out["greeting"].duration_s > 1.0 and speech_segments(out["greeting"])
    assert out["heard"] and "weather" in out["heard"][0], out["heard"]
    assert out["call"].name == "lookup"
    assert "weather" in out["call"].args["heard"]
    assert out["transcript"] == "The answer is sunny."
    assert out["answer"].duration_s > 1.0
    usage = out["usage"]
    audio = {d.modality.value: d.token_count for d in usage.prompt_tokens_details}
    assert audio["AUDIO"] > 0
    assert usage.total_token_count == usage.prompt_token_count + usage.response_token_count
    assert out["barge"][-1].server_content.interrupted is True


def test_camel_renames_field_names_but_not_the_clients_data() -> None:
    message = {
        "tool_response": {
            "function_responses": [
                {"id": "c1", "response": {"error_type": "not_found", "nested": {"a_b": 1}}}
            ]
        },
        "tools": [{"parameters": {"properties": {"confirmation_number": {"max_length": 6}}}}],
    }
    out = camel(message)
    response = out["toolResponse"]["functionResponses"][0]["response"]
    assert response == {"error_type": "not_found", "nested": {"a_b": 1}}
    schema = out["tools"][0]["parameters"]["properties"]
    assert schema == {"confirmation_number": {"maxLength": 6}}


class _Socket:
    """Just enough of a server connection for :meth:`LiveSession.handle`."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, raw: str) -> None:
        self.sent.append(json.loads(raw))


def test_a_seed_turn_repeating_the_instruction_is_not_the_caller(recognizer: Recognizer) -> None:
    """Pipecat seeds a context holding only the system prompt as a user turn with that
    prompt (and turnComplete) so the model speaks first: the model greets, no caller turn."""
    prompt = "You are a voice agent for an airline."
    histories: list[list[dict[str, Any]]] = []

    def brain(messages: list[dict[str, Any]]) -> dict[str, Any]:
        histories.append(messages)
        call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    async def seed() -> None:
        session = LiveSession(cast(Any, _Socket()), brain, recognizer)
        session.instruction = prompt
        session.dialogue.instruct(prompt)
        turns = [{"role": "user", "parts": [{"text": prompt}]}, {"role": "user", "parts": []}]
        await session.handle({"clientContent": {"turns": turns, "turnComplete": True}})
        await session.handle({"realtimeInput": {"text": " "}})  # the 3.x nudge
        assert session.answer is not None
        await session.answer

    asyncio.run(seed())
    assert histories and all(m["role"] != "user" for h in histories for m in h), histories
