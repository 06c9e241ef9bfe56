"""The OpenAI REST stand-in (:mod:`tasks.systems.standins.openai_http`) against the official
``openai`` SDK (plain protocol) and against Pipecat's own OpenAI services as the catalogue
builds them (``tasks.systems.pipecat_bot.pipeline.pipecat_service``) in ``.venv-pipecat``:
every ``provider: openai`` component of a catalogue system, with its own model id and params,
its ``base_url`` variable pointed at the stand-in.

LLM: a context with a tool -> a function call carrying what the user said, then the tool's
result -> text. STT: real eSpeak caller speech as 20 ms ``InputAudioRawFrame``s between VAD
frames -> a ``TranscriptionFrame`` with the words (the stand-in decodes the WAV it is sent).
TTS: a ``TTSSpeakFrame`` -> 24 kHz ``TTSAudioRawFrame``s of speech that the recogniser hears
back as the text, of a duration that fits it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from perturbations.audio import Clip
from tasks.systems.catalogue import load_catalogue, to_system_spec
from tasks.systems.standins.openai_audio import decode_wav, wav_bytes
from tasks.systems.standins.openai_http import FakeOpenAIHTTP
from tasks.voice.stt import Recognizer, SttSpec
from tasks.voice.telephony import resample
from tasks.voice.tts import synthesize
from tests.tasks.systems.standins.pipecat_driver import require_pipecat, run_in_pipecat
from tests.tasks.systems.standins.test_openai_realtime import CALLER, scripted_brain

openai = pytest.importorskip("openai")

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look up what the caller asked about.",
            "parameters": {"type": "object", "properties": {"heard": {"type": "string"}}},
        },
    }
]
QUESTION = "What is the weather in Boston"
SPOKEN = "Your flight to Boston is confirmed."
# The brief's services: every one must be among the catalogue's openai components.
CATALOGUE_IDS = {
    "llm": {"gpt-5.4", "gpt-5.4-mini", "google/gemma-4-26B-A4B-it", "Qwen/Qwen3.5-27B"},
    "stt": {
        "openai/whisper-large-v3",
        "nvidia/parakeet-tdt_ctc-1.1b",
        "CohereLabs/cohere-transcribe-03-2026",
    },
    "tts": {"mistralai/Voxtral-4B-TTS-2603", "kokoro"},
}


class BaseUrls(Mapping[str, str]):
    """An environment where every ``*_BASE_URL`` variable names the stand-in (the rest
    unset, so model ids and voices are the catalogue's defaults)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __getitem__(self, key: str) -> str:
        if key.endswith("_BASE_URL"):
            return self.url
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def catalogue_components(role: str, base_url: str) -> list[dict[str, Any]]:
    """Every distinct ``provider: openai`` component of ``role`` in the catalogue's cascades."""
    out: list[dict[str, Any]] = []
    catalogue = load_catalogue()
    for name in catalogue.names():
        entry = catalogue.get(name)
        if entry.agent != "pipecat" or entry.architecture != "cascade":
            continue
        component = to_system_spec(entry, BaseUrls(base_url)).params["components"].get(role)
        if component and component["provider"] == "openai" and component not in out:
            out.append(component)
    assert {c["model"] for c in out} >= CATALOGUE_IDS[role], out
    assert all(c["params"]["base_url"] == base_url for c in out), out
    return out


@pytest.fixture(scope="module")
def recognizer(tmp_path_factory: pytest.TempPathFactory) -> Recognizer:
    return Recognizer(SttSpec(lm="general"), None, tmp_path_factory.mktemp("lm"))


def caller_pcm(text: str, rate: int) -> Clip:
    clip = resample(synthesize(text, CALLER), rate)
    return Clip.concat(Clip.silence(0.3, rate), clip, Clip.silence(0.3, rate))


def int16(clip: Clip) -> bytes:
    return clip.to_int16().astype("<i2").tobytes()


def pcm_clip(data: bytes, rate: int = 24000) -> Clip:
    return Clip.from_int16(np.frombuffer(data, dtype="<i2"), rate)


def fits(text: str, clip: Clip) -> bool:
    """Speech of about 0.2-0.8 s a word (eSpeak speaks about 165 words a minute)."""
    words = len(text.split())
    return 0.2 * words < clip.duration_s < 0.8 * words + 0.5


# ---------------------------------------------------------------------- official SDK


def test_openai_sdk_chat_completions_with_tools_streamed_and_not() -> None:
    with FakeOpenAIHTTP(scripted_brain, models=["google/gemma-4-26B-A4B-it"]) as fake:
        client = openai.OpenAI(api_key="test-key", base_url=fake.base_url, max_retries=0)
        model = "google/gemma-4-26B-A4B-it"
        user = [{"role": "user", "content": QUESTION}]
        called = client.chat.completions.create(model=model, messages=user, tools=TOOLS)
        choice = called.choices[0]
        assert choice.finish_reason == "tool_calls"
        call = choice.message.tool_calls[0]
        assert call.function.name == "lookup"
        assert json.loads(call.function.arguments) == {"heard": QUESTION}
        usage = called.usage
        assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
        assert usage.completion_tokens > 0 and usage.prompt_tokens > 0

        history = [
            *user,
            choice.message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": '{"answer": "sunny"}'},
        ]
        stream = client.chat.completions.create(
            model=model,
            messages=history,
            tools=TOOLS,
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text == "The answer is sunny."
        assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) >= 1
        assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
        assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 5

        streamed = client.chat.completions.create(
            model=model, messages=user, tools=TOOLS, stream=True
        )
        deltas = [c.choices[0].delta for c in streamed]
        fragments = [d.tool_calls[0].function.arguments for d in deltas if d.tool_calls]
        assert deltas[1].tool_calls[0].function.name == "lookup"
        assert len(fragments) > 2 and json.loads("".join(fragments)) == {"heard": QUESTION}

        with pytest.raises(openai.BadRequestError, match="does not offer"):
            client.chat.completions.create(model=model, messages=user)
        with pytest.raises(openai.NotFoundError, match="model_not_found|does not exist"):
            client.chat.completions.create(model="gpt-5.4", messages=user, tools=TOOLS)
        assert client.models.retrieve(model).id == model
        assert [m.id for m in client.models.list()] == [model]
        rejected = openai.OpenAI(api_key="reject", base_url=fake.base_url, max_retries=0)
        with pytest.raises(openai.AuthenticationError) as err:
            rejected.models.list()
        assert err.value.code == "invalid_api_key"
        bare = httpx.post(f"{fake.base_url}/chat/completions", json={"messages": []})
        assert bare.status_code == 401 and "API key" in bare.json()["error"]["message"]


def test_openai_sdk_meets_each_injected_fault() -> None:
    """The fault keys answer as the provider fails: the SDK raises what it raises then."""
    expected = {
        "reject": openai.AuthenticationError,
        "ratelimit": openai.RateLimitError,
        "malformed": ValueError,  # the SDK's json.loads of the cut-off body
        "drop": openai.APIConnectionError,
    }
    user = [{"role": "user", "content": QUESTION}]
    with FakeOpenAIHTTP(scripted_brain) as fake:
        for key, error in expected.items():
            client = openai.OpenAI(api_key=key, base_url=fake.base_url, max_retries=0)
            with pytest.raises(error):
                client.chat.completions.create(model="m", messages=user, tools=TOOLS)
            with pytest.raises(error):
                list(client.chat.completions.create(model="m", messages=user, stream=True))
            if key == "malformed":
                # Audio bytes have no syntax: the SDK hands back the cut-off JSON as audio.
                speech = client.audio.speech.create(model="kokoro", voice="x", input="Hi.")
                assert speech.content.startswith(b'{"id": "cut-off"')
                continue
            with pytest.raises(error):
                client.audio.speech.create(model="kokoro", voice="af_heart", input="Hi.")
        assert not fake.requests  # no fault reached the model


def test_models_for_preflight_and_any_base_path() -> None:
    """Preflight asks a self-hosted server ``GET {base}/models`` (vLLM's list); a client
    may sit under any base path (a proxy's ``/openai/v1``)."""
    with FakeOpenAIHTTP(scripted_brain, models=["Qwen/Qwen3.5-27B"]) as listed:
        proxied = listed.base_url.replace("/v1", "/openai/v1")
        client = openai.OpenAI(api_key="not-needed", base_url=proxied, max_retries=0)
        assert [m.id for m in client.models.list()] == ["Qwen/Qwen3.5-27B"]
        user = [{"role": "user", "content": QUESTION}]
        answer = client.chat.completions.create(
            model="Qwen/Qwen3.5-27B", messages=user, tools=TOOLS
        )
        assert answer.choices[0].message.tool_calls[0].function.name == "lookup"
        assert listed.requests[0][0] == "/openai/v1/chat/completions"
    with FakeOpenAIHTTP(scripted_brain) as anything:
        client = openai.OpenAI(api_key="not-needed", base_url=anything.base_url, max_retries=0)
        assert client.models.retrieve("nvidia/parakeet-tdt_ctc-1.1b").id.startswith("nvidia/")
        with pytest.raises(openai.NotFoundError, match="lists none"):
            client.models.list()


def test_openai_sdk_transcriptions_decode_the_uploaded_speech(recognizer: Recognizer) -> None:
    wav = wav_bytes(int16(caller_pcm(QUESTION, 16000)), 16000)
    with FakeOpenAIHTTP(recognizer=recognizer) as fake:
        client = openai.OpenAI(api_key="test-key", base_url=fake.base_url, max_retries=0)
        model = "openai/whisper-large-v3"
        plain = client.audio.transcriptions.create(model=model, file=("a.wav", wav, "audio/wav"))
        text = client.audio.transcriptions.create(
            model=model, file=("a.wav", wav, "audio/wav"), response_format="text"
        )
        verbose = client.audio.transcriptions.create(
            model=model, file=("a.wav", wav, "audio/wav"), response_format="verbose_json"
        )
        with pytest.raises(openai.BadRequestError, match="Invalid file format"):
            client.audio.transcriptions.create(model=model, file=("a.mp3", b"ID3 not a wav"))
    assert "weather" in plain.text and "boston" in plain.text, plain.text
    assert plain.usage.type == "duration" and 2.0 < plain.usage.seconds < 4.0
    assert text.strip() == plain.text
    assert verbose.text == plain.text and verbose.language == "english"
    assert verbose.duration == plain.usage.seconds == verbose.segments[0].end
    assert fake.requests[0] == ("/v1/audio/transcriptions", {"model": model})


def test_openai_sdk_speech_in_the_requested_format(recognizer: Recognizer) -> None:
    with FakeOpenAIHTTP() as fake:
        client = openai.OpenAI(api_key="test-key", base_url=fake.base_url, max_retries=0)
        asked = {
            "model": "mistralai/Voxtral-4B-TTS-2603",
            "voice": "casual_female",
            "input": SPOKEN,
        }
        pcm = client.audio.speech.create(**asked, response_format="pcm").content
        wav = client.audio.speech.create(**asked, response_format="wav").content
        slow = client.audio.speech.create(**asked, response_format="pcm", speed=0.5).content
        with client.audio.speech.with_streaming_response.create(
            **asked, response_format="pcm", stream_format="sse"
        ) as response:
            events = [json.loads(line[6:]) for line in response.iter_lines() if line]
        with pytest.raises(openai.BadRequestError, match="response_format"):
            client.audio.speech.create(**asked, response_format="mp3")
    clip = pcm_clip(pcm)
    assert fits(SPOKEN, clip), clip.duration_s
    assert recognizer.recognize(clip) == "your flight to boston is confirmed"
    assert decode_wav(wav).rate == 24000 and decode_wav(wav).n_samples == clip.n_samples
    assert pcm_clip(slow).duration_s > 1.5 * clip.duration_s
    deltas = [e for e in events if e["type"] == "speech.audio.delta"]
    assert b"".join(base64.b64decode(e["audio"]) for e in deltas) == pcm
    assert events[-1]["type"] == "speech.audio.done" and events[-1]["usage"]["output_tokens"] > 0


# -------------------------------------------------------------------- Pipecat services

LLM_SCRIPT = r"""
import asyncio, json, os

from pipecat.adapters.schemas.function_schema import FunctionSchema
from pipecat.adapters.schemas.tools_schema import ToolsSchema
from pipecat.frames.frames import (
    ErrorFrame, FunctionCallInProgressFrame, LLMContextFrame, LLMTextFrame, MetricsFrame,
)
from pipecat.metrics.metrics import LLMUsageMetricsData
from pipecat.pipeline.worker import PipelineParams
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.tests.utils import run_test

from tasks.systems.pipecat_bot.components import Component
from tasks.systems.pipecat_bot.pipeline import SERVICES, pipecat_service

TOOLS = ToolsSchema(standard_tools=[FunctionSchema(
    name="lookup", description="Look up what the caller asked about.",
    properties={"heard": {"type": "string"}}, required=["heard"],
)])
PARAMS = PipelineParams(enable_metrics=True, enable_usage_metrics=True)


async def turn(llm, messages):
    context = LLMContext(messages=messages, tools=TOOLS)
    down, up = await run_test(
        llm, frames_to_send=[LLMContextFrame(context)], pipeline_params=PARAMS
    )
    frames = [*down, *up]
    usage = [d.value for f in frames if isinstance(f, MetricsFrame) for d in f.data
             if isinstance(d, LLMUsageMetricsData)]
    calls = {f.tool_call_id: f for f in frames if isinstance(f, FunctionCallInProgressFrame)}
    return {
        "calls": [{"id": f.tool_call_id, "name": f.function_name, "arguments": f.arguments}
                  for f in calls.values()],
        "text": "".join(f.text for f in down if isinstance(f, LLMTextFrame)),
        "errors": [f.error for f in frames if isinstance(f, ErrorFrame)],
        "usage": [[u.prompt_tokens, u.completion_tokens] for u in usage],
    }


async def exchange(component, key):
    if key is not None:  # a fault key (tasks.systems.standins.httpserver.FAULTS)
        os.environ[SERVICES["llm"][component["provider"]][2]] = key
    llm = pipecat_service("llm", Component.model_validate(component))

    async def handler(params):
        await params.result_callback({"answer": "sunny"})

    llm.register_function(None, handler)
    messages = [
        {"role": "system", "content": "You are a test agent."},
        {"role": "user", "content": os.environ["STANDIN_QUESTION"]},
    ]
    first = await turn(llm, messages)
    out = {"model": component["model"], "service": type(llm).__name__, "first": first, "key": key}
    if first["calls"]:
        call = first["calls"][0]
        function = {"name": call["name"], "arguments": json.dumps(call["arguments"])}
        messages += [
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": call["id"], "type": "function", "function": function}]},
            {"role": "tool", "tool_call_id": call["id"], "content": '{"answer": "sunny"}'},
        ]
        out["second"] = await turn(llm, messages)
    return out


async def main():
    keys = json.loads(os.environ.get("STANDIN_KEYS") or "[null]")
    components = json.loads(os.environ["STANDIN_COMPONENTS"])
    return [await exchange(c, k) for c in components for k in keys]


print(json.dumps(asyncio.run(main())))
"""

STT_SCRIPT = r"""
import asyncio, json, os

from pipecat.frames.frames import (
    ErrorFrame, InputAudioRawFrame, TranscriptionFrame,
    VADUserStartedSpeakingFrame, VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.worker import PipelineParams
from pipecat.tests.utils import run_test

from tasks.systems.pipecat_bot.components import Component
from tasks.systems.pipecat_bot.pipeline import pipecat_service

RATE = 16000  # the bot's pipeline rate (tasks.systems.pipecat_bot.offline.RATE)
STEP = RATE * 2 // 50  # 20 ms frames, as a transport delivers them


async def transcribe(component, pcm):
    stt = pipecat_service("stt", Component.model_validate(component))
    frames = [VADUserStartedSpeakingFrame()]
    frames += [InputAudioRawFrame(pcm[i:i + STEP], RATE, 1) for i in range(0, len(pcm), STEP)]
    frames.append(VADUserStoppedSpeakingFrame())
    params = PipelineParams(audio_in_sample_rate=RATE)
    down, up = await run_test(stt, frames_to_send=frames, pipeline_params=params)
    return {
        "model": component["model"],
        "service": type(stt).__name__,
        "transcripts": [f.text for f in down if isinstance(f, TranscriptionFrame)],
        "errors": [f.error for f in [*down, *up] if isinstance(f, ErrorFrame)],
    }


async def main():
    with open(os.environ["STANDIN_AUDIO"], "rb") as f:
        pcm = f.read()
    return [await transcribe(c, pcm) for c in json.loads(os.environ["STANDIN_COMPONENTS"])]


print(json.dumps(asyncio.run(main())))
"""

TTS_SCRIPT = r"""
import asyncio, json, os

from pipecat.frames.frames import ErrorFrame, TTSAudioRawFrame, TTSSpeakFrame
from pipecat.pipeline.worker import PipelineParams
from pipecat.tests.utils import run_test

from tasks.systems.pipecat_bot.components import Component
from tasks.systems.pipecat_bot.pipeline import pipecat_service

RATE = 24000  # the Audio API's pcm rate, which OpenAITTSService expects of the pipeline


async def speak(index, component, text, out_dir):
    tts = pipecat_service("tts", Component.model_validate(component))
    params = PipelineParams(audio_out_sample_rate=RATE)
    down, up = await run_test(tts, frames_to_send=[TTSSpeakFrame(text)], pipeline_params=params)
    audio = [f for f in down if isinstance(f, TTSAudioRawFrame)]
    path = os.path.join(out_dir, f"tts-{index}.pcm")
    with open(path, "wb") as f:
        f.write(b"".join(a.audio for a in audio))
    return {
        "model": component["model"],
        "voice": component["params"].get("voice"),
        "service": type(tts).__name__,
        "rates": sorted({a.sample_rate for a in audio}),
        "pcm": path,
        "errors": [f.error for f in [*down, *up] if isinstance(f, ErrorFrame)],
    }


async def main():
    components = json.loads(os.environ["STANDIN_COMPONENTS"])
    text, out_dir = os.environ["STANDIN_TEXT"], os.environ["STANDIN_OUT"]
    return [await speak(i, c, text, out_dir) for i, c in enumerate(components)]


print(json.dumps(asyncio.run(main())))
"""


def check_llm_exchange(result: dict[str, Any]) -> None:
    """A function call carrying what the user said, then the answer after the tool result."""
    first, second = result["first"], result.get("second") or {}
    assert not first["errors"] and not second.get("errors"), result
    assert first["calls"] and first["calls"][0]["name"] == "lookup", result
    assert first["calls"][0]["arguments"] == {"heard": QUESTION}
    assert second["text"] == "The answer is sunny.", result
    assert second["usage"] and second["usage"][0][0] > first["usage"][0][0] > 0, result
    assert second["usage"][0][1] == 5  # "The answer is sunny." at four characters a token


def test_pipecat_openai_llm_services_of_the_catalogue() -> None:
    require_pipecat()
    with FakeOpenAIHTTP(scripted_brain) as fake:
        components = catalogue_components("llm", fake.base_url)
        env = {"STANDIN_COMPONENTS": json.dumps(components), "STANDIN_QUESTION": QUESTION}
        results = run_in_pipecat(LLM_SCRIPT, env=env)
    assert [r["model"] for r in results] == [c["model"] for c in components]
    for result in results:
        assert result["service"] == "OpenAILLMService"
        check_llm_exchange(result)
    sent = [body for path, body in fake.requests if path == "/v1/chat/completions"]
    assert {b["model"] for b in sent} == {c["model"] for c in components}
    assert all(b["stream"] and b["stream_options"] == {"include_usage": True} for b in sent)
    assert all([t["function"]["name"] for t in b["tools"]] == ["lookup"] for b in sent)


def test_pipecat_openai_llm_service_reports_each_injected_fault() -> None:
    """What the bot's fault channel receives: an ``ErrorFrame`` naming the failure, after
    the SDK's own retries (429, dropped connection), and no function call."""
    require_pipecat()
    with FakeOpenAIHTTP(scripted_brain) as fake:
        [component] = [
            c for c in catalogue_components("llm", fake.base_url) if c["model"] == "gpt-5.4"
        ]
        env = {
            "STANDIN_COMPONENTS": json.dumps([component]),
            "STANDIN_QUESTION": QUESTION,
            "STANDIN_KEYS": json.dumps(["reject", "ratelimit", "malformed", "drop"]),
        }
        results = run_in_pipecat(LLM_SCRIPT, env=env)
    errors = {r["key"]: " ".join(r["first"]["errors"]) for r in results}
    assert all(not r["first"]["calls"] and "second" not in r for r in results), results
    assert "401 - Incorrect API key provided" in errors["reject"], errors
    assert "429 - Rate limit reached" in errors["ratelimit"], errors
    assert "Expecting" in errors["malformed"], errors  # the JSON decoder's complaint
    assert "Connection error" in errors["drop"], errors
    assert not fake.requests


def test_pipecat_openai_stt_services_of_the_catalogue(
    recognizer: Recognizer, tmp_path: Path
) -> None:
    require_pipecat()
    audio = tmp_path / "caller.pcm"
    audio.write_bytes(int16(caller_pcm(QUESTION, 16000)))
    with FakeOpenAIHTTP(recognizer=recognizer) as fake:
        components = catalogue_components("stt", fake.base_url)
        env = {"STANDIN_COMPONENTS": json.dumps(components), "STANDIN_AUDIO": str(audio)}
        results = run_in_pipecat(STT_SCRIPT, env=env)
    for component, result in zip(components, results, strict=True):
        assert result["service"] == "OpenAISTTService" and not result["errors"], result
        assert result["transcripts"] == ["what is the weather in boston"], result
        assert (
            "/v1/audio/transcriptions",
            {"model": component["model"], "language": "en"},
        ) in fake.requests


def test_pipecat_openai_tts_services_of_the_catalogue_models(
    recognizer: Recognizer, tmp_path: Path
) -> None:
    """The catalogue's TTS model ids with one of OpenAI's own voices; the audio is real
    speech of the text at 24 kHz."""
    require_pipecat()
    with FakeOpenAIHTTP() as fake:
        components = [
            {**c, "params": {**c["params"], "voice": "alloy"}}
            for c in catalogue_components("tts", fake.base_url)
        ]
        env = {
            "STANDIN_COMPONENTS": json.dumps(components),
            "STANDIN_TEXT": SPOKEN,
            "STANDIN_OUT": str(tmp_path),
        }
        results = run_in_pipecat(TTS_SCRIPT, env=env)
    for result in results:
        assert result["service"] == "OpenAITTSService" and not result["errors"], result
        assert result["rates"] == [24000]
        clip = pcm_clip(Path(result["pcm"]).read_bytes())
        assert fits(SPOKEN, clip), clip.duration_s
        assert recognizer.recognize(clip) == "your flight to boston is confirmed"
    asked = [body for path, body in fake.requests if path == "/v1/audio/speech"]
    assert {b["model"] for b in asked} == {c["model"] for c in components}
    assert all(b["response_format"] == "pcm" and b["input"] == SPOKEN for b in asked)


def test_pipecat_openai_tts_speaks_the_catalogue_voices(
    recognizer: Recognizer, tmp_path: Path
) -> None:
    """The catalogue's self-hosted voices (Voxtral ``casual_female``, Kokoro ``af_heart``),
    which Pipecat 1.14's ``OpenAITTSService`` refuses on its own, reach the server as
    configured (``pipeline.openai_tts_options``), and the 24 kHz answer is labelled 24 kHz."""
    require_pipecat()
    with FakeOpenAIHTTP() as fake:
        components = catalogue_components("tts", fake.base_url)
        env = {
            "STANDIN_COMPONENTS": json.dumps(components),
            "STANDIN_TEXT": SPOKEN,
            "STANDIN_OUT": str(tmp_path),
        }
        results = run_in_pipecat(TTS_SCRIPT, env=env)
    assert {r["voice"] for r in results} >= {"casual_female", "af_heart"}
    for result in results:
        assert not result["errors"] and result["rates"] == [24000], result
        clip = pcm_clip(Path(result["pcm"]).read_bytes())
        assert fits(SPOKEN, clip), clip.duration_s
    asked = [body for path, body in fake.requests if path == "/v1/audio/speech"]
    assert {b["voice"] for b in asked} == {r["voice"] for r in results}
