"""Cartesia text to speech: ``POST {CARTESIA_BASE_URL}/tts/bytes``.

As the API reference (version ``2024-11-13``) defines it: headers ``X-API-Key`` and
``Cartesia-Version``, JSON body ``model_id``, ``transcript``, ``voice: {mode: "id", id}``,
``output_format: {container: "raw", encoding: "pcm_s16le", sample_rate: 24000}``; the
response is the raw samples. Base URL default ``https://api.cartesia.ai``.
``VoiceSpec.voice``: a voice id (UUID) or ``"MODEL:VOICE_ID"``.

Speaking rate is not mapped: this API version's only rate controls are the deprecated
``speed`` enum and ``voice.__experimental_controls``, neither with a words-per-minute
meaning, so the caller speaks at the voice's own pace (personas' rates do not apply).
"""

from __future__ import annotations

from perturbations.audio import Clip, VoiceSpec
from tasks.voice.providers._http import Provider, pcm16_clip, post_audio
from tasks.voice.tts import TTS_ENGINES

CARTESIA_VERSION = "2024-11-13"
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


def bytes_request(text: str, voice: VoiceSpec) -> dict[str, object]:
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


@TTS_ENGINES.register("cartesia")
def cartesia_tts(text: str, voice: VoiceSpec) -> Clip:
    headers = {"X-API-Key": CARTESIA.api_key(), "Cartesia-Version": CARTESIA_VERSION}
    url = f"{CARTESIA.base_url()}/tts/bytes"
    data = post_audio("cartesia", url, headers=headers, body=bytes_request(text, voice))
    return pcm16_clip("cartesia", data, CARTESIA_PCM_RATE, text)
