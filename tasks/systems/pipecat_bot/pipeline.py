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
from tasks.systems.providers import key_env

# role -> provider -> (module, class): Pipecat's own services.
_CLASSES: dict[str, dict[str, tuple[str, str]]] = {
    "stt": {
        "deepgram": ("pipecat.services.deepgram.stt", "DeepgramSTTService"),
        "elevenlabs": ("pipecat.services.elevenlabs.stt", "ElevenLabsRealtimeSTTService"),
        "cartesia": ("pipecat.services.cartesia.stt", "CartesiaSTTService"),
        "assemblyai": ("pipecat.services.assemblyai.stt", "AssemblyAISTTService"),
        "openai": ("pipecat.services.openai.stt", "OpenAISTTService"),
    },
    "llm": {
        "openai": ("pipecat.services.openai.llm", "OpenAILLMService"),
        "anthropic": ("pipecat.services.anthropic.llm", "AnthropicLLMService"),
        "google": ("pipecat.services.google.llm", "GoogleLLMService"),
    },
    "tts": {
        "cartesia": ("pipecat.services.cartesia.tts", "CartesiaTTSService"),
        "deepgram": ("pipecat.services.deepgram.tts", "DeepgramTTSService"),
        "elevenlabs": ("pipecat.services.elevenlabs.tts", "ElevenLabsTTSService"),
        "openai": ("pipecat.services.openai.tts", "OpenAITTSService"),
        "google": ("pipecat.services.google.tts", "GeminiTTSService"),
    },
}
# role -> provider -> (module, class, API key variable); the key variables come from the
# one provider table (tasks.systems.providers), which preflight checks from too.
SERVICES: dict[str, dict[str, tuple[str, str, str | None]]] = {
    role: {name: (*where, key_env(role, name)) for name, where in by_name.items()}
    for role, by_name in _CLASSES.items()
}
OFFLINE = {"stt": "evaflow-pocketsphinx", "tts": "evaflow-espeak"}
# Self-hosted OpenAI-compatible endpoints (vLLM, the fake chat model) need no real key.
PLACEHOLDER_KEY = "not-needed"
GEMINI_TTS_RATE = 24000


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
        roles = ("llm", "tts") if is_audio_llm(system) else ("stt", "llm", "tts")
        missing = [r for r in roles if r not in system.components]
        if missing:
            raise ProviderError(f"{system.architecture} system lacks components {missing}")


def is_audio_llm(system: SystemParams) -> bool:
    """A hybrid whose LLM hears the caller (``llm`` + ``tts``, no ``stt``): the reference's
    ``audio_llm`` pipeline, built by :mod:`tasks.systems.pipecat_bot.audio_llm`."""
    roles = set(system.components)
    return system.architecture == "hybrid" and {"llm", "tts"} <= roles and "stt" not in roles


OPENAI_TTS_RATE = 24000


def google_options(role: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Pipecat's Google services take the google-genai client's ``http_options``, not a
    ``base_url``: a google component's ``base_url`` param becomes ``HttpOptions(base_url=)``
    (the client then calls ``{base_url}/v1beta/models/{model}:...``). Gemini TTS answers
    24 kHz PCM whatever is asked, and the service labels its audio with its own
    ``sample_rate`` (else the pipeline's), so that rate is its default here."""
    out = dict(kwargs)
    if "base_url" in out:
        from google.genai.types import HttpOptions

        out["http_options"] = HttpOptions(base_url=str(out.pop("base_url")))
    if role == "tts":
        out.setdefault("sample_rate", GEMINI_TTS_RATE)
    return out


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
    if component.provider == "google":
        kwargs = google_options(role, kwargs)
    elif component.provider == "openai" and role == "tts":
        kwargs = openai_tts_options(kwargs)
    return cls(**kwargs)


def openai_tts_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The Audio API's ``pcm`` is 24 kHz; Pipecat's OpenAI TTS labels its audio with its own
    ``sample_rate`` (else the pipeline's 16 kHz, which plays it 1.5x slow), so 24 kHz is
    its default here. Pipecat 1.14's ``run_tts`` also refuses any voice outside OpenAI's
    own names before sending a request, which leaves a self-hosted OpenAI-compatible
    server (Kokoro ``af_heart``, Voxtral ``casual_female``) mute: for a component with its
    own ``base_url`` the configured voice joins that table, sent as configured."""
    out = dict(kwargs)
    out.setdefault("sample_rate", OPENAI_TTS_RATE)
    voice = getattr(out.get("settings"), "voice", None) or out.get("voice")
    if voice and "base_url" in out:
        from pipecat.services.openai import tts

        tts.VALID_VOICES.setdefault(voice, voice)
    return out


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
