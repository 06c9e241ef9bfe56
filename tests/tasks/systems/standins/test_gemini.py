"""The Gemini API REST stand-in (:mod:`tasks.systems.standins.gemini`) with the official
``google-genai`` client (through ``HttpOptions(base_url=...)``, plain http) and with
Pipecat's own services of the catalogue system ``gemini-3-flash+gemini-3.1-flash-tts``
(``GoogleLLMService``, ``GeminiTTSService``): an audio part heard, a function call round
trip, TTS speech of the right rate and length, the API's errors."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from perturbations.audio import Clip
from tasks.systems.catalogue import load_catalogue, to_system_spec
from tasks.systems.standins.gemini import TTS_RATE, FakeGemini
from tasks.voice.stt import Recognizer, SttSpec
from tasks.voice.telephony import resample
from tasks.voice.tts import synthesize
from tasks.voice.vad import speech_segments
from tests.tasks.systems.standins.pipecat_driver import require_pipecat, run_in_pipecat
from tests.tasks.systems.standins.test_openai_realtime import CALLER, scripted_brain

genai = pytest.importorskip("google.genai")
types = pytest.importorskip("google.genai.types")
errors = pytest.importorskip("google.genai.errors")

LLM_MODEL = "gemini-3-flash-preview"  # the catalogue's (tasks/systems/catalogue/*.yaml)
TTS_MODEL = "gemini-3.1-flash-tts-preview"
SYSTEM = "gemini-3-flash+gemini-3.1-flash-tts"
TOOLS = [types.Tool(function_declarations=[types.FunctionDeclaration(name="lookup")])]


@pytest.fixture(scope="module")
def recognizer(tmp_path_factory: pytest.TempPathFactory) -> Recognizer:
    return Recognizer(SttSpec(lm="general"), None, tmp_path_factory.mktemp("lm"))


def wav16k(text: str) -> bytes:
    clip = resample(synthesize(text, CALLER), 16000)
    clip = Clip.concat(Clip.silence(0.3, 16000), clip, Clip.silence(0.3, 16000))
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(16000)
        wav.writeframes(clip.to_int16().astype("<i2").tobytes())
    return out.getvalue()


def client(base_url: str, key: str = "test-key") -> Any:
    return genai.Client(api_key=key, http_options=types.HttpOptions(base_url=base_url))


async def llm_round_trip(base_url: str) -> dict[str, Any]:
    aio = client(base_url).aio
    config = types.GenerateContentConfig(system_instruction="You are a test agent.", tools=TOOLS)
    audio = types.Part(
        inline_data=types.Blob(mime_type="audio/wav", data=wav16k("What is the weather in Boston"))
    )
    asked = types.Content(role="user", parts=[audio])
    first = await aio.models.generate_content(model=LLM_MODEL, contents=[asked], config=config)
    call = first.function_calls[0]
    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id, name=call.name, response={"answer": "sunny"}
                )
            )
        ],
    )
    contents = [asked, first.candidates[0].content, answer]
    chunks = [
        c
        async for c in await aio.models.generate_content_stream(
            model=LLM_MODEL, contents=contents, config=config
        )
    ]
    return {"first": first, "call": call, "chunks": chunks}


def test_the_sdk_hears_an_audio_part_and_round_trips_a_function_call(
    recognizer: Recognizer,
) -> None:
    with FakeGemini(scripted_brain, recognizer) as gemini:
        out = asyncio.run(llm_round_trip(gemini.base_url))
    call = out["call"]
    assert call.name == "lookup" and "weather" in call.args["heard"], call  # the ears decoded it
    usage = out["first"].usage_metadata
    modality = {d.modality.value: d.token_count for d in usage.prompt_tokens_details}
    assert modality["AUDIO"] > 32  # over a second of caller audio at 32 tokens a second
    assert usage.total_token_count == usage.prompt_token_count + usage.candidates_token_count
    chunks = out["chunks"]
    assert len(chunks) > 1  # streamed (alt=sse), the last chunk closing the turn
    assert "".join(c.text or "" for c in chunks) == "The answer is sunny."
    assert chunks[-1].candidates[0].finish_reason.value == "STOP"
    # The stand-in's history: what it heard, the call, the result as a tool message.
    history = gemini.log[-1]["messages"]
    assert [m["role"] for m in history] == ["system", "user", "assistant", "tool"]
    assert json.loads(history[-1]["content"]) == {"answer": "sunny"}


def test_the_sdk_gets_tts_speech_at_24_khz(recognizer: Recognizer) -> None:
    text = "Your flight to Boston leaves at nine in the morning."
    config = types.GenerateContentConfig(
        response_modalities=["AUDIO"],
        speech_config=types.SpeechConfig(
            voice_config=types.VoiceConfig(
                prebuilt_voice_config=types.PrebuiltVoiceConfig(voice_name="Kore")
            )
        ),
    )
    with FakeGemini(scripted_brain, recognizer) as gemini:
        sdk = client(gemini.base_url)  # held: a collected client closes its connection
        answer = sdk.models.generate_content(model=TTS_MODEL, contents=text, config=config)
    blob = answer.candidates[0].content.parts[0].inline_data
    assert blob.mime_type == f"audio/L16;codec=pcm;rate={TTS_RATE}"
    clip = Clip.from_int16(np.frombuffer(blob.data, "<i2"), TTS_RATE)
    assert 2.0 < clip.duration_s < 6.0 and speech_segments(clip), clip.duration_s
    heard = recognizer.recognize(clip)
    assert "boston" in heard, heard  # real speech of the text sent
    assert answer.usage_metadata.candidates_tokens_details[0].modality.value == "AUDIO"


def test_the_sdk_reads_a_model_and_sees_the_apis_key_errors(recognizer: Recognizer) -> None:
    with FakeGemini(scripted_brain, recognizer) as gemini:
        sdk, rejecting = client(gemini.base_url), client(gemini.base_url, key="reject")
        model = sdk.models.get(model=LLM_MODEL)
        with pytest.raises(errors.ClientError) as rejected:
            rejecting.models.get(model=LLM_MODEL)
        with pytest.raises(errors.ClientError) as voice:
            sdk.models.generate_content(
                model=TTS_MODEL,
                contents="Hello.",
                config=types.GenerateContentConfig(
                    response_modalities=["AUDIO"],
                    speech_config=types.SpeechConfig(
                        voice_config=types.VoiceConfig(
                            prebuilt_voice_config=types.PrebuiltVoiceConfig(voice_name="Nobody")
                        )
                    ),
                ),
            )
    assert model.name == f"models/{LLM_MODEL}"
    assert "generateContent" in model.supported_actions
    assert (rejected.value.code, rejected.value.status) == (400, "INVALID_ARGUMENT")
    assert "API_KEY_INVALID" in json.dumps(rejected.value.details)
    assert voice.value.code == 400


@pytest.mark.parametrize("fault", ["ratelimit", "malformed", "drop"])
def test_the_fault_keys_fail_the_sdks_request(recognizer: Recognizer, fault: str) -> None:
    with FakeGemini(scripted_brain, recognizer) as gemini:
        sdk = client(gemini.base_url, key=fault)
        with pytest.raises(Exception) as failed:
            sdk.models.generate_content(model=LLM_MODEL, contents="Hello.")
    if fault == "ratelimit":
        assert isinstance(failed.value, errors.ClientError) and failed.value.code == 429
    else:  # answered, then spoiled: no parsed answer, whatever the client's error
        assert len(gemini.log) == 1
        assert not isinstance(failed.value, errors.APIError), failed.value


PIPECAT_SCRIPT = r"""
import asyncio, base64, json, os
from pipecat.adapters.schemas.function_schema import FunctionSchema
from pipecat.adapters.schemas.tools_schema import ToolsSchema
from pipecat.frames.frames import (
    ErrorFrame, FunctionCallInProgressFrame, InputAudioRawFrame, LLMContextFrame, LLMTextFrame,
    TTSAudioRawFrame, TTSSpeakFrame,
)
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.tests.utils import run_test
from tasks.systems.pipecat_bot.audio_llm import audio_message
from tasks.systems.pipecat_bot.components import Component
from tasks.systems.pipecat_bot.pipeline import pipecat_service

