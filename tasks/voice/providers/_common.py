"""What the hosted TTS engines share: key and URL from the environment, the voice string,
the speaking rate as a speed factor, the provider's own message out of an error body, the
:class:`TtsError` text naming engine, status and that message, and PCM16 bytes to a
``Clip``. The requests themselves are LiteLLM's (:mod:`tasks.voice.providers._litellm`) or
an official SDK's (Cartesia); no engine sends its own HTTP."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from perturbations.audio import Clip, VoiceSpec
from tasks.voice.tts import TtsError

TIMEOUT_S = 30.0
# Tries of one utterance: a hosted voice briefly busy (429, 5xx, a dropped connection) should
# not end a call the agent was handling well; a bad key or voice fails at once.
ATTEMPTS = 3
# The persona's default speaking rate (tasks.simulate.voices): speed 1.0 at the providers.
BASE_WPM = 165
# eSpeak names ("en", "en-us", "en-gb-scotland+klatt3"): a language code, optional dashed
# region/dialect parts, an optional +variant. Provider voice names and ids never look so.
_ESPEAK_NAME = re.compile(r"^[a-z]{2,3}(-[a-z0-9]+)*(\+[a-z0-9_-]+)?$")
_HIGH_PITCH = 60  # persona voices at or above this pitch get the engine's higher voice
# eSpeak's female variants and the women's persona voice (tasks.simulate.voices), and the
# male ones and the men's persona voice.
_HIGH_VARIANTS = frozenset({"f1", "f2", "f3", "f4", "f5", "klatt5"})
_LOW_VARIANTS = frozenset({"m1", "m2", "m3", "m4", "m5", "m6", "m7", "klatt3"})


@dataclass(frozen=True)
class Provider:
    """One hosted engine: its registry name, key and base-URL variables, defaults."""

    engine: str
    key_env: str
    url_env: str
    default_url: str
    default_model: str
    high_voice: str
    low_voice: str
    litellm_provider: str | None = None  # LiteLLM's name, when LiteLLM speaks its API

    def api_key(self) -> str:
        key = os.environ.get(self.key_env, "").strip()
        if not key:
            raise TtsError(f"the {self.engine!r} TTS engine needs an API key: set {self.key_env}")
        return key

    def base_url(self) -> str:
        return (os.environ.get(self.url_env) or self.default_url).rstrip("/")

    def model_and_voice(self, voice: VoiceSpec) -> tuple[str, str]:
        """``"MODEL:VOICE"`` or ``"VOICE"``; an eSpeak name picks the default voice."""
        model, sep, name = voice.voice.partition(":")
        if not sep:
            model, name = self.default_model, voice.voice
        if not name or _ESPEAK_NAME.match(name):
            name = self.high_voice if _sounds_high(name, voice.pitch) else self.low_voice
        return model or self.default_model, name


def _sounds_high(espeak_name: str, pitch: int) -> bool:
    """Whether an eSpeak persona voice is a higher (women's) one: by its variant when that
    says so, since a retake (tasks.simulate.voices.retake_voice) moves the pitch by up to 12
    and must not swap the voice; by pitch otherwise."""
    variant = espeak_name.partition("+")[2]
    if variant in _HIGH_VARIANTS:
        return True
    if variant in _LOW_VARIANTS:
        return False
    return pitch >= _HIGH_PITCH


def speed_factor(voice: VoiceSpec, low: float, high: float) -> float:
    """The persona's words per minute as a provider speed factor, clamped to its range."""
    return round(min(high, max(low, voice.rate_wpm / BASE_WPM)), 3)


def error_message(body: bytes) -> str:
    """The provider's own message from an error body (OpenAI ``error.message``, ElevenLabs
    ``detail.message`` or ``detail[0].msg``, Cartesia ``error``/``message``), else its text."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data: Any = json.loads(text)
    except ValueError:
        return text[:300] or "(empty body)"
    for key in ("error", "detail", "message"):
        value = data.get(key) if isinstance(data, dict) else None
        if isinstance(value, list) and value:
            value = value[0]
        if isinstance(value, dict):
            value = value.get("message") or value.get("msg") or json.dumps(value)
        if isinstance(value, str) and value:
            return value
    return text[:300]


def scrubbed(text: str, secret: str | None) -> str:
    """``text`` on one line, shortened, with the key replaced (error texts are stored)."""
    text = " ".join(text.split())
    return (text.replace(secret, "***") if secret and len(secret) >= 4 else text)[:400]


def status_failure(engine: str, url: str, status: int, message: str, attempts: int) -> TtsError:
    """The error of a request the provider answered with ``status`` (>= 400)."""
    tried = f" (after {attempts} attempts)" if attempts > 1 else ""
    return TtsError(f"{engine} TTS: HTTP {status} from {url}{tried}: {message}")


def transport_failure(engine: str, url: str, exc: BaseException) -> TtsError:
    """The error of a request that got no answer (refused, reset, timed out)."""
    return TtsError(f"{engine} TTS: request to {url} failed: {type(exc).__name__}: {exc}")


def pcm16_clip(engine: str, data: bytes, rate: int, text: str) -> Clip:
    """Little-endian 16-bit mono PCM as a ``Clip``; empty or odd-length audio is an error."""
    if len(data) < 2 or len(data) % 2:
        raise TtsError(
            f"{engine} TTS returned {len(data)} bytes, not 16-bit PCM, for {text[:60]!r}"
        )
    return Clip.from_int16(np.frombuffer(data, dtype="<i2").astype(np.int16), rate)
