"""ElevenLabs stand-in: Pipecat's own ``ElevenLabsRealtimeSTTService`` and
``ElevenLabsTTSService``, built from the catalogue's component (model ``scribe_v2_realtime``,
``eleven_v3_conversational`` with voice ``21m00Tcm4TlvDq8ikWAM``) and pointed at the stand-in
through ``base_url`` / ``url``, transcribe real caller speech and speak real eSpeak speech;
the raw protocol (handshake 401, ``stream-input``, VAD commits, timestamps) is checked with
plain ``websockets``."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from perturbations.audio import Clip
from tasks.systems.catalogue import load_catalogue, to_system_spec
from tasks.systems.standins.elevenlabs import FakeElevenLabs
from tasks.voice.stt import Recognizer, SttSpec
from tasks.voice.telephony import resample
from tasks.voice.tts import synthesize
from tasks.voice.vad import speech_segments
from tests.tasks.systems.standins.pipecat_driver import require_pipecat, run_in_pipecat
from tests.tasks.systems.standins.test_openai_realtime import CALLER

SYSTEM = "scribe-v2.2-realtime+gemini-3-flash+tts-conversational-v3-alpha"
RATE = 16000  # the bot's pipeline rate (tasks.systems.pipecat_bot.offline.RATE)
SENTENCE = "Your flight to Boston is confirmed for tomorrow morning."


@pytest.fixture(scope="module")
def recognizer(tmp_path_factory: pytest.TempPathFactory) -> Recognizer:
    return Recognizer(SttSpec(lm="general"), None, tmp_path_factory.mktemp("lm"))


@pytest.fixture
def fake(recognizer: Recognizer, tmp_path: Path) -> Any:
    with FakeElevenLabs(recognizer, tmp_path) as server:
        yield server


def catalogue_component(role: str) -> dict[str, Any]:
    spec = to_system_spec(load_catalogue().get(SYSTEM), environ={})
    return dict(spec.params["components"][role])


def caller_pcm(text: str, rate: int = RATE, silence_s: float = 0.8) -> bytes:
    clip = resample(synthesize(text, CALLER), rate)
    clip = Clip.concat(Clip.silence(0.3, rate), clip, Clip.silence(silence_s, rate))
    return clip.to_int16().astype("<i2").tobytes()


def client_ssl(fake: FakeElevenLabs) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(fake.cert_file))


STT_SCRIPT = """
import asyncio, json, os
from pipecat.frames.frames import (
    ErrorFrame, InputAudioRawFrame, InterimTranscriptionFrame, TranscriptionFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.task import PipelineParams
from pipecat.tests.utils import SleepFrame, run_test
from tasks.systems.pipecat_bot.components import Component
from tasks.systems.pipecat_bot.pipeline import pipecat_service

args = json.loads(os.environ["STANDIN_ARGS"])

async def main():
    stt = pipecat_service("stt", Component.model_validate(args["component"]))
    pcm = open(args["audio"], "rb").read()
    step = args["rate"] * 2 // 50  # 20 ms frames, as a transport delivers them
    frames = [InputAudioRawFrame(pcm[i:i + step], args["rate"], 1) for i in range(0, len(pcm), step)]
    frames += [SleepFrame(0.5), VADUserStoppedSpeakingFrame(stop_secs=0.4), SleepFrame(3.0)]
    down, up = await run_test(
        stt, frames_to_send=frames,
        pipeline_params=PipelineParams(audio_in_sample_rate=args["rate"]),
    )
    print(json.dumps({
        "service": type(stt).__name__,
        "final": [f.text for f in down if isinstance(f, TranscriptionFrame)],
        "interim": [f.text for f in down if isinstance(f, InterimTranscriptionFrame)],
        "errors": [str(f.error) for f in [*down, *up] if isinstance(f, ErrorFrame)],
    }))

asyncio.run(main())
"""


def test_pipecat_elevenlabs_realtime_stt_transcribes_real_speech(
    fake: FakeElevenLabs, tmp_path: Path
) -> None:
    require_pipecat()
    component = catalogue_component("stt")
    assert component["model"] == "scribe_v2_realtime"
    component["params"] = {**component["params"], "base_url": fake.host}
    audio = tmp_path / "caller.pcm"
    audio.write_bytes(caller_pcm("I would like to change my flight to Boston"))
    started = time.perf_counter()
    out = run_in_pipecat(
        STT_SCRIPT,
        env={
            "STANDIN_ARGS": json.dumps({"component": component, "audio": str(audio), "rate": RATE}),
            "ELEVENLABS_API_KEY": "test-key",
            "SSL_CERT_FILE": str(fake.cert_file),
        },
    )
    assert out["service"] == "ElevenLabsRealtimeSTTService"
    assert not out["errors"], out
    assert len(out["final"]) == 1, out
    assert "flight" in out["final"][0] and "boston" in out["final"][0].lower(), out
    session = fake.stt_sessions[0]
    assert session.query["model_id"] == "scribe_v2_realtime"
    assert session.query["audio_format"] == f"pcm_{RATE}"
    assert session.query["commit_strategy"] == "manual"
    assert session.committed == out["final"]
    print(f"elevenlabs stt: {time.perf_counter() - started:.1f} s, heard {out['final']}")


TTS_SCRIPT = """
import asyncio, json, os
from pipecat.frames.frames import ErrorFrame, TTSAudioRawFrame, TTSSpeakFrame, TTSTextFrame
from pipecat.pipeline.task import PipelineParams
from pipecat.tests.utils import SleepFrame, run_test
from tasks.systems.pipecat_bot.components import Component
from tasks.systems.pipecat_bot.pipeline import pipecat_service

args = json.loads(os.environ["STANDIN_ARGS"])

async def main():
    tts = pipecat_service("tts", Component.model_validate(args["component"]))
    down, up = await run_test(
        tts, frames_to_send=[TTSSpeakFrame(args["text"]), SleepFrame(2.5)],
        pipeline_params=PipelineParams(audio_out_sample_rate=args["rate"]),
    )
    audio = [f for f in down if isinstance(f, TTSAudioRawFrame)]
    with open(args["out"], "wb") as sink:
        sink.write(b"".join(f.audio for f in audio))
    print(json.dumps({
        "service": type(tts).__name__,
        "rates": sorted({f.sample_rate for f in audio}),
        "words": [f.text for f in down if isinstance(f, TTSTextFrame)],
        "errors": [str(f.error) for f in [*down, *up] if isinstance(f, ErrorFrame)],
    }))

asyncio.run(main())
"""


def test_pipecat_elevenlabs_tts_speaks_the_text(
    fake: FakeElevenLabs, tmp_path: Path, recognizer: Recognizer
) -> None:
    require_pipecat()
    component = catalogue_component("tts")
    assert component["model"] == "eleven_v3_conversational"
    assert component["params"]["voice_id"] == "21m00Tcm4TlvDq8ikWAM"
    component["params"] = {**component["params"], "url": fake.ws_url}
    out_file = tmp_path / "speech.pcm"
    started = time.perf_counter()
    out = run_in_pipecat(
        TTS_SCRIPT,
        env={
            "STANDIN_ARGS": json.dumps(
                {"component": component, "text": SENTENCE, "rate": RATE, "out": str(out_file)}
            ),
            "ELEVENLABS_API_KEY": "test-key",
            "SSL_CERT_FILE": str(fake.cert_file),
        },
    )
    assert out["service"] == "ElevenLabsTTSService"
    assert not out["errors"], out
    assert out["rates"] == [RATE]
    clip = Clip.from_int16(np.frombuffer(out_file.read_bytes(), dtype="<i2"), RATE)
    # About 2.5 words a second of speech for nine words, and it is speech.
    assert 2.0 < clip.duration_s < 7.0, clip.duration_s
    assert speech_segments(clip)
    heard = recognizer.recognize(clip, None)
    assert "boston" in heard.lower() and "flight" in heard, heard
    # Word timestamps come from the stand-in's alignment of the text it was sent.
    assert " ".join(out["words"]).split() == SENTENCE.split(), out["words"]
    session = fake.tts_sessions[0]
    assert session.voice == "21m00Tcm4TlvDq8ikWAM"
    assert session.query["model_id"] == "eleven_v3_conversational"
    assert session.query["output_format"] == f"pcm_{RATE}"
    assert session.closed, "Pipecat closed its context and got isFinal"
    print(f"elevenlabs tts: {time.perf_counter() - started:.1f} s, {clip.duration_s:.2f} s audio")


async def _scribe_vad(fake: FakeElevenLabs) -> list[dict[str, Any]]:
    url = (
        f"wss://{fake.host}/v1/speech-to-text/realtime?model_id=scribe_v2_realtime"
        "&audio_format=pcm_16000&commit_strategy=vad&include_timestamps=true"
    )
    seen: list[dict[str, Any]] = []
    async with connect(url, additional_headers={"xi-api-key": "k"}, ssl=client_ssl(fake)) as ws:
        seen.append(json.loads(await ws.recv()))
        pcm = caller_pcm("What is the weather in Boston")
        step = RATE * 2 // 10
        for i in range(0, len(pcm), step):
            chunk = base64.b64encode(pcm[i : i + step]).decode()
            message = {"message_type": "input_audio_chunk", "audio_base_64": chunk}
            await ws.send(json.dumps({**message, "commit": False, "sample_rate": RATE}))
        async with asyncio.timeout(10):
            while not seen or seen[-1]["message_type"] != "committed_transcript_with_timestamps":
                seen.append(json.loads(await ws.recv()))
    return seen


def test_scribe_vad_commit_with_timestamps(fake: FakeElevenLabs) -> None:
    seen = asyncio.run(_scribe_vad(fake))
    kinds = [m["message_type"] for m in seen]
    assert kinds == [
        "session_started",
        "partial_transcript",
        "committed_transcript",
        "committed_transcript_with_timestamps",
    ]
    assert seen[0]["config"]["commit_strategy"] == "vad"
    final = seen[-1]
    assert "weather" in final["text"], final
    words = [w["text"] for w in final["words"] if w["type"] == "word"]
    assert words == final["text"].split()


async def _stream_input(fake: FakeElevenLabs) -> list[dict[str, Any]]:
    url = (
        f"{fake.ws_url}/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM/stream-input"
        "?model_id=eleven_v3_conversational&output_format=ulaw_8000"
    )
    seen: list[dict[str, Any]] = []
    async with connect(url, ssl=client_ssl(fake)) as ws:  # key in the first message
        await ws.send(json.dumps({"text": " ", "xi_api_key": "k", "voice_settings": {}}))
        await ws.send(json.dumps({"text": "Hello there. "}))
        await ws.send(json.dumps({"text": ""}))  # end of input
        async for raw in ws:
            seen.append(json.loads(raw))
    return seen


def test_stream_input_speaks_mulaw_and_ends_with_is_final(fake: FakeElevenLabs) -> None:
    seen = asyncio.run(_stream_input(fake))
    assert seen[-1] == {"isFinal": True}
    audio = base64.b64decode(seen[0]["audio"])
    assert seen[0]["isFinal"] is False
    assert 0.5 < len(audio) / 8000 < 3.0  # one byte a sample at 8 kHz
    assert "".join(seen[0]["alignment"]["chars"]) == "Hello there. "


async def _rejected(fake: FakeElevenLabs, path: str) -> InvalidStatus:
    try:
        async with connect(
            f"{fake.ws_url}{path}",
            additional_headers={"xi-api-key": "reject"},
            ssl=client_ssl(fake),
        ):
            pass
    except InvalidStatus as exc:
        return exc
    raise AssertionError("the stand-in accepted a rejected key")


@pytest.mark.parametrize(
    "path",
    [
        "/v1/speech-to-text/realtime?model_id=scribe_v2_realtime",
        "/v1/text-to-speech/v/multi-stream-input?model_id=m&output_format=pcm_16000",
    ],
)
def test_a_rejected_key_gets_elevenlabs_401(fake: FakeElevenLabs, path: str) -> None:
    exc = asyncio.run(_rejected(fake, path))
    assert exc.response.status_code == 401
    assert json.loads(exc.response.body)["detail"]["status"] == "invalid_api_key"
