"""Cartesia text to speech (``POST {CARTESIA_BASE_URL}/tts/bytes``) through the official
``cartesia`` SDK (optional extra ``evaflow[cartesia]``).

LiteLLM has no Cartesia speech provider, so the provider's own client sends the request:
``client.tts.generate`` with ``model_id``, ``transcript``, ``voice: {mode: "id", id}`` and
``output_format: {container: "raw", encoding: "pcm_s16le", sample_rate: 24000}``; the SDK
adds its API version header and ``Authorization: Bearer $CARTESIA_API_KEY``, and retries
rate limits, 5xx and dropped connections (``max_retries``). The response is the raw
samples. Base URL default ``https://api.cartesia.ai``. ``VoiceSpec.voice``: a voice id
(UUID) or ``"MODEL:VOICE_ID"``.

Speaking rate is not mapped: the API's rate controls (``speed``, an experimental enum, and
``generation_config.speed``, Sonic-3 only) have no words-per-minute meaning, so the caller
speaks at the voice's own pace (personas' rates do not apply).
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

from perturbations.audio import Clip, VoiceSpec
from tasks.voice.providers._common import (
    ATTEMPTS,
    TIMEOUT_S,
    Provider,
    error_message,
    pcm16_clip,
    scrubbed,
    status_failure,
    transport_failure,
)
from tasks.voice.tts import TTS_ENGINES, TTS_WARMERS, TtsError

CARTESIA_PCM_RATE = 24000
# One published example voice serves both pitches (Cartesia's docs show no female default).
_DEFAULT_VOICE = "694f9389-aac1-45b6-b726-9d9369183238"
CARTESIA = Provider(
    engine="cartesia",
    key_env="CARTESIA_API_KEY",
    url_env="CARTESIA_BASE_URL",
    default_url="https://api.cartesia.ai",
    default_model="sonic-2",
    high_voice=_DEFAULT_VOICE,
    low_voice=_DEFAULT_VOICE,
)


def generate_request(text: str, voice: VoiceSpec) -> dict[str, object]:
    """The keyword arguments of ``client.tts.generate``."""
    model, voice_id = CARTESIA.model_and_voice(voice)
    return {
        "model_id": model,
        "transcript": text,
        "voice": {"mode": "id", "id": voice_id},
        "output_format": {
            "container": "raw",
            "encoding": "pcm_s16le",
            "sample_rate": CARTESIA_PCM_RATE,
        },
        "language": "en",
    }


@functools.lru_cache(maxsize=8)
def client(api_key: str, base_url: str) -> Any:
    """One SDK client (one connection pool) per key and base URL."""
    try:
        import cartesia
    except ImportError as exc:
        raise TtsError(
            "the 'cartesia' engine needs the official SDK: pip install 'evaflow[cartesia]'"
        ) from exc
    return cartesia.Cartesia(
        api_key=api_key, base_url=base_url, max_retries=ATTEMPTS - 1, timeout=TIMEOUT_S
    )


@TTS_ENGINES.register("cartesia")
def cartesia_tts(text: str, voice: VoiceSpec) -> Clip:
    key, url = CARTESIA.api_key(), CARTESIA.base_url()
    sdk = client(key, url)
    import cartesia

    try:
        data = sdk.tts.generate(**generate_request(text, voice)).read()
    except cartesia.APIStatusError as exc:
        message = scrubbed(error_message(exc.response.content), key)
        # A status the SDK retries (429, 5xx) reached us only after every attempt.
        tried = ATTEMPTS if exc.status_code == 429 or exc.status_code >= 500 else 1
        raise status_failure("cartesia", url, exc.status_code, message, tried) from exc
    except cartesia.APIConnectionError as exc:
        raise TtsError(scrubbed(str(transport_failure("cartesia", url, exc)), key)) from exc
    return pcm16_clip("cartesia", bytes(data), CARTESIA_PCM_RATE, text)


def _warm(voice: VoiceSpec) -> None:
    """Import the SDK and build the client before the call (sends nothing)."""
    with contextlib.suppress(TtsError):  # no key or no SDK: the first turn says so
        client(CARTESIA.api_key(), CARTESIA.base_url())


TTS_WARMERS["cartesia"] = _warm
