"""Ultravox stand-in: Pipecat's own ``UltravoxRealtimeLLMService``, built by the bot's
``ultravox`` builder from the catalogue's component (model ``fixie-ai/ultravox``) with a
``base_url`` at the stand-in, greets, hears real caller speech, calls a tool through Pipecat's
function-call path and speaks the answer; the raw protocol (call creation, 401, barge-in with
``playback_clear_buffer``) is checked with ``httpx`` and ``websockets``."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from websockets.asyncio.client import connect

from perturbations.audio import Clip
from tasks.systems.catalogue import load_catalogue, to_system_spec
from tasks.systems.standins.ultravox import FakeUltravox
from tasks.voice.stt import Recognizer, SttSpec
from tasks.voice.telephony import resample
from tasks.voice.tts import synthesize
from tasks.voice.vad import speech_segments
from tests.tasks.systems.standins.pipecat_driver import require_pipecat, run_in_pipecat
from tests.tasks.systems.standins.test_openai_realtime import CALLER, scripted_brain

RATE = 48000  # Pipecat's UltravoxRealtimeLLMService asks for (and assumes) 48 kHz both ways
TOOL = {
    "modelToolName": "lookup",
    "description": "look up",
    "dynamicParameters": [
        {
            "name": "heard",
            "location": "PARAMETER_LOCATION_BODY",
            "schema": {"type": "string"},
            "required": True,
        }
    ],
    "client": {},
}


@pytest.fixture(scope="module")
def recognizer(tmp_path_factory: pytest.TempPathFactory) -> Recognizer:
    return Recognizer(SttSpec(lm="general"), None, tmp_path_factory.mktemp("lm"))


@pytest.fixture
def fake(recognizer: Recognizer) -> Any:
    with FakeUltravox(scripted_brain, recognizer) as server:
        yield server


def caller_pcm(text: str, rate: int, silence_s: float = 1.0) -> bytes:
    clip = resample(synthesize(text, CALLER), rate)
    clip = Clip.concat(Clip.silence(0.3, rate), clip, Clip.silence(silence_s, rate))
    return clip.to_int16().astype("<i2").tobytes()


PIPECAT_SCRIPT = """
import asyncio, json, os
from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.frames.frames import (
    ErrorFrame, FunctionCallInProgressFrame, FunctionCallResultFrame, InputAudioRawFrame,
    TranscriptionFrame, TTSAudioRawFrame, TTSTextFrame,
)
from pipecat.pipeline.task import PipelineParams
from pipecat.tests.utils import SleepFrame, run_test
from tasks.systems.pipecat_bot.components import Component
from tasks.systems.pipecat_bot.realtime import ultravox

args = json.loads(os.environ["STANDIN_ARGS"])
calls = []

async def lookup(params):
    calls.append({"name": params.function_name, "arguments": dict(params.arguments)})
    await params.result_callback({"answer": "sunny"})

async def main():
    tools = ToolsSchema(standard_tools=[FunctionSchema(
        name="lookup", description="look up what the caller asked",
        properties={"heard": {"type": "string"}}, required=["heard"],
    )])
    service = ultravox(Component.model_validate(args["component"]), "You are a test agent.", tools)
    service.register_function(None, lookup)
    pcm = open(args["audio"], "rb").read()
    rate = args["rate"]
    step = rate * 2 // 50
    frames = [SleepFrame(args["greeting_s"])]
    frames += [InputAudioRawFrame(pcm[i:i + step], rate, 1) for i in range(0, len(pcm), step)]
    frames += [SleepFrame(args["answer_s"])]
    down, up = await run_test(
        service, frames_to_send=frames,
        pipeline_params=PipelineParams(audio_in_sample_rate=rate, audio_out_sample_rate=rate),
    )
    audio = [f for f in down if isinstance(f, TTSAudioRawFrame)]
    with open(args["out"], "wb") as sink:
        sink.write(b"".join(f.audio for f in audio))
    os.environ["ULTRAVOX_API_KEY"] = "reject"
    refused = ultravox(Component.model_validate(args["component"]), "You are a test agent.", tools)
    rdown, rup = await run_test(refused, frames_to_send=[SleepFrame(0.5)])
    print(json.dumps({
        "service": [c.__name__ for c in type(service).__mro__],
        "params": type(service._params).__name__,
        "rates": sorted({f.sample_rate for f in audio}),
        "heard": [f.text for f in up if isinstance(f, TranscriptionFrame)],
        "words": "".join(f.text for f in down if isinstance(f, TTSTextFrame)),
        "calls": calls,
        "in_progress": sum(isinstance(f, FunctionCallInProgressFrame) for f in down),
        "results": [f.result for f in down if isinstance(f, FunctionCallResultFrame)],
        "errors": [str(f.error) for f in [*down, *up] if isinstance(f, ErrorFrame)],
        "refused": [str(f.error) for f in [*rdown, *rup] if isinstance(f, ErrorFrame)],
    }))

