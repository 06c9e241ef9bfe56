"""The Cartesia stand-in: Pipecat's own ``CartesiaSTTService`` (ink-whisper, ``base_url``)
and ``CartesiaTTSService`` (sonic-3, voice 71a7ad14-..., ``url``), built by the bot's
``pipecat_service`` from the catalogue's own components, talk to it unchanged; plus the
plain protocol over raw WebSockets (no Cartesia SDK in ``.venv``)."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from perturbations.audio import Clip
from tasks.systems.standins.cartesia import FakeCartesia
from tasks.voice.stt import Recognizer, SttSpec
from tasks.voice.vad import speech_segments
from tests.tasks.systems.standins.pipecat_driver import require_pipecat, run_in_pipecat
from tests.tasks.systems.standins.test_deepgram import (
    DRIVER,
    RATE,
    caller_pcm,
    catalogue_component,
    pcm_clip,
)

SYSTEM = "ink-whisper+haiku-4.5+sonic-3"
VOICE = "71a7ad14-091c-4e8e-a314-022ece01c121"
HEADERS = {"X-API-Key": "k", "Cartesia-Version": "2026-03-01"}


@pytest.fixture(scope="module")
def recognizer(tmp_path_factory: pytest.TempPathFactory) -> Recognizer:
    return Recognizer(SttSpec(lm="general"), None, tmp_path_factory.mktemp("lm"))


@pytest.fixture(scope="module")
def pipecat_run(
    recognizer: Recognizer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[FakeCartesia, list[dict[str, Any]], Path]]:
    """One Pipecat process: ink-whisper hears two turns (each ended by the bot's VAD ->
    ``finalize``), sonic-3 speaks two sentences, both meet a rejected key."""
    require_pipecat()
    tmp = tmp_path_factory.mktemp("cartesia")
    with FakeCartesia(recognizer) as fake:
        stt = catalogue_component(SYSTEM, "stt", base_url=fake.base_url)
        tts = catalogue_component(SYSTEM, "tts", url=fake.tts_url)
        turns = [
            {
                "pcm": caller_pcm(tmp / f"t{i}.pcm", text, 0.3),
                "finalize": True,
                "wait_s": wait_s,  # the last transcript must land before EndFrame
            }
            for i, (text, wait_s) in enumerate(
                [("What is the weather in Boston", 1.5), ("I want to change my flight", 3.0)]
            )
        ]
        base = {"key_env": "CARTESIA_API_KEY", "key": "test-key"}
        cases = [
            {**base, "role": "stt", "component": stt, "turns": turns},
            {
                **base,
                "role": "tts",
                "component": tts,
                "texts": ["Your flight to Boston is confirmed. Have a good trip."],
                "wait_s": 3.0,
                "audio_out": str(tmp / "tts.pcm"),
            },
            {**base, "key": "reject", "role": "stt", "component": stt, "turns": []},
            {**base, "key": "reject", "role": "tts", "component": tts, "texts": ["Hi."]}
            | {"wait_s": 0.5},
        ]
        out = run_in_pipecat(DRIVER, env={"STANDIN_CASES": json.dumps(cases)}, timeout=90)
        yield fake, out, tmp


def test_catalogue_components_construct_with_their_own_params(
    pipecat_run: tuple[FakeCartesia, list[dict[str, Any]], Path],
) -> None:
    _, out, _ = pipecat_run
    assert out[0]["service"] == "CartesiaSTTService"
    assert out[1]["service"] == "CartesiaTTSService"
    assert catalogue_component(SYSTEM, "stt")["model"] == "ink-whisper"
    tts = catalogue_component(SYSTEM, "tts")
    assert (tts["model"], tts["params"]) == ("sonic-3", {"voice_id": VOICE})


def test_pipecat_cartesia_stt_transcribes_real_speech(
    pipecat_run: tuple[FakeCartesia, list[dict[str, Any]], Path],
) -> None:
    fake, out, _ = pipecat_run
    stt = out[0]
    assert not stt["errors"], stt["errors"]
    assert len(stt["transcripts"]) == 2, stt["transcripts"]
    first, second = stt["transcripts"]
    assert "weather" in first and "boston" in first, first
    assert "flight" in second, second
    session = fake.stt_sessions[0]
    assert (session.model, session.rate, session.language) == ("ink-whisper", RATE, "en")
    assert session.commands[:2] == ["finalize", "finalize"]
    assert session.commands[-1] == "done"  # Pipecat's goodbye on EndFrame
    assert session.audio_s > 3.0


def test_pipecat_cartesia_tts_speaks_the_text(
    pipecat_run: tuple[FakeCartesia, list[dict[str, Any]], Path], recognizer: Recognizer
) -> None:
    fake, out, tmp = pipecat_run
    tts = out[1]
    assert not tts["errors"], tts["errors"]
    assert tts["audio_rates"] == [RATE]
    session = fake.tts_sessions[0]
    first = session.requests[0]
    assert first["model_id"] == "sonic-3"
    assert first["voice"] == {"mode": "id", "id": VOICE}
    assert first["output_format"] == {
        "container": "raw",
        "encoding": "pcm_s16le",
        "sample_rate": RATE,
    }
    assert first["add_timestamps"] is True
    # Pipecat takes its spoken text from the word timestamps (push_text_frames=False).
    said = " ".join(tts["tts_text"]).lower()
    assert "flight" in said and "trip" in said, tts["tts_text"]
    clip = pcm_clip(tmp / "tts.pcm")
    assert 2.0 < clip.duration_s < 7.0, clip.duration_s
    assert speech_segments(clip)
    heard = recognizer.recognize(clip)
    assert "flight" in heard or "boston" in heard or "trip" in heard, heard


def test_pipecat_services_report_a_rejected_key(
    pipecat_run: tuple[FakeCartesia, list[dict[str, Any]], Path],
) -> None:
    _, out, _ = pipecat_run
    stt_errors, tts_errors = out[2]["errors"], out[3]["errors"]
    assert any("401" in e for e in stt_errors), stt_errors
    assert any("401" in e for e in tts_errors), tts_errors


# ---------------------------------------------------------------- plain protocol


async def _stt(url: str, pcm: bytes) -> list[Any]:
    query = "model=ink-whisper&language=en&encoding=pcm_s16le&sample_rate=16000"
    received: list[Any] = []
    async with connect(f"{url}/stt/websocket?{query}", additional_headers=HEADERS) as ws:
        for i in range(0, len(pcm), 3200):
            await ws.send(pcm[i : i + 3200])
        await ws.send("finalize")
        await ws.send("done")
        async with asyncio.timeout(20):
            async for message in ws:
                received.append(json.loads(message))
    return received


def test_stt_protocol(recognizer: Recognizer, tmp_path: Path) -> None:
    pcm = Path(caller_pcm(tmp_path / "a.pcm", "What is the weather in Boston", 0.2))
    with FakeCartesia(recognizer) as fake:
        messages = asyncio.run(_stt(fake.base_url, pcm.read_bytes()))
    assert [m["type"] for m in messages] == ["transcript", "flush_done", "done"], messages
    transcript = messages[0]
    assert transcript["is_final"] is True and transcript["language"] == "en"
    assert "weather" in transcript["text"]
    assert [w["word"] for w in transcript["words"]] == transcript["text"].split()
    assert 1.0 < transcript["duration"] < pcm_clip(pcm).duration_s


def _request(context_id: str, text: str, more: bool, **extra: Any) -> str:
    return json.dumps(
        {
            "model_id": "sonic-3",
            "transcript": text,
            "voice": {"mode": "id", "id": VOICE},
            "output_format": {"container": "raw", "encoding": "pcm_f32le", "sample_rate": 24000},
            "context_id": context_id,
            "continue": more,
            "add_timestamps": True,
            **extra,
        }
    )


async def _tts(url: str) -> dict[str, list[dict[str, Any]]]:
    by_context: dict[str, list[dict[str, Any]]] = {"a": [], "b": [], "bad": []}
    async with connect(f"{url}/tts/websocket?cartesia_version=2026-03-01&api_key=k") as ws:
        # A sentence streamed in pieces (held until it ends), then closed with continue=false.
        await ws.send(_request("a", "Hello there, ", True))
        await ws.send(_request("a", "how can I help?", True, flush=True))
        await ws.send(_request("a", "", False))
        await ws.send(_request("b", "This one is cancelled", True))
        await ws.send(json.dumps({"context_id": "b", "cancel": True}))
        await ws.send(json.dumps({"context_id": "bad", "transcript": "x", "continue": False}))
        async with asyncio.timeout(20):
            while not by_context["a"] or by_context["a"][-1]["type"] != "done":
                message = json.loads(await ws.recv())
                by_context[message["context_id"]].append(message)
    return by_context


def test_tts_protocol(recognizer: Recognizer) -> None:
    with FakeCartesia(recognizer) as fake:
        got = asyncio.run(_tts(fake.base_url))
        characters = fake.tts_sessions[0].characters
    kinds = [m["type"] for m in got["a"]]
    assert kinds[0] == "timestamps" and kinds[-2:] == ["flush_done", "done"], kinds
    assert set(kinds[1:-2]) == {"chunk"}
    stamps = got["a"][0]["word_timestamps"]
    assert stamps["words"] == ["Hello", "there,", "how", "can", "I", "help?"]
    assert stamps["start"] == sorted(stamps["start"]) and stamps["end"][-1] > stamps["start"][0]
    audio = b"".join(base64.b64decode(m["data"]) for m in got["a"] if m["type"] == "chunk")
    clip = Clip.from_float(np.frombuffer(audio, dtype="<f4"), 24000, clip=True)
    assert 0.8 < clip.duration_s < 4.0 and speech_segments(clip)
    assert stamps["end"][-1] <= clip.duration_s
    assert got["b"] == []  # cancelled before a sentence was complete: nothing spoken
    assert got["bad"] and got["bad"][0]["type"] == "error" and got["bad"][0]["done"] is True
    assert characters == len("Hello there, how can I help?")


async def _refused(url: str, headers: dict[str, str]) -> InvalidStatus:
    with pytest.raises(InvalidStatus) as info:
        async with connect(url, additional_headers=headers):
            pass
    return info.value


def test_handshake_refusals(recognizer: Recognizer) -> None:
    with FakeCartesia(recognizer) as fake:
        stt = (
            f"{fake.base_url}/stt/websocket?model=ink-whisper&encoding=pcm_s16le&sample_rate=16000"
        )
        cases = {
            "no key": asyncio.run(_refused(fake.tts_url, {"Cartesia-Version": "2026-03-01"})),
            "rejected": asyncio.run(_refused(stt, {**HEADERS, "X-API-Key": "reject"})),
            "no version": asyncio.run(_refused(fake.tts_url, {"X-API-Key": "k"})),
            "encoding": asyncio.run(_refused(stt.replace("pcm_s16le", "opus"), HEADERS)),
        }
    statuses = {name: err.response.status_code for name, err in cases.items()}
    assert statuses == {"no key": 401, "rejected": 401, "no version": 400, "encoding": 400}
    body = json.loads(cases["rejected"].response.body or b"{}")
    assert set(body) == {"error_code", "title", "message", "request_id"}
