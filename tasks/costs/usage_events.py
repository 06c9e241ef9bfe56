"""The ``usage`` event an agent sends the harness (docs/agent-protocol.md), built from
Pipecat's usage metrics: the one place its fields are named, read back by the ``usage`` view
(:mod:`tasks.costs.views`).

Standard library only: the Pipecat bot imports it in its own environment. Token counts are
gross (audio and cached tokens are inside ``input_tokens``). Pipecat reports an LLM's
``prompt_tokens`` net of the prompt cache for Anthropic and gross for OpenAI-compatible
services, but ``total_tokens`` gross for all, so the gross input is ``total - completion``.
"""

from __future__ import annotations

from typing import Any

USAGE_EVENT = "usage"


def llm_usage_event(
    provider: str, model: str | None, tokens: Any, component: str
) -> dict[str, Any]:
    """An ``LLMTokenUsage`` (Pipecat) as a usage event of ``component`` (llm / realtime)."""
    completion = int(getattr(tokens, "completion_tokens", 0) or 0)
    total = getattr(tokens, "total_tokens", None)
    gross_in = int(total) - completion if total else int(getattr(tokens, "prompt_tokens", 0) or 0)
    cached = getattr(tokens, "cache_read_input_tokens", None)
    cached_audio = getattr(tokens, "cache_read_input_audio_tokens", None)
    return {
        "event": USAGE_EVENT,
        "component": component,
        "provider": provider,
        "model": model,
        "input_tokens": gross_in,
        "output_tokens": completion,
        "total_tokens": gross_in + completion,
        "input_audio_tokens": getattr(tokens, "input_audio_tokens", None),
        "output_audio_tokens": getattr(tokens, "output_audio_tokens", None),
        "cached_input_tokens": (cached - (cached_audio or 0)) if cached else None,
        "cached_input_audio_tokens": cached_audio,
    }


def stt_usage_event(provider: str, model: str | None, seconds: float) -> dict[str, Any]:
    """Seconds of audio sent to a speech-to-text service (streaming STT bills every second
    it receives, silence included)."""
    return {
        "event": USAGE_EVENT,
        "component": "stt",
        "provider": provider,
        "model": model,
        "stt_seconds": round(seconds, 3),
    }


def tts_usage_event(provider: str, model: str | None, characters: int) -> dict[str, Any]:
    """Characters sent to a text-to-speech service."""
    return {
        "event": USAGE_EVENT,
        "component": "tts",
        "provider": provider,
        "model": model,
        "tts_characters": int(characters),
    }
