"""Rehearsal: run catalogue systems exactly as shipped against local stand-ins of their
providers (``evaflow run --system NAME --rehearse``, issue 29 item 2).

A team validates a paid configuration offline before spending anything: the same Pipecat
services, model ids, voices and parameters as the catalogue file, with only each
component's HOST moved to a stand-in on loopback (:mod:`tasks.systems.standins`, each
following its provider's published protocol) and placeholder keys.

What a rehearsal changes, and nothing else:

* each component's host, through the parameter or variable its provider reads
  (:data:`tasks.systems.providers.PROVIDERS`: ``host_param`` such as ``base_url`` /
  ``url``, else ``host_env`` such as ``ANTHROPIC_BASE_URL``), set to the stand-in's URL
  in the form that parameter takes (:data:`ROUTES`);
* the environment the bot inherits (:func:`rehearsal_environ`): EVERY API key variable of
  the provider table set to a placeholder, overriding any real key for the rehearsal's
  duration (a rehearsal can never spend money); the catalogue's base-URL variables that
  only name a moved host; and TLS trust (``SSL_CERT_FILE``: the system's default bundle
  plus the stand-ins' throwaway certificates) for the stand-ins that serve TLS (Gemini
  Live, ElevenLabs), whose clients accept no ``http://`` / ``ws://`` URL.

One stand-in per provider protocol serves every system of the run (several systems on
Deepgram share one Deepgram stand-in). The stand-ins run on loopback threads of the
process that enters :func:`rehearsal` (the flow's), so a rehearsal runs on local runners
only. Their brain is :class:`tasks.systems.rehearsal_brain.RehearsalBrain` (the reference
policy of the scenario it infers from the request) and their ears one recogniser over the
run's domains (:func:`tasks.systems.rehearsal_ears.rehearsal_recognizer`).

The run's configuration keeps the systems as shipped (its fingerprint and trial keys do
not depend on loopback ports); the moved hosts reach the bot through ``EVAFLOW_REHEARSAL``
(:func:`apply_to_bot_system`), read where the bot is started.
"""

from __future__ import annotations

import json
import logging
import os
import ssl
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scenarios.models import Scenario
from tasks.systems.catalogue import unresolved
from tasks.systems.providers import key_variables, provider
from tasks.systems.rehearsal_brain import RehearsalBrain
from tasks.systems.rehearsal_ears import rehearsal_recognizer
from tasks.systems.spec import ConfigError, SystemSpec

# The variable that carries the moved hosts to wherever the bot is started.
REHEARSAL_ENV = "EVAFLOW_REHEARSAL"
PLACEHOLDER_KEY = "rehearsal-placeholder-key"
TRUST_ENV = "SSL_CERT_FILE"

# (role, provider) -> (stand-in, the attribute whose URL the host parameter takes). The
# forms differ by service: ElevenLabs' STT takes a bare host (it adds wss:// itself), its
# TTS a wss:// URL; Cartesia's TTS the full /tts/websocket URL; OpenAI's a /v1 base.
ROUTES: dict[tuple[str, str], tuple[str, str]] = {
    ("stt", "deepgram"): ("deepgram", "base_url"),
    ("tts", "deepgram"): ("deepgram", "base_url"),
    ("stt", "cartesia"): ("cartesia", "base_url"),
    ("tts", "cartesia"): ("cartesia", "tts_url"),
    ("stt", "elevenlabs"): ("elevenlabs", "host"),
    ("tts", "elevenlabs"): ("elevenlabs", "ws_url"),
    ("stt", "openai"): ("openai_http", "base_url"),
    ("llm", "openai"): ("openai_http", "base_url"),
    ("tts", "openai"): ("openai_http", "base_url"),
    ("llm", "anthropic"): ("anthropic", "base_url"),
    ("llm", "google"): ("gemini", "base_url"),
    ("tts", "google"): ("gemini", "base_url"),
    ("realtime", "openai-realtime"): ("openai_realtime", "base_url"),
    ("realtime", "gemini-live"): ("gemini_live", "base_url"),
    ("realtime", "ultravox"): ("ultravox", "base_url"),
}
TLS_STANDINS = frozenset({"gemini_live", "elevenlabs"})
# Stand-ins that serve their provider's REST probe (models / voices); the others speak
# only the streaming protocol, so preflight's key-and-model request is not rehearsed there.
REST_STANDINS = frozenset({"openai_http", "anthropic", "gemini"})

Urls = Mapping[tuple[str, str], str]  # (role, provider) -> the URL its host param takes


def _components(spec: SystemSpec) -> dict[str, dict[str, Any]]:
    found = spec.params.get("components") if spec.agent == "pipecat" else None
    return {str(r): dict(c) for r, c in (found or {}).items() if isinstance(c, Mapping)}


