"""One call's Pipecat pipeline, built from the system's components.

``system`` is the ``params`` of the run's ``SystemSpec`` (systems contract): an
``architecture`` and ``components`` by role (``stt``/``llm``/``tts``/``realtime``), each a
``provider``, a ``model`` and provider ``params``. Cascade: transport in -> STT -> user
context aggregator -> LLM -> TTS -> transport out -> assistant aggregator; Pipecat's own
services serve every real provider (API keys from the bot's environment); a ``realtime``
component (speech-to-speech, or hybrid Ultravox) is built by
:func:`tasks.systems.pipecat_bot.realtime.build_realtime`.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tasks.systems.pipecat_bot.components import ROLES, Component, ProviderError, SystemParams

# role -> provider -> (module, class, API key variable). Pipecat's own services.
SERVICES: dict[str, dict[str, tuple[str, str, str | None]]] = {
    "stt": {
        "deepgram": ("pipecat.services.deepgram.stt", "DeepgramSTTService", "DEEPGRAM_API_KEY"),
        "elevenlabs": (
            "pipecat.services.elevenlabs.stt",
            "ElevenLabsRealtimeSTTService",
            "ELEVENLABS_API_KEY",
        ),
        "cartesia": ("pipecat.services.cartesia.stt", "CartesiaSTTService", "CARTESIA_API_KEY"),
        "assemblyai": (
            "pipecat.services.assemblyai.stt",
            "AssemblyAISTTService",
            "ASSEMBLYAI_API_KEY",
        ),
        "openai": ("pipecat.services.openai.stt", "OpenAISTTService", "OPENAI_API_KEY"),
    },
    "llm": {
        "openai": ("pipecat.services.openai.llm", "OpenAILLMService", "OPENAI_API_KEY"),
        "anthropic": ("pipecat.services.anthropic.llm", "AnthropicLLMService", "ANTHROPIC_API_KEY"),
        "google": ("pipecat.services.google.llm", "GoogleLLMService", "GOOGLE_API_KEY"),
    },
    "tts": {
        "cartesia": ("pipecat.services.cartesia.tts", "CartesiaTTSService", "CARTESIA_API_KEY"),
        "deepgram": ("pipecat.services.deepgram.tts", "DeepgramTTSService", "DEEPGRAM_API_KEY"),
        "elevenlabs": (
            "pipecat.services.elevenlabs.tts",
            "ElevenLabsTTSService",
            "ELEVENLABS_API_KEY",
        ),
        "openai": ("pipecat.services.openai.tts", "OpenAITTSService", "OPENAI_API_KEY"),
        "google": ("pipecat.services.google.tts", "GeminiTTSService", "GOOGLE_API_KEY"),
    },
}
OFFLINE = {"stt": "evaflow-pocketsphinx", "tts": "evaflow-espeak"}
# Self-hosted OpenAI-compatible endpoints (vLLM, the fake chat model) need no real key.
PLACEHOLDER_KEY = "not-needed"


def providers(role: str) -> list[str]:
    offline = [OFFLINE[role]] if role in OFFLINE else []
    return sorted([*offline, *SERVICES.get(role, {})])


def check_system(system: SystemParams) -> None:
    """Fail before serving: unknown roles or providers, named with the valid ones."""
    for role, component in system.components.items():
        if role not in ROLES:
            raise ProviderError(f"unknown role {role!r} (roles: {list(ROLES)})")
        if role == "realtime":
            continue  # tasks.systems.pipecat_bot.realtime checks its own providers
        if component.provider not in providers(role):
            raise ProviderError(
                f"unknown {role} provider {component.provider!r}; valid: {providers(role)}"
            )
    if "realtime" not in system.components:
        missing = [r for r in ("stt", "llm", "tts") if r not in system.components]
        if missing:
            raise ProviderError(f"{system.architecture} system lacks components {missing}")


def warm_up(system: SystemParams) -> None:
    """Import every service module and load the offline engines before listening, so the
    first call does not spend its first seconds there."""
    for role, component in system.components.items():
        if role in SERVICES and component.provider in SERVICES[role]:
            importlib.import_module(SERVICES[role][component.provider][0])
    if any(c.provider in OFFLINE.values() for c in system.components.values()):
        from tasks.systems.pipecat_bot import offline

        offline.warm_up()
    importlib.import_module("pipecat.audio.vad.silero")


def pipecat_service(role: str, component: Component) -> Any:
    """Pipecat's service for a real provider; ``model`` and known settings go in its
    ``Settings``, other params are constructor arguments (``base_url``, ...)."""
    module, name, key_env = SERVICES[role][component.provider]
    cls = getattr(importlib.import_module(module), name)
    kwargs: dict[str, Any] = {}
    settings_cls = getattr(cls, "Settings", None)
    fields = (
        {f.name for f in dataclasses.fields(settings_cls)}
        if settings_cls is not None and dataclasses.is_dataclass(settings_cls)
        else set()
    )
    settings = {k: v for k, v in component.params.items() if k in fields}
    kwargs.update({k: v for k, v in component.params.items() if k not in fields})
    if component.model:
        settings["model"] = component.model
    if settings and settings_cls is not None:
        kwargs["settings"] = settings_cls(**settings)
    if key_env:
        key = os.environ.get(key_env) or (PLACEHOLDER_KEY if "base_url" in kwargs else None)
        if key is None:
            raise ProviderError(f"{role} provider {component.provider!r} needs ${key_env}")
        kwargs["api_key"] = key
    return cls(**kwargs)


def offline_service(
    role: str, component: Component, agent: Any, cache_dir: Path, domain: str
) -> Any:
    from tasks.systems.pipecat_bot import offline

    if role == "stt":
        recognizer = offline.agent_side_recognizer(domain, agent, component.params, cache_dir)
        return offline.PocketSphinxSTTService(recognizer)
    return offline.EspeakTTSService(**component.params)


def service(role: str, component: Component, agent: Any, cache_dir: Path, domain: str = "") -> Any:
    if component.provider == OFFLINE.get(role):
        return offline_service(role, component, agent, cache_dir, domain)
    return pipecat_service(role, component)


def realtime_builder() -> Callable[..., Any]:
    """Engineer C's hook: ``build_realtime(component, tools) -> (service, context pair)``."""
    from tasks.systems.pipecat_bot.realtime import build_realtime

    return build_realtime