components = json.loads(os.environ["COMPONENTS"])
pcm = open(os.environ["CALLER_PCM"], "rb").read()
step = 16000 * 2 // 50  # 20 ms frames, as the transport delivers them

async def run(service, frame):
    down, up = await run_test(service, frames_to_send=[frame])
    errors.extend(str(f.error) for f in [*down, *up] if isinstance(f, ErrorFrame))
    return down

async def lookup(params):
    await params.result_callback({"answer": "sunny"})

def llm():  # a service per run: run_test's EndFrame closes its client
    service = pipecat_service("llm", Component(**components["llm"]))
    service.register_function("lookup", lookup)
    return service

errors = []

async def main():
    out = {"errors": errors}
    tools = ToolsSchema([FunctionSchema(
        name="lookup", description="look up", properties={"heard": {"type": "string"}}, required=[]
    )])
    context = LLMContext(messages=[
        {"role": "system", "content": "You are a test agent."},
        {"role": "assistant", "content": "Hello, how can I help you today?"},  # the bot's greeting
    ], tools=tools)
    frames = [InputAudioRawFrame(pcm[i:i + step], 16000, 1) for i in range(0, len(pcm), step)]
    context.add_message(audio_message(frames))
    down = await run(llm(), LLMContextFrame(context))
    calls = [f for f in down if isinstance(f, FunctionCallInProgressFrame)]
    out["calls"] = [{"id": c.tool_call_id, "name": c.function_name, "args": c.arguments} for c in calls]
    call = calls[0]
    context.add_message({"role": "assistant", "tool_calls": [{"id": call.tool_call_id, "type": "function",
        "function": {"name": call.function_name, "arguments": json.dumps(call.arguments)}}]})
    context.add_message({"role": "tool", "tool_call_id": call.tool_call_id, "content": json.dumps({"answer": "sunny"})})
    down = await run(llm(), LLMContextFrame(context))
    out["text"] = "".join(f.text for f in down if isinstance(f, LLMTextFrame))
    tts = pipecat_service("tts", Component(**components["tts"]))
    down = await run(tts, TTSSpeakFrame(os.environ["SAY"]))
    audio = [f for f in down if isinstance(f, TTSAudioRawFrame)]
    out["tts_rates"] = sorted({f.sample_rate for f in audio})
    out["tts_audio"] = base64.b64encode(b"".join(f.audio for f in audio)).decode()
    print(json.dumps(out))