def provider_components(spec: SystemSpec) -> list[tuple[str, str]]:
    """(role, provider) of every component that talks to a provider (offline engines such
    as evaflow-espeak talk to none)."""
    return [
        (role, str(c.get("provider")))
        for role, c in _components(spec).items()
        if provider(role, str(c.get("provider"))) is not None
    ]


def standins_needed(systems: Sequence[SystemSpec]) -> list[str]:
    """The stand-ins the systems' components need, once each; a component no stand-in
    serves (AssemblyAI today) or a remote agent (``ws://``) cannot be rehearsed."""
    needed: list[str] = []
    problems: list[str] = []
    for spec in systems:
        if spec.agent.startswith(("ws://", "wss://")):
            problems.append(f"system {spec.name!r}: a remote agent ({spec.agent}) is not rehearsed")
        for role, name in provider_components(spec):
            route = ROUTES.get((role, name))
            if route is None:
                problems.append(
                    f"system {spec.name!r}: {role} {name}: no stand-in serves this provider, "
                    "so it cannot be rehearsed"
                )
            elif route[0] not in needed:
                needed.append(route[0])
    if problems:
        raise ConfigError("cannot rehearse:\n" + "\n".join(f"  - {p}" for p in problems))
    return needed


def rehearsed_params(params: Mapping[str, Any], urls: Urls) -> dict[str, Any]:
    """A pipecat system's params with every component's host parameter set to its
    stand-in; everything else (services, model ids, voices, parameters) as given. A
    provider whose host moves only through a variable (Anthropic) is left to
    :func:`rehearsal_environ`."""
    out = dict(params)
    comps = params.get("components")
    if not isinstance(comps, Mapping):
        return out
    moved: dict[str, Any] = {}
    for role, comp in comps.items():
        name = str(comp.get("provider")) if isinstance(comp, Mapping) else ""
        row = provider(str(role), name)
        if row is None or not row.host_param or (role, name) not in urls:
            moved[role] = comp
            continue
        given = dict(comp.get("params") or {})
        moved[role] = {**comp, "params": {**given, row.host_param: urls[(role, name)]}}
    out["components"] = moved
    return out


def rehearsed_system(spec: SystemSpec, urls: Urls) -> SystemSpec:
    """``spec`` pointed at the stand-ins (non-pipecat agents are returned unchanged)."""
    if spec.agent != "pipecat":
        return spec
    return spec.model_copy(update={"params": rehearsed_params(spec.params, urls)})


def _moved_variables(spec: SystemSpec) -> dict[str, tuple[str, str]]:
    """``${VAR}`` left unresolved in a host parameter -> the (role, provider) it moves
    (a self-hosted base URL the user has not set: the stand-in replaces it)."""
    found: dict[str, tuple[str, str]] = {}
    for role, comp in _components(spec).items():
        row = provider(role, str(comp.get("provider")))
        if row is not None and row.host_param:
            for var in unresolved((comp.get("params") or {}).get(row.host_param)):
                found[var] = (role, str(comp.get("provider")))
    return found


def rehearsal_environ(
    systems: Sequence[SystemSpec], urls: Urls, trust_file: Path | None
) -> dict[str, str]:
    """The variables a rehearsal sets: a placeholder for every key variable (never a real
    key), each ``host_env`` of a provider in use, moved base-URL variables, TLS trust."""
    env = dict.fromkeys(key_variables(), PLACEHOLDER_KEY)
    for spec in systems:
        for role, name in provider_components(spec):
            row = provider(role, name)
            if row is not None and row.host_env and not row.host_param and (role, name) in urls:
                env[row.host_env] = urls[(role, name)]
        for var, where in _moved_variables(spec).items():
            if where in urls:
                env[var] = urls[where]
    if trust_file is not None:
        env[TRUST_ENV] = str(trust_file)
    env[REHEARSAL_ENV] = json.dumps({f"{r}|{p}": u for (r, p), u in sorted(urls.items())})
    return env


