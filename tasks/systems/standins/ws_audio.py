"""What the streaming STT/TTS stand-ins (Deepgram, Cartesia) share beyond :mod:`.audio`.

- :func:`http_error`: a plain HTTP answer to the upgrade request, for a
  ``process_request`` gate given to :class:`.audio.ServerThread` (a provider's 401 for a
  rejected key, 400 for a bad query), as the real services refuse a WebSocket upgrade
  before it opens.
- :class:`StreamEars`: :class:`.audio.Ears` that can also be told "the turn ends now"
  (Deepgram ``Finalize``, Cartesia ``finalize``): the speech heard since the VAD's last
  start, cut at the current stream position.
- PCM codecs for the raw encodings these APIs name (signed 16-bit little-endian,
  32-bit float, G.711 mu-law) at any sample rate, and :func:`word_times`: word
  timestamps for text spoken in a clip.

A key equal to :data:`REJECTED_KEY` is refused with the provider's own 401, so fault
tests can inject a rejected key without a side channel.
"""

from __future__ import annotations

import json
import re
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlparse

import numpy as np

from perturbations.audio import Clip
from tasks.systems.standins.audio import Ears, speak
from tasks.voice.telephony import resample, ulaw_decode, ulaw_encode

REJECTED_KEY = "reject"
# Encodings by their wire shape; each provider maps its own names onto these.
PCM16, FLOAT32, MULAW = "s16le", "f32le", "mulaw"


def query(path: str) -> dict[str, str]:
    """A request path's query parameters (the last value of a repeated one)."""
    return {k: v[-1] for k, v in parse_qs(urlparse(path).query).items()}


def http_error(
    connection: Any, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> Any:
    """A JSON HTTP answer to a WebSocket upgrade request (the handshake is refused)."""
    response = connection.respond(HTTPStatus(status), json.dumps(body) + "\n")
    response.headers["Content-Type"] = "application/json"
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


class StreamEars(Ears):
    """Ears that also end a turn on the client's word (a finalize command)."""

    def finalize(self) -> tuple[float, Clip] | None:
        """The speech since the VAD's open ``speech_start``, up to now, with its start
        time in the stream (s); None when no turn is open. The VAD starts afresh."""
        if self.start_s is None or self.rate is None:
            return None
        start_s = self.offset_s + self.start_s
        clip = self._cut(self.start_s, self.received_s - self.offset_s)
        self.reset()
        return None if clip is None else (start_s, clip)


def decode_pcm(payload: bytes, encoding: str, rate: int) -> Clip:
    """Raw audio bytes of ``encoding`` (:data:`PCM16` / :data:`FLOAT32` / :data:`MULAW`)."""
    if encoding == MULAW:
        return Clip.from_int16(ulaw_decode(payload), rate)
    if encoding == FLOAT32:
        usable = len(payload) - len(payload) % 4
        return Clip.from_float(np.frombuffer(payload[:usable], dtype="<f4"), rate, clip=True)
    usable = len(payload) - len(payload) % 2
    return Clip.from_int16(np.frombuffer(payload[:usable], dtype="<i2"), rate)


def encode_pcm(clip: Clip, encoding: str, rate: int) -> bytes:
    """``clip`` resampled to ``rate`` as raw bytes of ``encoding``."""
    at_rate = resample(clip, rate)
    if encoding == MULAW:
        return ulaw_encode(at_rate.to_int16()).tobytes()
    if encoding == FLOAT32:
        return at_rate.samples.astype("<f4").tobytes()
    return at_rate.to_int16().astype("<i2").tobytes()


def byte_chunks(data: bytes, rate: int, encoding: str, seconds: float) -> list[bytes]:
    """``data`` cut into pieces of ``seconds`` of audio, on sample boundaries."""
    width = 4 if encoding == FLOAT32 else 1 if encoding == MULAW else 2
    step = max(width, int(rate * seconds) * width)
    return [data[i : i + step] for i in range(0, len(data), step)]


def _speech_span(clip: Clip) -> tuple[float, float]:
    """First and last sample louder than -40 dBFS (eSpeak pads its speech with silence)."""
    loud = np.flatnonzero(np.abs(clip.samples) > 0.01)
    if loud.size == 0:
        return 0.0, clip.duration_s
    return float(loud[0] / clip.rate), float((loud[-1] + 1) / clip.rate)


def word_times(text: str, clip: Clip, offset_s: float = 0.0) -> list[tuple[str, float, float]]:
    """``(word, start_s, end_s)`` for each whitespace-separated word of ``text`` spoken in
    ``clip``: the speech span shared out by word length (eSpeak reports no word times, so
    these are estimates; they are monotonic and cover the audible speech)."""
    words = text.split()
    if not words:
        return []
    lo, hi = _speech_span(clip)
    weights = [len(re.sub(r"\W", "", w)) + 1 for w in words]
    scale = (hi - lo) / sum(weights)
    out: list[tuple[str, float, float]] = []
    at = lo
    for word, weight in zip(words, weights, strict=True):
        end = at + weight * scale
        out.append((word, round(offset_s + at, 3), round(offset_s + end, 3)))
        at = end
    return out


async def spoken(text: str) -> Clip | None:
    """The agent voice's eSpeak speech of ``text`` (None for text with nothing to say)."""
    if not re.search(r"\w", text):
        return None
    return await speak(text)
