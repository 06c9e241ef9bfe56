"""ElevenLabs text to speech: ``POST {ELEVENLABS_BASE_URL}/v1/text-to-speech/{voice_id}``.

As the API reference and the ``elevenlabs`` SDK send it: header ``xi-api-key``, query
``output_format=pcm_16000`` (raw 16 kHz 16-bit mono little-endian samples), JSON body
``text``, ``model_id`` and ``voice_settings.speed`` (1.0 = normal; clamped to 0.7-1.2, the
range ElevenLabs documents for its models). Base URL default ``https://api.elevenlabs.io``.
``VoiceSpec.voice``: a voice id (``"JBFqnCBsd6RMkjVDRZzb"``) or ``"MODEL:VOICE_ID"``.
"""

from __future__ import annotations

from perturbations.audio import Clip, VoiceSpec
from tasks.voice.providers._http import Provider, pcm16_clip, post_audio, speed_factor
from tasks.voice.tts import TTS_ENGINES

ELEVENLABS_PCM_RATE = 16000
ELEVENLABS = Provider(
    engine="elevenlabs",
    key_env="ELEVENLABS_API_KEY",
    url_env="ELEVENLABS_BASE_URL",
    default_url="https://api.elevenlabs.io",
    default_model="eleven_flash_v2_5",
    high_voice="21m00Tcm4TlvDq8ikWAM",  # "Rachel", a premade voice every account has
    low_voice="JBFqnCBsd6RMkjVDRZzb",  # "George"
)


def convert_request(text: str, voice: VoiceSpec) -> tuple[str, dict[str, object]]:
    """``(voice_id, body)`` of a convert request."""
    model, voice_id = ELEVENLABS.model_and_voice(voice)
    body: dict[str, object] = {
        "text": text,
        "model_id": model,
        "voice_settings": {"speed": speed_factor(voice, 0.7, 1.2)},
    }
    return voice_id, body


@TTS_ENGINES.register("elevenlabs")
def elevenlabs_tts(text: str, voice: VoiceSpec) -> Clip:
    voice_id, body = convert_request(text, voice)
    data = post_audio(
        "elevenlabs",
        f"{ELEVENLABS.base_url()}/v1/text-to-speech/{voice_id}",
        headers={"xi-api-key": ELEVENLABS.api_key()},
        body=body,
        params={"output_format": f"pcm_{ELEVENLABS_PCM_RATE}"},
    )
    return pcm16_clip("elevenlabs", data, ELEVENLABS_PCM_RATE, text)
