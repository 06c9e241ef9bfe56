"""The Audio API half of :mod:`tasks.systems.standins.openai_http`: WAV in, transcription
answers in the requested ``response_format``, speech out as the requested container.

Shapes follow the API reference (https://platform.openai.com/docs/api-reference/audio) and
the SDK types (``openai.types.audio``: ``Transcription`` with ``usage`` ``{type: duration,
seconds}``, ``TranscriptionVerbose`` and ``TranscriptionSegment``; speech ``pcm`` is 24 kHz
16-bit mono little-endian without a header; ``stream_format: "sse"`` sends
``speech.audio.delta`` / ``speech.audio.done`` events).
"""

from __future__ import annotations

import base64
import io
import math
import wave
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
from starlette.responses import JSONResponse, PlainTextResponse, Response

from perturbations.audio import Clip, VoiceSpec
from tasks.systems.standins.audio import AGENT_VOICE, text_tokens
from tasks.systems.standins.httpserver import sse

SPEECH_RATE = 24000  # the Audio API's pcm output: 24 kHz, 16-bit, mono
SPEECH_FORMATS = {"pcm": "audio/pcm", "wav": "audio/wav"}
SPEECH_CHUNK_BYTES = 4800  # 100 ms of 24 kHz 16-bit audio per chunk sent


def decode_wav(data: bytes) -> Clip:
    """A 16-bit PCM WAV (any rate, channels mixed down) as a clip."""
    with wave.open(io.BytesIO(data)) as wav:
        if wav.getsampwidth() != 2:
            raise ValueError(f"{8 * wav.getsampwidth()}-bit WAV; 16-bit PCM expected")
        rate, channels = wav.getframerate(), wav.getnchannels()
        samples = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2")
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1).astype(np.int16)
    return Clip.from_int16(samples, rate)


def wav_bytes(pcm: bytes, rate: int) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(pcm)
    return out.getvalue()


def _timestamp(seconds: float, sep: str) -> str:
    ms = round(seconds * 1000)
    return (
        f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}{sep}{ms % 1000:03d}"
    )


def transcription_response(text: str, duration: float, form: dict[str, Any]) -> Response:
    fmt = str(form.get("response_format") or "json")
    usage = {"type": "duration", "seconds": round(duration, 3)}
    if fmt == "text":
        return PlainTextResponse(text)
    if fmt in ("srt", "vtt"):
        sep = "," if fmt == "srt" else "."
        span = f"{_timestamp(0, sep)} --> {_timestamp(duration, sep)}"
        cue = f"1\n{span}\n{text}\n" if fmt == "srt" else f"WEBVTT\n\n{span}\n{text}\n"
        return PlainTextResponse(cue)
    if fmt == "verbose_json":
        segment: dict[str, Any] = {
            "id": 0,
            "seek": 0,
            "start": 0.0,
            "end": round(duration, 3),
            "text": text,
        }
        segment |= {"tokens": [], "temperature": float(form.get("temperature") or 0.0)}
        language = str(form.get("language") or "en")
        body: dict[str, Any] = {
            "task": "transcribe",
            "language": "english" if language == "en" else language,
        }
        body |= {"duration": round(duration, 3), "text": text, "segments": [segment]}
        return JSONResponse(body | {"usage": usage})
    return JSONResponse({"text": text, "usage": usage})


def speech_voice(speed: float) -> VoiceSpec:
    rate = round(AGENT_VOICE.rate_wpm * speed)
    return AGENT_VOICE.model_copy(update={"rate_wpm": min(450, max(80, rate))})


def byte_chunks(data: bytes, size: int = SPEECH_CHUNK_BYTES) -> Iterable[bytes]:
    return (data[i : i + size] for i in range(0, len(data), size))


def speech_events(pcm: bytes, text: str) -> Iterator[str]:
    for chunk in byte_chunks(pcm):
        audio = base64.b64encode(chunk).decode()
        yield sse({"type": "speech.audio.delta", "audio": audio})
    out = math.ceil(len(pcm) / 2 / SPEECH_RATE * 20)  # ~20 audio tokens a second (pricing)
    usage = {"input_tokens": text_tokens(text), "output_tokens": out}
    usage["total_tokens"] = usage["input_tokens"] + out
    yield sse({"type": "speech.audio.done", "usage": usage})