asyncio.run(main())
"""


def test_pipecat_ultravox_service_calls_a_tool_and_speaks(
    fake: FakeUltravox, tmp_path: Path, recognizer: Recognizer
) -> None:
    require_pipecat()
    spec = to_system_spec(load_catalogue().get("ultravox-realtime"), environ={})
    component = dict(spec.params["components"]["realtime"])
    assert component["provider"] == "ultravox" and component["model"] == "fixie-ai/ultravox"
    component["params"] = {**component["params"], "base_url": fake.base_url}
    audio, out_file = tmp_path / "caller.pcm", tmp_path / "agent.pcm"
    audio.write_bytes(caller_pcm("What is the weather in Boston", 16000))
    args = {
        "component": component,
        "audio": str(audio),
        "out": str(out_file),
        "rate": 16000,
        "greeting_s": 3.5,  # the paced greeting plays out before the caller speaks
        "answer_s": 6.0,
    }
    started = time.perf_counter()
    out = run_in_pipecat(
        PIPECAT_SCRIPT,
        env={"STANDIN_ARGS": json.dumps(args), "ULTRAVOX_API_KEY": "test-key"},
    )
    # Pipecat's own service (joining the call the bot created at base_url).
    assert "UltravoxRealtimeLLMService" in out["service"] and out["params"] == "JoinUrlInputParams"
    assert not out["errors"], out
    # The call was created with the catalogue's model, the tools and Pipecat's 48 kHz.
    (call,) = fake.calls.values()
    assert call.request["model"] == "fixie-ai/ultravox"
    assert call.request["systemPrompt"] == "You are a test agent."
    assert call.tool_names == ["lookup"]
    assert call.input_rate == RATE
    # Heard the caller (Pipecat's user transcription), called the tool through Pipecat's
    # function-call path with what it heard, got the result back and spoke the answer.
    assert out["heard"] and "weather" in out["heard"][0], out["heard"]
    assert out["calls"] and out["calls"][0]["name"] == "lookup", out
    assert "weather" in out["calls"][0]["arguments"]["heard"]
    assert out["in_progress"] == 1 and out["results"] == [{"answer": "sunny"}]
    results = [m for m in call.sessions[0].received if m["type"] == "client_tool_result"]
    assert json.loads(results[0]["result"]) == {"answer": "sunny"}
    assert "Hello, how can I help you today?" in out["words"], out["words"]
    assert "The answer is sunny." in out["words"], out["words"]
    assert out["rates"] == [RATE]
    clip = Clip.from_int16(np.frombuffer(out_file.read_bytes(), dtype="<i2"), RATE)
    # Greeting and answer, back to back: about three seconds of real speech.
    assert clip.duration_s > 2.5 and speech_segments(clip), clip.duration_s
    # A rejected key: the stand-in's 401 reaches the pipeline as an ErrorFrame naming it.
    assert len(out["refused"]) == 1 and "Ultravox API error 401" in out["refused"][0], out
    assert len(fake.calls) == 1  # the refused call was never created
    print(
        f"ultravox pipecat: {time.perf_counter() - started:.1f} s, {clip.duration_s:.1f} s agent audio"
    )


async def _call(fake: FakeUltravox) -> dict[str, Any]:
    body = {
        "systemPrompt": "You are a test agent.",
        "model": "fixie-ai/ultravox",
        "selectedTools": [{"temporaryTool": TOOL}],
        "medium": {"serverWebSocket": {"inputSampleRate": 16000, "outputSampleRate": 24000}},
    }
    async with httpx.AsyncClient() as client:
        created = await client.post(
            f"{fake.base_url}/api/calls", json=body, headers={"X-API-Key": "k"}
        )
    assert created.status_code == 201, created.text
    out: dict[str, Any] = {"created": created.json()}
    seen: list[Any] = []

    async def until(ws: Any, kind: str) -> dict[str, Any]:
        async with asyncio.timeout(15):
            while True:
                raw = await ws.recv()
                seen.append(raw)
                if isinstance(raw, str) and json.loads(raw)["type"] == kind:
                    return dict(json.loads(raw))

    async with connect(out["created"]["joinUrl"]) as ws:
        await until(ws, "call_started")
        pcm = caller_pcm("What is the weather in Boston", 16000)
        invocation: dict[str, Any] = {}
        while not invocation:  # the greeting plays first; speak after it
            message = await until(ws, "state")
            if message["state"] == "listening" and any(isinstance(m, bytes) for m in seen):
                for i in range(0, len(pcm), 3200):
                    await ws.send(pcm[i : i + 3200])
                invocation = await until(ws, "client_tool_invocation")
        out["invocation"] = invocation
        result = {"type": "client_tool_result", "invocationId": invocation["invocationId"]}
        await ws.send(json.dumps({**result, "result": json.dumps({"answer": "sunny"})}))
        await until(ws, "state")  # thinking
        message = await until(ws, "state")
        assert message["state"] == "speaking"
        await ws.recv()  # the first audio of the answer; the caller cuts in
        await ws.send(caller_pcm("Wait, stop", 16000, silence_s=0.1))
        out["cleared"] = await until(ws, "playback_clear_buffer")
    out["seen"] = seen
    return out


def test_ultravox_protocol_call_tool_and_barge_in(fake: FakeUltravox) -> None:
    out = asyncio.run(_call(fake))
    assert out["created"]["joinUrl"].startswith("ws://127.0.0.1:")
    messages = [json.loads(m) for m in out["seen"] if isinstance(m, str)]
    users = [m for m in messages if m["type"] == "transcript" and m["role"] == "user"]
    assert users and "weather" in users[0]["text"] and users[0]["final"] is True
    assert out["invocation"]["toolName"] == "lookup"
    assert "weather" in out["invocation"]["parameters"]["heard"]
    greeting = b"".join(m for m in out["seen"][:20] if isinstance(m, bytes))
    assert greeting, "the agent greets first with audio"
    # The greeting's audio is 24 kHz PCM (outputSampleRate), about two seconds of speech.
    agent = [m for m in messages if m["type"] == "transcript" and m["role"] == "agent"]
    assert agent[0]["medium"] == "voice" and "delta" in agent[0]
    finals = [m["text"] for m in agent if m["final"]]
    assert finals[0] == "Hello, how can I help you today?"
    assert out["cleared"] == {"type": "playback_clear_buffer"}
    session = fake.sessions[0]
    assert session.output_audio_s > 1.0
    assert [m["role"] for m in session.dialogue.messages][:2] == ["system", "assistant"]
    assert {"role": "tool", "tool_call_id": out["invocation"]["invocationId"]}.items() <= next(
        m for m in session.dialogue.messages if m["role"] == "tool"
    ).items()


def test_ultravox_rejected_key_and_missing_medium(fake: FakeUltravox) -> None:
    url = f"{fake.base_url}/api/calls"
    medium = {"medium": {"serverWebSocket": {"inputSampleRate": 48000}}}
    rejected = httpx.post(url, json=medium, headers={"X-API-Key": "reject"})
    assert rejected.status_code == 401 and rejected.json() == {"detail": "Invalid API key."}
    assert httpx.post(url, json=medium).status_code == 401
    assert httpx.post(url, json={}, headers={"X-API-Key": "k"}).status_code == 400
