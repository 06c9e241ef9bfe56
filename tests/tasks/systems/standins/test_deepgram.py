"""The Deepgram stand-in: Pipecat's own ``DeepgramSTTService`` (nova-3) and
``DeepgramTTSService`` (aura-2, voice ``aura-2-helena-en``), built by the bot's
``pipecat_service`` from the catalogue's own components, talk to it unchanged through
``base_url``; plus the plain protocol over raw WebSockets (no Deepgram SDK in ``.venv``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from perturbations.audio import Clip, VoiceSpec
from tasks.systems.catalogue import BUILTIN_DIR, load_entry, to_system_spec
from tasks.systems.standins.deepgram import FakeDeepgram
from tasks.voice.stt import Recognizer, SttSpec
from tasks.voice.telephony import resample
from tasks.voice.tts import synthesize
from tasks.voice.vad import speech_segments
from tests.tasks.systems.standins.pipecat_driver import require_pipecat, run_in_pipecat

CALLER = VoiceSpec(voice="en-us+klatt3", pitch=50)
RATE = 16000  # the bot's pipeline rate (tasks.systems.pipecat_bot.offline.RATE)
SYSTEM = "nova-3+gpt-5.4-mini+aura-2"

# Runs in .venv-pipecat: builds each case's service with the bot's own pipecat_service and
# drives it the way Pipecat's tests do (pipecat.tests.utils.run_test), one case at a time.
DRIVER = r"""
import asyncio, json, os, sys
from pipecat.frames.frames import (ErrorFrame, InputAudioRawFrame, TranscriptionFrame,
    TTSAudioRawFrame, TTSSpeakFrame, TTSTextFrame, VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame)
from pipecat.pipeline.task import PipelineParams
from pipecat.tests.utils import SleepFrame, run_test
from tasks.systems.pipecat_bot.components import Component
from tasks.systems.pipecat_bot.pipeline import pipecat_service

def stt_frames(case):
    frames = []
    for turn in case["turns"]:
        pcm = open(turn["pcm"], "rb").read()
        frames.append(VADUserStartedSpeakingFrame())
        for i in range(0, len(pcm), 640):  # 20 ms at 16 kHz, as a transport sends
            frames.append(InputAudioRawFrame(pcm[i:i + 640], 16000, 1))
        if turn["finalize"]:
            frames.append(VADUserStoppedSpeakingFrame())
        frames.append(SleepFrame(sleep=turn["wait_s"]))
    return frames

async def run(case):
    os.environ[case["key_env"]] = case["key"]
    service = pipecat_service(case["role"], Component(**case["component"]))
    if case["role"] == "stt":
        frames = stt_frames(case)
    else:
        frames = [TTSSpeakFrame(t) for t in case["texts"]] + [SleepFrame(sleep=case["wait_s"])]
    rates = PipelineParams(audio_in_sample_rate=16000, audio_out_sample_rate=16000)  # the bot's
    down, up = await run_test(
        service, frames_to_send=frames, pipeline_params=rates, start_timeout=10
    )
    audio = [f for f in down if isinstance(f, TTSAudioRawFrame)]
    if audio:
        with open(case["audio_out"], "wb") as out:
            out.write(b"".join(f.audio for f in audio))
    return {
        "transcripts": [f.text for f in down if isinstance(f, TranscriptionFrame)],
        "tts_text": [f.text for f in down if isinstance(f, TTSTextFrame)],
        "audio_rates": sorted({f.sample_rate for f in audio}),
        "errors": [str(f.error) for f in [*down, *up] if isinstance(f, ErrorFrame)],
        "service": type(service).__name__,
    }

