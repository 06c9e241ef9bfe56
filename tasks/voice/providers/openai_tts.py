"""OpenAI text to speech: ``POST {OPENAI_BASE_URL}/audio/speech``.

The request is the API reference's ``CreateSpeechRequest``: ``model``, ``input``, ``voice``,
``response_format="pcm"`` (raw 24 kHz 16-bit mono little-endian samples) and ``speed``
(0.25 to 4.0, 1.0 = normal), with ``Authorization: Bearer $OPENAI_API_KEY``. The base URL
includes ``/v1`` as the ``openai`` SDK's does (default ``https://api.openai.com/v1``).
``VoiceSpec.voice``: ``"alloy"`` or ``"tts-1:alloy"``; the persona's rate maps to ``speed``.
"""

from __future__ import annotations

from perturbations.audio import Clip, VoiceSpec
from tasks.voice.providers._http import Provider, pcm16_clip, post_audio, speed_factor
from tasks.voice.tts import TTS_ENGINES

OPENAI_PCM_RATE = 24000
OPENAI = Provider(
    engine="openai",
    key_env="OPENAI_API_KEY",
    url_env="OPENAI_BASE_URL",
    default_url="https://api.openai.com/v1",
    default_model="gpt-4o-mini-tts",
    high_voice="nova",
    low_voice="onyx",
)


def speech_request(text: str, voice: VoiceSpec) -> dict[str, object]:
    model, name = OPENAI.model_and_voice(voice)
    return {
        "model": model,
        "input": text,
        "voice": name,
        "response_format": "pcm",
        "speed": speed_factor(voice, 0.25, 4.0),
    }


@TTS_ENGINES.register("openai")
def openai_tts(text: str, voice: VoiceSpec) -> Clip:
    headers = {"Authorization": f"Bearer {OPENAI.api_key()}"}
    url = f"{OPENAI.base_url()}/audio/speech"
    data = post_audio("openai", url, headers=headers, body=speech_request(text, voice))
    return pcm16_clip("openai", data, OPENAI_PCM_RATE, text)
