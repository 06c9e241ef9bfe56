"""What the hosted TTS engines share: key and URL from the environment, the voice string,
one POST that returns audio bytes or a :class:`TtsError` naming engine, status and the
provider's own message, and PCM16 bytes to a ``Clip``."""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from perturbations.audio import Clip, VoiceSpec
from tasks.voice.tts import TtsError

TIMEOUT_S = 30.0
ATTEMPTS = 3
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
BACKOFF_S = 0.5
MAX_WAIT_S = 8.0
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


def retry_wait_s(headers: Any, attempt: int) -> float:
    """Seconds before retry ``attempt`` (1-based): the server's ``Retry-After`` when it sends
    seconds, else exponential backoff; capped so a call never stalls on one turn."""
    value = headers.get("retry-after")
    try:
        wait = float(value) if value is not None else BACKOFF_S * 2 ** (attempt - 1)
    except ValueError:  # an HTTP date: not worth parsing for a capped wait
        wait = BACKOFF_S * 2 ** (attempt - 1)
    return min(max(wait, 0.0), MAX_WAIT_S)


def post_audio(
    engine: str,
    url: str,
    *,
    headers: dict[str, str],
    body: dict[str, Any],
    params: dict[str, str] | None = None,
) -> bytes:
    """POST ``body`` as JSON; the response's audio bytes, or a TtsError.

    Rate limits and transient server errors (``RETRY_STATUSES``) are retried up to
    ``ATTEMPTS`` times, because a hosted voice that is briefly busy should not end a call
    the agent was handling well; anything else (a bad key, a bad voice) fails at once."""
    import httpx  # here, not at import: the registry imports this module on first lookup

    for attempt in range(1, ATTEMPTS + 1):
        try:
            response = httpx.post(url, headers=headers, json=body, params=params, timeout=TIMEOUT_S)
        except httpx.HTTPError as exc:
            raise TtsError(
                f"{engine} TTS: request to {url} failed: {type(exc).__name__}: {exc}"
            ) from exc
        if response.status_code not in RETRY_STATUSES or attempt == ATTEMPTS:
            break
        time.sleep(retry_wait_s(response.headers, attempt))
    if response.status_code >= 400:
        tried = f" (after {ATTEMPTS} attempts)" if response.status_code in RETRY_STATUSES else ""
        raise TtsError(
            f"{engine} TTS: HTTP {response.status_code} from {url}{tried}: "
            f"{error_message(response.content)}"
        )
    return response.content


def pcm16_clip(engine: str, data: bytes, rate: int, text: str) -> Clip:
    """Little-endian 16-bit mono PCM as a ``Clip``; empty or odd-length audio is an error."""
    if len(data) < 2 or len(data) % 2:
        raise TtsError(
            f"{engine} TTS returned {len(data)} bytes, not 16-bit PCM, for {text[:60]!r}"
        )
    return Clip.from_int16(np.frombuffer(data, dtype="<i2").astype(np.int16), rate)