cases = json.loads(os.environ["STANDIN_CASES"])
print(json.dumps([asyncio.run(run(case)) for case in cases]))
"""


def catalogue_component(system: str, role: str, **host: str) -> dict[str, Any]:
    """The catalogue's own component (``${VAR:-default}`` at its default) plus the
    host-override constructor argument that points it at the stand-in."""
    spec = to_system_spec(load_entry(BUILTIN_DIR / f"{system}.yaml"), environ={})
    component = dict(spec.params["components"][role])
    component["params"] = {**component.get("params", {}), **host}
    return component


def caller_pcm(path: Path, text: str, silence_s: float) -> str:
    clip = resample(synthesize(text, CALLER), RATE)
    clip = Clip.concat(Clip.silence(0.3, RATE), clip, Clip.silence(silence_s, RATE))
    path.write_bytes(clip.to_int16().astype("<i2").tobytes())
    return str(path)


def pcm_clip(path: Path, rate: int = RATE) -> Clip:
    return Clip.from_int16(np.frombuffer(path.read_bytes(), dtype="<i2"), rate)


@pytest.fixture(scope="module")
def recognizer(tmp_path_factory: pytest.TempPathFactory) -> Recognizer:
    return Recognizer(SttSpec(lm="general"), None, tmp_path_factory.mktemp("lm"))


@pytest.fixture(scope="module")
def pipecat_run(
    recognizer: Recognizer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[FakeDeepgram, list[dict[str, Any]], Path]]:
    """One Pipecat process: nova-3 hears two turns (ended by the bot's VAD -> Finalize,
    then by silence alone), aura-2 speaks, and both services meet a rejected key."""
    require_pipecat()
    tmp = tmp_path_factory.mktemp("deepgram")
    with FakeDeepgram(recognizer) as fake:
        stt = catalogue_component(SYSTEM, "stt", base_url=fake.base_url)
        tts = catalogue_component(SYSTEM, "tts", base_url=fake.base_url)
        turns = [
            {
                "pcm": caller_pcm(tmp / "t1.pcm", "What is the weather in Boston", 0.2),
                "finalize": True,
                "wait_s": 1.5,
            },
            {
                "pcm": caller_pcm(tmp / "t2.pcm", "I want to change my flight", 1.0),
                "finalize": False,
                "wait_s": 3.0,  # the last transcript must land before EndFrame
            },
        ]
        base = {"key_env": "DEEPGRAM_API_KEY", "key": "test-key"}
        cases = [
            {**base, "role": "stt", "component": stt, "turns": turns},
            {
                **base,
                "role": "tts",
                "component": tts,
                "texts": ["Your flight to Boston is confirmed."],
                "wait_s": 3.0,
                "audio_out": str(tmp / "tts.pcm"),
            },
            {**base, "key": "reject", "role": "stt", "component": stt, "turns": []},
            {**base, "key": "reject", "role": "tts", "component": tts, "texts": [], "wait_s": 0},
        ]
        out = run_in_pipecat(DRIVER, env={"STANDIN_CASES": json.dumps(cases)}, timeout=90)
        yield fake, out, tmp


def test_catalogue_components_construct_with_their_own_params(
    pipecat_run: tuple[FakeDeepgram, list[dict[str, Any]], Path],
) -> None:
    _, out, _ = pipecat_run
    assert out[0]["service"] == "DeepgramSTTService"
    assert out[1]["service"] == "DeepgramTTSService"
    stt = catalogue_component(SYSTEM, "stt")
    tts = catalogue_component(SYSTEM, "tts")
    assert stt["model"] == "nova-3"
    assert (tts["model"], tts["params"]["voice"]) == ("aura-2", "aura-2-helena-en")


def test_pipecat_deepgram_stt_transcribes_real_speech(
    pipecat_run: tuple[FakeDeepgram, list[dict[str, Any]], Path],
) -> None:
    fake, out, _ = pipecat_run
    stt = out[0]
    assert not stt["errors"], stt["errors"]
    assert len(stt["transcripts"]) == 2, stt["transcripts"]
    first, second = stt["transcripts"]
    assert "weather" in first and "boston" in first, first
    assert "flight" in second, second
    listen = fake.listens[0]
    assert "Finalize" in listen.received  # the bot's VAD stop became Deepgram's Finalize
    finals = [r for r in listen.results if r["channel"]["alternatives"][0]["transcript"]]
    assert [r["from_finalize"] for r in finals] == [True, False]  # then endpointing
    assert listen.rate == RATE and listen.model == "nova-3"


def test_pipecat_deepgram_tts_speaks_the_text(
    pipecat_run: tuple[FakeDeepgram, list[dict[str, Any]], Path], recognizer: Recognizer
) -> None:
    fake, out, tmp = pipecat_run
    tts = out[1]
    assert not tts["errors"], tts["errors"]
    assert tts["audio_rates"] == [RATE]
    speak = fake.speaks[0]
    assert speak.model == "aura-2-helena-en"  # the catalogue voice is Deepgram's model param
    assert speak.rate == RATE and speak.flushed == 1
    clip = pcm_clip(tmp / "tts.pcm")
    assert 1.2 < clip.duration_s < 5.0, clip.duration_s
    assert speech_segments(clip)
    heard = recognizer.recognize(clip)
    assert "flight" in heard or "boston" in heard, heard


def test_pipecat_services_report_a_rejected_key(
    pipecat_run: tuple[FakeDeepgram, list[dict[str, Any]], Path],
) -> None:
    _, out, _ = pipecat_run
    stt_errors, tts_errors = out[2]["errors"], out[3]["errors"]
    assert any("401" in e for e in stt_errors), stt_errors
    assert any("401" in e and "Invalid credentials" in e for e in tts_errors), tts_errors


# ---------------------------------------------------------------- plain protocol


async def _listen(url: str, audio: list[bytes]) -> list[dict[str, Any]]:
    query = "model=nova-3&encoding=linear16&sample_rate=16000&vad_events=true&utterance_end_ms=1000"
    received = []
    async with connect(
        f"{url}/v1/listen?{query}", additional_headers={"Authorization": "Token k"}
    ) as ws:
        for pcm in audio:
            for i in range(0, len(pcm), 3200):
                await ws.send(pcm[i : i + 3200])
        await ws.send(json.dumps({"type": "KeepAlive"}))
        await ws.send(json.dumps({"type": "CloseStream"}))
        async with asyncio.timeout(20):
            async for message in ws:
                received.append(json.loads(message))
    return received


def test_listen_protocol(recognizer: Recognizer, tmp_path: Path) -> None:
    pcm = Path(caller_pcm(tmp_path / "a.pcm", "What is the weather in Boston", 1.0))
    with FakeDeepgram(recognizer) as fake:
        messages = asyncio.run(_listen(fake.base_url, [pcm.read_bytes()]))
    kinds = [m["type"] for m in messages]
    assert kinds == ["SpeechStarted", "Results", "UtteranceEnd", "Metadata"], kinds
    result = messages[1]
    assert result["is_final"] and result["speech_final"] and not result["from_finalize"]
    alt = result["channel"]["alternatives"][0]
    assert "weather" in alt["transcript"]
    assert [w["word"] for w in alt["words"]] == alt["transcript"].split()
    assert result["start"] < alt["words"][0]["start"] < alt["words"][-1]["end"]
    assert alt["words"][-1]["end"] <= result["start"] + result["duration"] + 1e-3
    assert messages[-1]["duration"] == pytest.approx(pcm_clip(pcm).duration_s, abs=0.01)


async def _speak(url: str) -> dict[str, Any]:
    out: dict[str, Any] = {"audio": b"", "text": []}
    async with connect(
        f"{url}/v1/speak?model=aura-2-helena-en&encoding=mulaw&sample_rate=8000",
        subprotocols=["token", "k"],  # type: ignore[list-item]
    ) as ws:
        out["subprotocol"] = ws.subprotocol
        await ws.send(json.dumps({"type": "Speak", "text": "Hello, "}))
        await ws.send(json.dumps({"type": "Speak", "text": "how can I help?"}))
        await ws.send(json.dumps({"type": "Flush"}))
        async with asyncio.timeout(20):
            while True:
                message = await ws.recv()
                if isinstance(message, bytes):
                    out["audio"] += message
                    continue
                out["text"].append(json.loads(message))
                if out["text"][-1]["type"] == "Flushed":
                    break
        await ws.send(json.dumps({"type": "Speak", "text": "This will be dropped."}))
        await ws.send(json.dumps({"type": "Clear"}))
        out["cleared"] = json.loads(await ws.recv())
        await ws.send(json.dumps({"type": "Close"}))
    return out


def test_speak_protocol(recognizer: Recognizer) -> None:
    with FakeDeepgram(recognizer) as fake:
        out = asyncio.run(_speak(fake.base_url))
        characters = fake.speaks[0].characters
    assert out["subprotocol"] == "token"
    assert [m["type"] for m in out["text"]] == ["Metadata", "Flushed"]
    assert out["text"][0]["model_name"] == "aura-2-helena-en"
    assert 0.8 < len(out["audio"]) / 8000 < 4.0  # mu-law: one byte a sample
    assert out["cleared"] == {"type": "Cleared", "sequence_id": 0}
    assert characters == len("Hello, how can I help?")


async def _refused(url: str, path: str, headers: dict[str, str]) -> InvalidStatus:
    with pytest.raises(InvalidStatus) as info:
        async with connect(url + path, additional_headers=headers):
            pass
    return info.value


def test_handshake_refusals(recognizer: Recognizer) -> None:
    with FakeDeepgram(recognizer) as fake:
        url = fake.base_url
        cases = {
            "no key": asyncio.run(_refused(url, "/v1/listen?model=nova-3", {})),
            "rejected": asyncio.run(
                _refused(url, "/v1/speak?model=x", {"Authorization": "Token reject"})
            ),
            "encoding": asyncio.run(
                _refused(url, "/v1/listen?encoding=opus", {"Authorization": "Token k"})
            ),
        }
    statuses = {name: err.response.status_code for name, err in cases.items()}
    assert statuses == {"no key": 401, "rejected": 401, "encoding": 400}
    body = json.loads(cases["rejected"].response.body or b"{}")
    assert body["err_code"] == "INVALID_AUTH"
    assert cases["rejected"].response.headers["dg-error"] == "Invalid credentials."
