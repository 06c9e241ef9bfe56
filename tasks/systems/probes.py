"""Preflight's network part: is a host reachable, and does the provider accept the key?

A TCP connection (bounded time) to every host a component will talk to, then ONE cheap
authenticated GET per (provider, model) from :mod:`tasks.systems.providers` with the key
from the environment. The answer is judged as the provider's API reference documents it:
401/403 is a rejected key (the variable is named, its value never printed), 404 is an
unknown model or voice, a list answer must offer the model. An OpenAI-compatible server of
one's own (a moved ``base_url``) is asked ``GET {base}/models`` (vLLM's list); one that lists
nothing (404/405/501) is not judged on its model.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from tasks.systems.providers import (
    SELF_HOSTED_KEY,
    Hosts,
    Provider,
    needs_key,
    voice_of,
    with_scheme,
)

CONNECT_TIMEOUT_S = 2.0
REQUEST_TIMEOUT_S = 5.0
DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}
EXCERPT = 160  # characters of a provider's error message shown


def address(url: str) -> tuple[str, int] | str:
    """``(host, port)`` of a URL, or why it has none."""
    parts = urlsplit(with_scheme(url))
    if not parts.hostname:
        return f"endpoint {url} has no host"
    try:
        return parts.hostname, parts.port or DEFAULT_PORTS.get(parts.scheme.lower(), 443)
    except ValueError:
        return f"endpoint {url} has an invalid port"


def unreachable(url: str, timeout_s: float = CONNECT_TIMEOUT_S) -> str | None:
    """Why ``url``'s host does not accept a TCP connection, or None when it does."""
    where = address(url)
    if isinstance(where, str):
        return where
    host, port = where
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return f"{host}:{port} is unreachable ({reason})"


@dataclass(frozen=True)
class Request:
    """One authenticated GET and what its answer must show."""

    url: str
    headers: tuple[tuple[str, str], ...]
    subject: str  # model | voice | key
    value: str | None  # the model id or voice asked about
    key_env: str | None
    self_hosted: bool
    listed: Callable[[Any], list[str]] | None = None


def plan(
    row: Provider,
    where: Hosts,
    model: str | None,
    params: Mapping[str, Any],
    environ: Mapping[str, str],
) -> Request | None:
    """The probe of one component, or None (no probe, a moved host not probed, no key)."""
    probe = row.probe
    if probe is None or (where.moved and not row.probe_moved_host):
        return None
    key = environ.get(row.key_env or "") or ""
    self_hosted = row.openai_compatible and where.moved
    if self_hosted:
        key = key or SELF_HOSTED_KEY
        return Request(
            f"{where.rest}/models",
            tuple(probe.request_headers(key).items()),
            "model",
            model,
            row.key_env,
            True,
            lambda body: (
                [str(m.get("id")) for m in body.get("data", []) if isinstance(m, dict)]
                if isinstance(body, dict)
                else []
            ),
        )
    if not key and needs_key(row, where):
        return None  # the variable check names it
    value = model if probe.subject == "model" else voice_of(row, params)
    path = probe.path
    if probe.subject != "key" and not value:
        path = probe.fallback_path or path
        if "{" in path:
            return None  # nothing to ask about, and no key-only request
    url = where.rest + path.format(model=value, voice=value)
    subject = probe.subject if value else "key"
    return Request(
        url,
        tuple(probe.request_headers(key).items()),
        subject,
        value,
        row.key_env,
        False,
        probe.listed if subject != "key" else None,
    )


def _redact(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return " ".join(text.split())[:EXCERPT]


def _message(body: Any, text: str) -> str:
    """The provider's own error message, where its JSON says one."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            for key in ("message", "detail", "error"):
                if isinstance(error.get(key), str):
                    return str(error[key])
        if isinstance(error, str):
            return error
    return text


def judge(request: Request, status: int, body: Any, text: str) -> tuple[bool, str]:
    """``(ok, what it showed)`` for the provider's answer to ``request``."""
    secrets = [v for k, v in request.headers]
    said = _redact(_message(body, text), secrets)
    what = f"{request.subject} {request.value!r}" if request.subject != "key" else "the key"
    if status in (401, 403):
        who = f"${request.key_env}" if request.key_env else "the key"
        if request.self_hosted:
            return False, f"the server refused {who} (HTTP {status}: {said})"
        return False, f"{who} was rejected (HTTP {status}: {said})"
    if request.self_hosted and status in (404, 405, 501):
        return True, f"the server lists no models (HTTP {status}); model id not checked"
    if status == 404:
        return False, f"{what} not found at {request.url} (HTTP 404: {said})"
    if status == 429:
        return True, "rate limited (HTTP 429): the key was not judged"
    if not 200 <= status < 300:
        return False, f"GET {request.url} answered HTTP {status}: {said}"
    if request.listed is not None and request.value:
        partial = isinstance(body, dict) and bool(body.get("next"))
        names = request.listed(body)
        if not partial and request.value not in names:
            shown = ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")
            return False, f"{what} is not offered ({request.url} lists: {shown or 'nothing'})"
    return True, f"{what} accepted (HTTP {status})"


def send(request: Request, client: httpx.Client) -> tuple[bool, str]:
    """Send ``request`` and judge the answer; a transport failure is a problem too."""
    try:
        response = client.get(request.url, headers=dict(request.headers))
    except httpx.HTTPError as exc:
        reason = _redact(str(exc) or type(exc).__name__, [v for _, v in request.headers])
        return False, f"GET {request.url} failed ({reason})"
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    return judge(request, response.status_code, body, response.text)


def client(timeout_s: float = REQUEST_TIMEOUT_S) -> httpx.Client:
    return httpx.Client(timeout=timeout_s, follow_redirects=False)
