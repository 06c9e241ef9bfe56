"""``--check``: build every component's Pipecat service with the system's parameters, no call.

What a call would construct first is constructed here: the cascade's services through
:func:`tasks.systems.pipecat_bot.pipeline.service` (offline engines: their parameters
validated, the recogniser's language model is built per domain at the first call), a
``realtime`` component through :func:`tasks.systems.pipecat_bot.realtime.build_realtime`.
Pipecat's services pass unknown keyword arguments down to ``BaseObject``, which drops them
silently, so a misspelt parameter would be ignored, not refused: every parameter must be a
field of the service's ``Settings`` or a named argument of a constructor in its class
hierarchy. Constructing a service opens no connection (Pipecat connects in ``start``).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from pathlib import Path
from typing import Any

from tasks.systems.pipecat_bot.components import Component
from tasks.systems.pipecat_bot.pipeline import OFFLINE, SERVICES, realtime_builder, service
from tasks.systems.providers import component_label

# realtime provider -> (module, class, params its builder consumes itself)
REALTIME = {
    "openai-realtime": (
        "pipecat.services.openai.realtime.llm",
        "OpenAIRealtimeLLMService",
        {"base_url"},
    ),
    "gemini-live": (
        "pipecat.services.google.gemini_live.llm",
        "GeminiLiveLLMService",
        {"base_url", "ca_file"},
    ),
    "ultravox": ("pipecat.services.ultravox.llm", "OneShotInputParams", {"base_url"}),
}
# Params the cascade's builder turns into others (pipeline.google_options: base_url ->
# the google-genai client's HttpOptions).
CONSUMED = {("llm", "google"): {"base_url"}, ("tts", "google"): {"base_url"}}
POCKETSPHINX_PARAMS = {"stt", "seed"}
CHECK_TOOLS_URL = "http://127.0.0.1:9/tools"  # never called: building sends nothing


def accepted(cls: type) -> set[str]:
    """Keyword arguments some constructor in ``cls``'s hierarchy names (pydantic: fields)."""
    fields = getattr(cls, "model_fields", None)
    if isinstance(fields, dict):
        return set(fields)
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            parameters = inspect.signature(init).parameters.values()
        except (TypeError, ValueError):
            continue
        names |= {
            p.name
            for p in parameters
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "self"
        }
    return names


def settings_fields(cls: type) -> set[str]:
    settings = getattr(cls, "Settings", None)
    if settings is not None and dataclasses.is_dataclass(settings):
        return {f.name for f in dataclasses.fields(settings)}
    return set()


def target(role: str, component: Component) -> tuple[type | None, set[str]]:
    """The class a component's params go to, and the params consumed before it."""
    if role == "realtime" and component.provider in REALTIME:
        module, name, consumed = REALTIME[component.provider]
        return getattr(importlib.import_module(module), name), consumed
    if component.provider in SERVICES.get(role, {}):
        module, name, _ = SERVICES[role][component.provider]
        consumed = CONSUMED.get((role, component.provider), set())
        return getattr(importlib.import_module(module), name), consumed
    if component.provider == OFFLINE.get("tts"):
        from tasks.systems.pipecat_bot.offline import EspeakTTSService

        return EspeakTTSService, set()
    return None, set()


def unknown_params(role: str, component: Component) -> list[str]:
    """Parameters nothing would take (Pipecat would drop them without a word)."""
    if component.provider == OFFLINE.get("stt"):
        return sorted(set(component.params) - POCKETSPHINX_PARAMS)
    cls, consumed = target(role, component)
    if cls is None:
        return []
    known = accepted(cls) | settings_fields(cls) | consumed
    return sorted(k for k in component.params if k not in known)


def _pocketsphinx(component: Component) -> str:
    from tasks.voice.stt import SttSpec

    SttSpec.model_validate(component.params.get("stt") or {})
    int(component.params.get("seed", 0))
    return "parameters valid (its language model is built per domain at the first call)"


async def build(role: str, component: Component) -> str:
    """Construct one component's service as a call would; what was built."""
    unknown = unknown_params(role, component)
    if unknown:
        cls, _ = target(role, component)
        name = cls.__name__ if cls is not None else component.provider
        raise ValueError(f"{name} takes no parameter {', '.join(map(repr, unknown))}")
    if component.provider == OFFLINE.get("stt"):
        return _pocketsphinx(component)
    if role == "realtime":
        from tasks.systems.pipecat_bot.tools import BridgeTools

        tools = BridgeTools(CHECK_TOOLS_URL, "check")
        try:
            pipeline, _ = realtime_builder()(component, tools)
        finally:
            await tools.close()
        names = [type(p).__name__ for p in pipeline.processors]
        return f"built {', '.join(n for n in names if n.endswith('Service')) or names}"
    built = service(role, component, None, Path("/nonexistent"), "")
    return f"built {type(built).__name__}"


def _cause(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:400]


async def check_components(components: dict[str, Component]) -> list[dict[str, Any]]:
    """One finding per component: ``{"component", "ok", "detail"}``."""
    found = []
    for role, component in components.items():
        label = component_label(role, component.provider, component.model)
        try:
            found.append({"component": label, "ok": True, "detail": await build(role, component)})
        except Exception as exc:  # noqa: BLE001 - every failure is a finding, named
            found.append({"component": label, "ok": False, "detail": _cause(exc)})
    return found
