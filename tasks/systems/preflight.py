"""Preflight: before the first trial, check that every selected system can run at all.

For each system: the environment variables it needs (its catalogue file's ``env``, any
``${VAR}`` left unresolved in its parameters, any ``*_env`` parameter naming a variable),
that every endpoint in its parameters (``http(s)://``, ``ws(s)://``) accepts a TCP
connection, and that the optional environment its agent runs in exists (``pipecat``:
``.venv-pipecat``). Everything missing, for every system, is reported in ONE
``ConfigError``, so a user fixes it in one go and no trial (or stored row) is started.
Variable values are never printed, only their names.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tasks.config import ConfigError, SystemSpec
from tasks.systems.catalogue import SystemEntry, load_catalogue, unresolved
from tasks.systems.pipecat_process import bot_python

CONNECT_TIMEOUT_S = 2.0
DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}


def endpoints(value: Any) -> list[str]:
    """Every http(s)/ws(s) URL among the string values of ``value`` (nested), in order."""
    found: list[str] = []
    if isinstance(value, str):
        if urlsplit(value).scheme.lower() in DEFAULT_PORTS and "${" not in value:
            found.append(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            found += endpoints(item)
    elif isinstance(value, list | tuple):
        for item in value:
            found += endpoints(item)
    return list(dict.fromkeys(found))


def env_params(value: Any) -> list[str]:
    """Variable names given by ``*_env`` parameters (e.g. ``api_key_env``), nested."""
    names: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            if str(key).endswith("_env") and isinstance(item, str) and item:
                names.append(item)
            else:
                names += env_params(item)
    elif isinstance(value, list | tuple):
        for item in value:
            names += env_params(item)
    return names


def unreachable(url: str, timeout_s: float = CONNECT_TIMEOUT_S) -> str | None:
    """Why ``url``'s host does not accept a TCP connection, or None when it does."""
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        return f"endpoint {url} has no host"
    try:
        port = parts.port or DEFAULT_PORTS[parts.scheme.lower()]
    except ValueError:
        return f"endpoint {url} has an invalid port"
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return f"endpoint {parts.scheme}://{host}:{port} is unreachable ({reason})"


def _catalogue_entries(systems_dirs: Sequence[str | Path]) -> dict[str, SystemEntry]:
    catalogue = load_catalogue(systems_dirs)
    return {name: catalogue.get(name) for name in catalogue}


def missing_variables(
    spec: SystemSpec, entry: SystemEntry | None, environ: Mapping[str, str]
) -> list[str]:
    """Names of the variables ``spec`` needs that are not set (empty counts as unset)."""
    needed = list(entry.required_env()) if entry is not None else []
    needed += unresolved(spec.params) + env_params(spec.params)
    return [v for v in dict.fromkeys(needed) if not environ.get(v)]


def environment_problems(spec: SystemSpec) -> list[str]:
    python = bot_python()
    if spec.agent == "pipecat" and not python.exists():
        return [
            f"the Pipecat environment is missing ({python}): create it with `make pipecat-env` "
            "(or point EVAFLOW_PIPECAT_PYTHON at its interpreter)"
        ]
    return []


def system_problems(
    systems: Sequence[SystemSpec],
    environ: Mapping[str, str] | None = None,
    systems_dirs: Sequence[str | Path] = (),
    timeout_s: float = CONNECT_TIMEOUT_S,
) -> dict[str, list[str]]:
    """What stops each system from running: system name -> problems (only non-empty)."""
    env = os.environ if environ is None else environ
    entries = _catalogue_entries(systems_dirs)
    problems: dict[str, list[str]] = {}
    for spec in systems:
        entry = entries.get(spec.name)
        if entry is not None and entry.agent != spec.agent:
            entry = None  # same label, another system: its catalogue needs do not apply
        found = [
            f"environment variable {v} is not set" for v in missing_variables(spec, entry, env)
        ]
        problems[spec.name] = found + environment_problems(spec)
    urls = list(dict.fromkeys((s.name, url) for s in systems for url in endpoints(s.params)))
    for (name, _url), reason in zip(urls, _probe([u for _, u in urls], timeout_s), strict=True):
        if reason:
            problems[name].append(reason)
    return {name: found for name, found in problems.items() if found}


def _probe(todo: list[str], timeout_s: float) -> list[str | None]:
    if not todo:
        return []
    # In parallel: a run comparing several remote systems waits one timeout, not one each.
    with ThreadPoolExecutor(max_workers=min(16, len(todo))) as pool:
        return list(pool.map(lambda u: unreachable(u, timeout_s), todo))


def format_problems(problems: Mapping[str, list[str]]) -> str:
    lines = ["preflight failed; no trial was started:"]
    for name, found in problems.items():
        lines.append(f"  system {name!r}:")
        lines += [f"    - {p}" for p in found]
    return "\n".join(lines)


def preflight(
    systems: Sequence[SystemSpec],
    environ: Mapping[str, str] | None = None,
    systems_dirs: Sequence[str | Path] = (),
    timeout_s: float = CONNECT_TIMEOUT_S,
) -> None:
    """Raise ONE ``ConfigError`` naming every system and everything it is missing."""
    problems = system_problems(systems, environ, systems_dirs, timeout_s)
    if problems:
        raise ConfigError(format_problems(problems))
