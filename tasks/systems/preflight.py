"""Preflight: before the first trial, check that every selected system can run at all.

For each system, per component (the provider facts come from :mod:`tasks.systems.providers`):

* variables: its catalogue file's ``env``, any ``${VAR}`` left unresolved, ``*_env``
  parameters and ``os.environ/NAME`` references, and each component's API key variable;
* network (skipped by ``evaflow run --no-preflight``, or ``EVAFLOW_PREFLIGHT_NETWORK=0``
  for a flow started otherwise): every host a component talks to (its parameter, the
  client's variable, or the provider's default host) accepts a TCP connection, and one
  authenticated request per (provider, model) shows the key accepted and the model known
  (:mod:`tasks.systems.probes`); other URLs in the parameters get the TCP check;
* build: a Pipecat system's pipeline is built once without a call by the bot's
  ``--check`` (unknown provider, missing role, a parameter the service does not take),
  in the Pipecat environment, which must exist (``make pipecat-env``).

All of it runs in parallel with bounded timeouts, and every problem of every system is
reported in ONE ``ConfigError``, one line per problem naming the system, the component
(role, provider, model) and the cause, so nothing is started or stored. Variable values
are never printed, only their names. A system that passed in this process (same
parameters, same variables) in the last minutes is not probed again (the CLI checks, then
the flow does).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from tasks.config import ConfigError, SystemSpec
from tasks.model_list import env_ref_name
from tasks.systems import probes
from tasks.systems.build_check import build_checks
from tasks.systems.catalogue import SystemEntry, load_catalogue, unresolved
from tasks.systems.pipecat_process import bot_python
from tasks.systems.providers import component_label, hosts, needs_key, provider

CONNECT_TIMEOUT_S = probes.CONNECT_TIMEOUT_S
NETWORK_ENV = "EVAFLOW_PREFLIGHT_NETWORK"
PASSED_TTL_S = 600.0
_PASSED: dict[str, float] = {}  # fingerprint of a system that passed -> when
unreachable = probes.unreachable  # kept: callers and tests use preflight.unreachable


class Check(BaseModel):
    """One thing preflight looked at, and what it found."""

    model_config = ConfigDict(frozen=True)
    system: str
    component: str = ""  # "stt deepgram (nova-3)"; "" for the system as a whole
    kind: str  # variables | environment | host | auth | build
    ok: bool
    detail: str

    def line(self) -> str:
        where = f"{self.component}: " if self.component else ""
        return f"system {self.system!r}: {where}{self.detail}"


def endpoints(value: Any) -> list[str]:
    """Every http(s)/ws(s) URL among the string values of ``value`` (nested), in order."""
    found: list[str] = []
    if isinstance(value, str):
        if urlsplit(value).scheme.lower() in probes.DEFAULT_PORTS and "${" not in value:
            found.append(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            found += endpoints(item)
    elif isinstance(value, list | tuple):
        for item in value:
            found += endpoints(item)
    return list(dict.fromkeys(found))


def env_params(value: Any) -> list[str]:
    """Variable names given by ``*_env`` parameters (e.g. ``api_key_env``) and by
    ``os.environ/NAME`` references (the keys of an ``llm`` agent's model list), nested."""
    names: list[str] = []
    if isinstance(value, str) and (name := env_ref_name(value)):
        names.append(name)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if str(key).endswith("_env") and isinstance(item, str) and item:
                names.append(item)
            else:
                names += env_params(item)
    elif isinstance(value, list | tuple):
        for item in value:
            names += env_params(item)
    return names


def components(spec: SystemSpec) -> dict[str, dict[str, Any]]:
    """A pipecat system's components by role (empty for other agents)."""
    found = spec.params.get("components") if spec.agent == "pipecat" else None
    if not isinstance(found, Mapping):
        return {}
    return {str(r): dict(c) for r, c in found.items() if isinstance(c, Mapping)}


def _label(role: str, comp: Mapping[str, Any]) -> str:
    return component_label(role, str(comp.get("provider")), comp.get("model"))


def key_needs(spec: SystemSpec, environ: Mapping[str, str]) -> dict[str, list[str]]:
    """API key variable -> the components that need it (from the providers table)."""
    needs: dict[str, list[str]] = {}
    for role, comp in components(spec).items():
        row = provider(role, str(comp.get("provider")))
        if row is None or not row.key_env:
            continue
        if needs_key(row, hosts(row, comp.get("params") or {}, environ)):
            needs.setdefault(row.key_env, []).append(_label(role, comp))
    return needs


def missing_variables(
    spec: SystemSpec, entry: SystemEntry | None, environ: Mapping[str, str]
) -> list[str]:
    """Names of the variables ``spec`` needs that are not set (empty counts as unset)."""
    needed = list(entry.required_env()) if entry is not None else []
    needed += unresolved(spec.params) + env_params(spec.params) + list(key_needs(spec, environ))
    return [v for v in dict.fromkeys(needed) if not environ.get(v)]


def variable_checks(
    spec: SystemSpec, entry: SystemEntry | None, environ: Mapping[str, str]
) -> list[Check]:
    needs = key_needs(spec, environ)
    missing = missing_variables(spec, entry, environ)
    checks = [
        Check(
            system=spec.name,
            component=", ".join(needs.get(var, [])),
            kind="variables",
            ok=False,
            detail=f"environment variable {var} is not set",
        )
        for var in missing
    ]
    needed = list(entry.required_env()) if entry is not None else []
    others = [v for v in dict.fromkeys(needed + env_params(spec.params)) if v not in needs]
    if others and not set(others) & set(missing):
        detail = f"{', '.join(others)} set"
        checks.append(Check(system=spec.name, kind="variables", ok=True, detail=detail))
    for var, labels in needs.items():
        if var not in missing:
            checks += [
                Check(
                    system=spec.name, component=c, kind="variables", ok=True, detail=f"{var} is set"
                )
                for c in labels
            ]
    return checks


def environment_problems(spec: SystemSpec) -> list[str]:
    python = bot_python()
    if spec.agent == "pipecat" and not python.exists():
        return [
            f"the Pipecat environment is missing ({python}): create it with `make pipecat-env` "
            "(or point EVAFLOW_PIPECAT_PYTHON at its interpreter)"
        ]
    return []


def _catalogue_entries(systems_dirs: Sequence[str | Path]) -> dict[str, SystemEntry]:
    catalogue = load_catalogue(systems_dirs)
    return {name: catalogue.get(name) for name in catalogue}


def _entry(spec: SystemSpec, entries: Mapping[str, SystemEntry]) -> SystemEntry | None:
    entry = entries.get(spec.name)
    # Same label, another system: its catalogue needs do not apply.
    return entry if entry is not None and entry.agent == spec.agent else None


def network_wanted(environ: Mapping[str, str]) -> bool:
    return environ.get(NETWORK_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def run_checks(
    systems: Sequence[SystemSpec],
    environ: Mapping[str, str] | None = None,
    systems_dirs: Sequence[str | Path] = (),
    timeout_s: float = CONNECT_TIMEOUT_S,
    network: bool | None = None,
    build: bool = True,
    request_timeout_s: float = probes.REQUEST_TIMEOUT_S,
) -> list[Check]:
    """Every check of every system, passed and failed, in system order."""
    env = os.environ if environ is None else environ
    network = network_wanted(env) if network is None else network
    entries = _catalogue_entries(systems_dirs)
    checks: list[Check] = []
    for spec in systems:
        checks += variable_checks(spec, _entry(spec, entries), env)
        checks += [
            Check(system=spec.name, kind="environment", ok=False, detail=p)
            for p in environment_problems(spec)
        ]
    ready = [s for s in systems if not environment_problems(s)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        built = build_checks(ready, env, pool) if build else {}
        if network:
            checks += network_checks(systems, env, pool, timeout_s, request_timeout_s)
        for name, future in built.items():
            checks += [Check(system=name, **c) for c in future.result()]
    order = {s.name: i for i, s in enumerate(systems)}
    return sorted(checks, key=lambda c: order.get(c.system, len(order)))


def _targets(
    systems: Sequence[SystemSpec], env: Mapping[str, str]
) -> tuple[list[tuple[str, str, str, str]], list[tuple[str, str, probes.Request]]]:
    """(system, component, kind, url) to reach and (system, component, request) to send."""
    reach: list[tuple[str, str, str, str]] = []
    send: list[tuple[str, str, probes.Request]] = []
    for spec in systems:
        covered: set[str] = set()
        for role, comp in components(spec).items():
            row = provider(role, str(comp.get("provider")))
            if row is None:
                continue
            params = comp.get("params") or {}
            where = hosts(row, params, env)
            label = _label(role, comp)
            mine: set[str] = set()  # REST and WebSocket on one host: one check
            for url in where.urls:
                if str(probes.address(url)) not in mine:
                    reach.append((spec.name, label, where.source, url))
                    mine.add(str(probes.address(url)))
            covered |= mine
            request = probes.plan(row, where, comp.get("model"), params, env)
            if request is not None:
                send.append((spec.name, label, request))
        for url in endpoints(spec.params):
            if str(probes.address(url)) not in covered:
                reach.append((spec.name, "", "param", url))
    return reach, send


def network_checks(
    systems: Sequence[SystemSpec],
    env: Mapping[str, str],
    pool: ThreadPoolExecutor,
    timeout_s: float,
    request_timeout_s: float,
) -> list[Check]:
    """TCP to every host (each address once), then each distinct request once, in parallel."""
    reach, send = _targets(systems, env)
    addresses = list(dict.fromkeys(str(probes.address(u)) for *_, u in reach))
    first = {str(probes.address(u)): u for *_, u in reversed(reach)}
    reasons = pool.map(lambda a: probes.unreachable(first[a], timeout_s), addresses)
    tcp = dict(zip(addresses, reasons, strict=True))
    checks = []
    for name, label, source, url in reach:
        reason = tcp[str(probes.address(url))]
        detail = reason or f"{_host(url)} reachable ({source})"
        checks.append(
            Check(system=name, component=label, kind="host", ok=not reason, detail=detail)
        )
    down = {(c.system, c.component) for c in checks if not c.ok}
    todo = [t for t in send if (t[0], t[1]) not in down]
    distinct = list(dict.fromkeys(r for *_, r in todo))
    with probes.client(request_timeout_s) as http:
        answers = dict(
            zip(distinct, pool.map(lambda r: probes.send(r, http), distinct), strict=True)
        )
    for name, label, request in todo:
        ok, detail = answers[request]
        checks.append(Check(system=name, component=label, kind="auth", ok=ok, detail=detail))
    return checks


def _host(url: str) -> str:
    where = probes.address(url)
    return where if isinstance(where, str) else f"{where[0]}:{where[1]}"


def fingerprint(spec: SystemSpec, environ: Mapping[str, str]) -> str:
    """What a passed check depends on: the spec and the values of the variables it reads
    (hashed together, never kept)."""
    names = sorted(set(unresolved(spec.params)) | set(key_needs(spec, environ)) | {NETWORK_ENV})
    for role, comp in components(spec).items():
        row = provider(role, str(comp.get("provider")))
        if row is not None:
            names += [n for n in (row.key_env, row.host_env) if n]
    data = [spec.model_dump(mode="json"), {n: environ.get(n) for n in sorted(set(names))}]
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def clear_passed() -> None:
    """Forget which systems passed (tests; a long-lived process after fixing a provider)."""
    _PASSED.clear()


def problems_of(checks: Iterable[Check]) -> dict[str, list[str]]:
    """System name -> its problems as lines (only systems with problems)."""
    found: dict[str, list[str]] = {}
    for check in checks:
        if not check.ok:
            found.setdefault(check.system, []).append(check.line())
    return found


def system_problems(
    systems: Sequence[SystemSpec],
    environ: Mapping[str, str] | None = None,
    systems_dirs: Sequence[str | Path] = (),
    timeout_s: float = CONNECT_TIMEOUT_S,
    network: bool | None = None,
    build: bool = True,
) -> dict[str, list[str]]:
    """What stops each system from running: system name -> problem lines (only non-empty)."""
    env = os.environ if environ is None else environ
    network = network_wanted(env) if network is None else network
    now = time.monotonic()
    marks = {s.name: f"{fingerprint(s, env)}:{network}:{build}" for s in systems}
    fresh = {n for n, mark in marks.items() if now - _PASSED.get(mark, -1e9) < PASSED_TTL_S}
    todo = [s for s in systems if s.name not in fresh]
    checks = run_checks(todo, env, systems_dirs, timeout_s, network, build)
    # A recently passed system still has its variables checked (cheap, and they may go).
    checks += run_checks(
        [s for s in systems if s.name in fresh],
        env,
        systems_dirs,
        timeout_s,
        network=False,
        build=False,
    )
    found = problems_of(checks)
    _PASSED.update({marks[s.name]: now for s in todo if s.name not in found})
    return found


def format_problems(problems: Mapping[str, list[str]]) -> str:
    lines = ["preflight failed; no trial was started:"]
    lines += [f"  - {line}" for found in problems.values() for line in found]
    return "\n".join(lines)


def preflight(
    systems: Sequence[SystemSpec],
    environ: Mapping[str, str] | None = None,
    systems_dirs: Sequence[str | Path] = (),
    timeout_s: float = CONNECT_TIMEOUT_S,
    network: bool | None = None,
    build: bool = True,
) -> None:
    """Raise ONE ``ConfigError`` naming every system and everything it is missing.

    ``network`` None follows ``$EVAFLOW_PREFLIGHT_NETWORK`` (default on)."""
    problems = system_problems(systems, environ, systems_dirs, timeout_s, network, build)
    if problems:
        raise ConfigError(format_problems(problems))
