"""ElevenLabs text to speech (``POST {ELEVENLABS_BASE_URL}/v1/text-to-speech/{voice_id}``)
through LiteLLM.

LiteLLM (deployment ``elevenlabs/<model_id>``, ``api_base = ELEVENLABS_BASE_URL``, key
``os.environ/ELEVENLABS_API_KEY``) sends what the API reference and the ``elevenlabs`` SDK
send: header ``xi-api-key``, query ``output_format=pcm_16000`` (raw 16 kHz 16-bit mono
little-endian samples; LiteLLM passes an ElevenLabs format name through), JSON body
``text``, ``model_id`` and ``voice_settings.speed`` (LiteLLM's mapping of ``speed``; 1.0 =
normal, clamped here to 0.7-1.2, the range ElevenLabs documents). Base URL default
``https://api.elevenlabs.io``. ``VoiceSpec.voice``: a voice id (``"JBFqnCBsd6RMkjVDRZzb"``)
or ``"MODEL:VOICE_ID"``; LiteLLM maps OpenAI's voice names (``alloy``...) to premade ids.
"""

from __future__ import annotations

from perturbations.audio import Clip, VoiceSpec
from tasks.voice.providers import _litellm
from tasks.voice.providers._common import Provider, pcm16_clip, speed_factor
from tasks.voice.tts import TTS_ENGINES, TTS_WARMERS

ELEVENLABS_PCM_RATE = 16000
ELEVENLABS = Provider(
    engine="elevenlabs",
    key_env="ELEVENLABS_API_KEY",
    url_env="ELEVENLABS_BASE_URL",
    default_url="https://api.elevenlabs.io",
    default_model="eleven_flash_v2_5",
    high_voice="21m00Tcm4TlvDq8ikWAM",  # "Rachel", a premade voice every account has
    low_voice="JBFqnCBsd6RMkjVDRZzb",  # "George"
    litellm_provider="elevenlabs",
)


def speech_params(voice: VoiceSpec) -> dict[str, object]:
    """LiteLLM ``speech`` parameters besides model, input and voice."""
    return {
        "response_format": f"pcm_{ELEVENLABS_PCM_RATE}",
        "speed": speed_factor(voice, 0.7, 1.2),
    }


@TTS_ENGINES.register("elevenlabs")
def elevenlabs_tts(text: str, voice: VoiceSpec) -> Clip:
    model, voice_id = ELEVENLABS.model_and_voice(voice)
    data = _litellm.speech(ELEVENLABS, model, text, voice_id, speech_params(voice))
    return pcm16_clip("elevenlabs", data, ELEVENLABS_PCM_RATE, text)


TTS_WARMERS["elevenlabs"] = lambda voice: _litellm.warm(ELEVENLABS, voice)