def apply_to_bot_system(system: dict[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """The bot's ``--system-json`` pointed at the stand-ins while a rehearsal is active in
    this process's environment (``EVAFLOW_REHEARSAL``); unchanged otherwise."""
    raw = environ.get(REHEARSAL_ENV)
    if not raw:
        return system
    urls: dict[tuple[str, str], str] = {}
    for key, url in json.loads(raw).items():
        role, _, name = str(key).partition("|")
        urls[(role, name)] = str(url)
    return rehearsed_params(system, urls)


def trust_bundle(certs: Sequence[Path], directory: Path) -> Path:
    """One CA file: the default trust store (so real TLS elsewhere still verifies) plus
    the stand-ins' self-signed certificates."""
    parts: list[str] = []
    default = ssl.get_default_verify_paths().cafile
    try:
        import certifi

        default = certifi.where()
    except ImportError:
        pass
    if default and Path(default).is_file():
        parts.append(Path(default).read_text(encoding="utf-8"))
    parts += [c.read_text(encoding="utf-8") for c in certs]
    path = directory / "rehearsal-ca.pem"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def _start(kind: str, brain: RehearsalBrain, ears: Any, certs: Path) -> Any:
    """One stand-in server (not yet started), built uniformly from brain, ears, cert dir."""
    from tasks.systems.standins import (
        anthropic,
        cartesia,
        deepgram,
        elevenlabs,
        gemini,
        gemini_live,
        openai_http,
        openai_realtime,
        ultravox,
    )

    (certs / "gemini-live").mkdir(parents=True, exist_ok=True)
    factories: dict[str, Callable[[], Any]] = {
        "openai_http": lambda: openai_http.FakeOpenAIHTTP(brain, ears),
        "anthropic": lambda: anthropic.FakeAnthropic(brain),
        "gemini": lambda: gemini.FakeGemini(brain, ears),
        "gemini_live": lambda: gemini_live.FakeGeminiLive(brain, ears, certs / "gemini-live"),
        "openai_realtime": lambda: openai_realtime.FakeOpenAIRealtime(brain, ears),
        "deepgram": lambda: deepgram.FakeDeepgram(ears),
        "cartesia": lambda: cartesia.FakeCartesia(ears),
        "elevenlabs": lambda: elevenlabs.FakeElevenLabs(ears, certs),
        "ultravox": lambda: ultravox.FakeUltravox(brain, ears),
    }
    return factories[kind]()


def rehearsal_preflight(
    rehearsed: Sequence[SystemSpec],
    systems_dirs: Sequence[str | Path] = (),
    network: bool | None = None,
) -> None:
    """Preflight against the stand-ins (call inside :func:`rehearsal`): variables (the
    placeholders), the bot's ``--check`` build of every system as pointed, each host's
    reachability, and the key-and-model request where the stand-in serves it
    (:data:`REST_STANDINS`). One ``ConfigError`` lists every problem."""
    from tasks.systems import preflight

    checks = preflight.run_checks(rehearsed, systems_dirs=systems_dirs, network=network)
    streaming_only = {rp for rp, (kind, _) in ROUTES.items() if kind not in REST_STANDINS}
    labels = {
        (spec.name, preflight._label(role, comp)): (role, str(comp.get("provider")))
        for spec in rehearsed
        for role, comp in _components(spec).items()
    }
    kept = [
        c
        for c in checks
        if not (c.kind == "auth" and labels.get((c.system, c.component)) in streaming_only)
    ]
    problems = preflight.problems_of(kept)
    if problems:
        raise ConfigError(preflight.format_problems(problems))


@dataclass
class Rehearsal:
    """A running rehearsal: the systems pointed at the stand-ins, the variables set for
    its duration, the servers (by stand-in name) and the shared brain."""

    systems: list[SystemSpec]
    environ: dict[str, str]
    servers: dict[str, Any]
    brain: RehearsalBrain
    urls: dict[tuple[str, str], str]


class _QuietProbes(logging.Filter):
    """Preflight's reachability check opens a TCP connection to each WebSocket stand-in
    and closes it: not a failed handshake worth a traceback in the run's output."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "opening handshake failed"


@contextmanager
def _quiet_probes() -> Iterator[None]:
    logger, quiet = logging.getLogger("websockets.server"), _QuietProbes()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


@contextmanager
def _environ(values: Mapping[str, str]) -> Iterator[None]:
    """``os.environ`` with ``values`` set, restored exactly on exit."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old


@contextmanager
def rehearsal(
    systems: Sequence[SystemSpec], scenarios: Sequence[Scenario], workdir: Path | None = None
) -> Iterator[Rehearsal]:
    """Start every stand-in the systems need (once per provider), set the rehearsal's
    variables in this process (inherited by the bots it starts), and yield the systems
    pointed at the stand-ins; everything is stopped and restored on exit."""
    kinds = standins_needed(systems)
    with ExitStack() as stack:
        scratch = workdir or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        certs = scratch / "certs"
        certs.mkdir(parents=True, exist_ok=True)
        brain = RehearsalBrain(scenarios)
        ears = rehearsal_recognizer(scenarios, scratch / "ears") if kinds else None
        if ears is not None:
            stack.callback(ears.close)
        servers = {k: stack.enter_context(_start(k, brain, ears, certs)) for k in kinds}
        urls: dict[tuple[str, str], str] = {}
        for (role, name), (kind, attribute) in ROUTES.items():
            if kind in servers:
                urls[(role, name)] = str(getattr(servers[kind], attribute))
        tls = [servers[k].cert_file for k in kinds if k in TLS_STANDINS]
        trust = trust_bundle(tls, certs) if tls else None
        environ = rehearsal_environ(systems, urls, trust)
        stack.enter_context(_environ(environ))
        stack.enter_context(_quiet_probes())
        pointed = [rehearsed_system(s, urls) for s in systems]
        yield Rehearsal(pointed, environ, servers, brain, urls)
