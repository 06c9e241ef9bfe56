"""The reference's judge models on the providers' local stand-ins, through LiteLLM's base-URL
settings: GPT-5.2 (and its medium-reasoning name) on the OpenAI stand-in, Claude Opus 4.6 on
the Anthropic Messages stand-in, Gemini 3 Flash on the Gemini API stand-in. Keys are
placeholders in the providers' own variables (LiteLLM reads them when an entry names no
key); the fault keys of ``tasks.systems.standins.httpserver`` (``ratelimit``, ...) make
a stand-in answer as a failing provider does."""

from __future__ import annotations

import io
import wave
from typing import Any

import pytest

from perturbations.audio import Clip, VoiceSpec
from tasks.judges.models import AUDIO_MODEL, BEHAVIOR_MODEL, FAITHFULNESS_MODEL, TEXT_MODEL
from tasks.voice.telephony import resample
from tasks.voice.tts import synthesize

KEYS = {"OPENAI_API_KEY": "sk-placeholder", "ANTHROPIC_API_KEY": "sk-ant-placeholder",
        "GEMINI_API_KEY": "gemini-placeholder"}  # fmt: skip
CALLER = VoiceSpec(voice="en-us+klatt3", pitch=50)


@pytest.fixture
def placeholder_keys(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    return dict(KEYS)


def model_list(
    openai: str | None = None, anthropic: str | None = None, gemini: str | None = None
) -> list[dict[str, Any]]:
    """The reference's four judge names, each on the stand-in given (base URLs as the
    stand-ins print them: OpenAI's with /v1, Anthropic's bare, Gemini's bare)."""
    entries: list[dict[str, Any]] = []
    if openai:
        for name, extra in ((TEXT_MODEL, {}), (BEHAVIOR_MODEL, {"reasoning_effort": "medium"})):
            params = {"model": "openai/gpt-5.2", "api_base": openai, **extra}
            entries.append({"model_name": name, "litellm_params": params})
    if anthropic:
        params = {"model": "anthropic/claude-opus-4-6", "api_base": anthropic}
        entries.append({"model_name": FAITHFULNESS_MODEL, "litellm_params": params})
    if gemini:
        # LiteLLM appends /models/{model}:generateContent to a Gemini api_base.
        params = {"model": "gemini/gemini-3-flash-preview", "api_base": f"{gemini}/v1beta"}
        entries.append({"model_name": AUDIO_MODEL, "litellm_params": params})
    return entries


def speech(text: str, rate: int = 16000) -> Clip:
    return resample(synthesize(text, CALLER), rate)


def wav_of(*pieces: Clip | float, rate: int = 16000) -> bytes:
    """16-bit mono WAV of speech clips and silences (a float is seconds of digital silence)."""
    clips = [Clip.silence(p, rate) if isinstance(p, float) else p for p in pieces]
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(Clip.concat(*clips).to_int16().astype("<i2").tobytes())
    return out.getvalue()
