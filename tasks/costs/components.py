"""Which paid components a run used, from its stored specs (``runs.specs_json``).

An attempt's cost is only known when every metered component it used reported its usage:
a metered component with no usage row makes that side's cost NULL (named "no usage
reported"), never zero. Offline components (evaflow's own agents, eSpeak, PocketSphinx,
Piper, the scripted caller, offline judges) are not metered and cost zero.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

# In-process agents that call no provider (tasks.systems.spec.AGENT_ARCHITECTURES).
OFFLINE_AGENTS = frozenset({"reference", "text", "never_yield", "echo"})
OFFLINE_PROVIDER_PREFIX = "evaflow-"
# Caller voices served by a provider's API (tasks/voice/providers/).
HOSTED_CALLER_TTS = frozenset({"openai", "elevenlabs", "cartesia"})
DEFAULT_REALTIME_CALLER_MODEL = "gpt-realtime-1.5"  # RealtimeCallerParams.model
COLUMNS = ["run_id", "system", "role", "component", "provider", "model"]


class MeteredComponent(BaseModel):
    """A component that bills by usage. ``system`` None: every system of the run (the
    caller); ``model`` None: any usage reported on that side counts as reported."""

    model_config = ConfigDict(frozen=True)
    run_id: str
    system: str | None
    role: str  # agent | simulator
    component: str
    provider: str
    model: str | None


def agent_components(run_id: str, system: dict[str, Any]) -> list[MeteredComponent]:
    name = str(system.get("name") or "")
    agent = str(system.get("agent") or "reference")
    params = system.get("params") or {}
    if agent in OFFLINE_AGENTS:
        return []
    if agent == "llm":
        return [_agent(run_id, name, "llm", "openai-compatible", llm_model(params))]
    components = params.get("components") or {}
    if not components:
        # An external agent (ws://) that declares nothing: only its own usage events say.
        return [_agent(run_id, name, "agent", "external", None)]
    found = []
    for role, component in sorted(components.items()):
        provider = str((component or {}).get("provider") or "")
        if not provider.startswith(OFFLINE_PROVIDER_PREFIX):
            found.append(_agent(run_id, name, role, provider, (component or {}).get("model")))
    return found


def caller_components(run_id: str, caller: dict[str, Any]) -> list[MeteredComponent]:
    name = str(caller.get("name") or "scripted")
    params = caller.get("params") or {}
    found = []
    if name == "llm":
        found.append(_caller(run_id, "llm", "openai-compatible", llm_model(params)))
    elif name == "openai_realtime":
        model = params.get("model") or DEFAULT_REALTIME_CALLER_MODEL
        found.append(_caller(run_id, "realtime", "openai-realtime", model))
    tts = params.get("tts")
    if tts in HOSTED_CALLER_TTS:
        voice = params.get("voice")
        voice_model = voice.get("voice") if isinstance(voice, dict) else voice
        found.append(_caller(run_id, "tts", str(tts), str(voice_model) if voice_model else tts))
    return found


def llm_model(params: dict[str, Any]) -> Any:
    """The model an ``llm`` agent or caller reports usage under (``tasks.llm_chat``): its
    ``model``, or with a ``model_list`` the provider's model of that ``model_name``."""
    model = params.get("model")
    for entry in params.get("model_list") or []:
        if isinstance(entry, dict) and entry.get("model_name") == model:
            full = str((entry.get("litellm_params") or {}).get("model") or "")
            return full.split("/", 1)[1] if "/" in full else (full or model)
    return model


def run_components(run_id: str, specs_json: str | None) -> list[MeteredComponent]:
    """Every metered component of a run; none when its specs are missing or unreadable."""
    try:
        specs = json.loads(specs_json or "{}")
    except ValueError:
        return []
    if not isinstance(specs, dict):
        return []
    found: list[MeteredComponent] = []
    for system in specs.get("systems") or []:
        if isinstance(system, dict):
            found += agent_components(run_id, system)
        else:  # a bare name (older or hand-made rows): a catalogue-less reference agent
            found += agent_components(run_id, {"name": system, "agent": system})
    caller = specs.get("caller")
    if isinstance(caller, dict):
        found += caller_components(run_id, caller)
    return found


def _agent(run_id: str, system: str, component: str, provider: str, model: Any) -> MeteredComponent:
    return MeteredComponent(
        run_id=run_id,
        system=system,
        role="agent",
        component=component,
        provider=provider,
        model=str(model) if model else None,
    )


def _caller(run_id: str, component: str, provider: str, model: Any) -> MeteredComponent:
    return MeteredComponent(
        run_id=run_id,
        system=None,
        role="simulator",
        component=component,
        provider=provider,
        model=str(model) if model else None,
    )