asyncio.run(main())
"""


def catalogue_components(base_url: str) -> dict[str, Any]:
    """The catalogue system's own components (model ids, voice, params), pointed at the
    stand-in through the ``base_url`` param the bot maps to ``HttpOptions``."""
    entry = load_catalogue(environ={}).get(SYSTEM)
    params = to_system_spec(entry, environ={}).params
    return {
        role: {**c, "params": {**c.get("params", {}), "base_url": base_url}}
        for role, c in params["components"].items()
    }


@pytest.mark.timeout(120)
def test_pipecats_google_services_of_the_catalogue_system_against_the_stand_in(
    recognizer: Recognizer, tmp_path: Path
) -> None:
    require_pipecat()
    caller = resample(synthesize("What is the weather in Boston", CALLER), 16000)
    caller = Clip.concat(Clip.silence(0.3, 16000), caller, Clip.silence(0.3, 16000))
    (tmp_path / "caller.pcm").write_bytes(caller.to_int16().astype("<i2").tobytes())
    say = "Your flight to Boston leaves at nine in the morning."
    with FakeGemini(scripted_brain, recognizer) as gemini:
        components = catalogue_components(gemini.base_url)
        env = {
            "COMPONENTS": json.dumps(components),
            "CALLER_PCM": str(tmp_path / "caller.pcm"),
            "SAY": say,
            "GOOGLE_API_KEY": "placeholder-key",
        }
        out = run_in_pipecat(PIPECAT_SCRIPT, env=env, timeout=90)
    assert components["llm"]["model"] == LLM_MODEL and components["tts"]["model"] == TTS_MODEL
    assert out["errors"] == []
    assert [c["name"] for c in out["calls"]] == ["lookup"]
    assert "weather" in out["calls"][0]["args"]["heard"]  # the stand-in heard Pipecat's WAV
    assert out["text"] == "The answer is sunny."
    assert out["tts_rates"] == [TTS_RATE]
    speech = Clip.from_int16(np.frombuffer(base64.b64decode(out["tts_audio"]), "<i2"), TTS_RATE)
    assert 2.0 < speech.duration_s < 6.0, speech.duration_s
    assert "boston" in recognizer.recognize(speech)
    voices = [r["voice"] for r in gemini.log if "voice" in r]
    assert voices == ["Kore"]  # the catalogue's voice reached the API
    models = [r["model"] for r in gemini.log]
    assert models == [LLM_MODEL, LLM_MODEL, TTS_MODEL]
