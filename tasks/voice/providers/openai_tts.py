"""OpenAI text to speech (``POST {OPENAI_BASE_URL}/audio/speech``) through LiteLLM.

LiteLLM (deployment ``openai/<model>``, ``api_base = OPENAI_BASE_URL``, key
``os.environ/OPENAI_API_KEY``) sends the API reference's ``CreateSpeechRequest``: ``model``,
``input``, ``voice``, ``response_format="pcm"`` (raw 24 kHz 16-bit mono little-endian
samples) and ``speed`` (0.25 to 4.0, 1.0 = normal). The base URL includes ``/v1`` as the
``openai`` SDK's does (default ``https://api.openai.com/v1``).
``VoiceSpec.voice``: ``"alloy"`` or ``"tts-1:alloy"``; the persona's rate maps to ``speed``.
"""

from __future__ import annotations

from perturbations.audio import Clip, VoiceSpec
from tasks.voice.providers import _litellm
from tasks.voice.providers._common import Provider, pcm16_clip, speed_factor
from tasks.voice.tts import TTS_ENGINES, TTS_WARMERS

OPENAI_PCM_RATE = 24000
OPENAI = Provider(
    engine="openai",
    key_env="OPENAI_API_KEY",
    url_env="OPENAI_BASE_URL",
    default_url="https://api.openai.com/v1",
    default_model="gpt-4o-mini-tts",
    high_voice="nova",
    low_voice="onyx",
    litellm_provider="openai",
)


def speech_params(voice: VoiceSpec) -> dict[str, object]:
    """LiteLLM ``speech`` parameters besides model, input and voice."""
    return {"response_format": "pcm", "speed": speed_factor(voice, 0.25, 4.0)}


@TTS_ENGINES.register("openai")
def openai_tts(text: str, voice: VoiceSpec) -> Clip:
    model, name = OPENAI.model_and_voice(voice)
    data = _litellm.speech(OPENAI, model, text, name, speech_params(voice))
    return pcm16_clip("openai", data, OPENAI_PCM_RATE, text)


TTS_WARMERS["openai"] = lambda voice: _litellm.warm(OPENAI, voice)
