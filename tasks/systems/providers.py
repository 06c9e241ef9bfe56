"""What evaflow knows about each provider a system component can name: one table.

Per (role, provider): the API key variable, the default hosts (REST, and the WebSocket a
streaming service talks over), what moves the host (the component parameter Pipecat's
service takes, or the variable the provider's own client reads), and the cheapest
authenticated request that proves a key (and, where the API allows, the model or voice).
Preflight (:mod:`tasks.systems.preflight`) checks from it; the Pipecat bot takes its key
variables from it (``pipecat_bot/pipeline.py`` ``SERVICES``). Pure data and string work:
no Pipecat, no network, importable from both environments.

Hosts and headers are the ones the Pipecat 1.14 services and SDKs in ``.venv-pipecat`` use
(``pipecat/services/*``, ``openai``, ``anthropic``, ``google-genai``, ``deepgram``), and
the probes follow each provider's API reference:

* OpenAI, retrieve a model: https://platform.openai.com/docs/api-reference/models/retrieve
  (``GET {base}/models/{model}``, ``Authorization: Bearer``); an OpenAI-compatible server
  (vLLM) lists what it serves at ``GET {base}/models`` (``data[].id``).
* Anthropic, get a model: https://docs.anthropic.com/en/api/models (``GET /v1/models/{id}``,
  ``x-api-key``, ``anthropic-version: 2023-06-01``; aliases resolve).
* Gemini API, models.get: https://ai.google.dev/api/models#method:-models.get
  (``GET /v1beta/models/{model}``, ``x-goog-api-key``).
* Deepgram, list models: https://developers.deepgram.com/reference/manage/models/list
  (``GET /v1/models``, ``Authorization: Token``; ``stt[]``/``tts[]`` ``canonical_name``).
* Cartesia, get voice / list voices: https://docs.cartesia.ai/api-reference/voices/get
  (``GET /voices/{id}``, ``X-API-Key``, ``Cartesia-Version``).
* ElevenLabs, get voice / list models: https://elevenlabs.io/docs/api-reference/voices/get,
  https://elevenlabs.io/docs/api-reference/models/list (``xi-api-key``).
* AssemblyAI, streaming token:
  https://www.assemblyai.com/docs/api-reference/streaming-api/generate-streaming-token
  (``GET https://streaming.assemblyai.com/v3/token``, ``Authorization: <key>``).
* Ultravox, list models: https://docs.ultravox.ai/api-reference/other/models-get
  (``GET /api/models``, ``X-API-Key``; ``results[].name``). Pipecat's Ultravox service
  hard-codes ``https://api.ultravox.ai``; given ``base_url``, the bot creates the call there
  itself and the service joins it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

# Pipecat's Cartesia services send this API version (pipecat/services/cartesia/tts.py).
CARTESIA_VERSION = "2026-03-01"
ANTHROPIC_VERSION = "2023-06-01"
# What Pipecat's OpenAI services get as a key for a self-hosted endpoint when none is set.
SELF_HOSTED_KEY = "not-needed"
_SCHEMES = {"ws": "http", "wss": "https", "http": "http", "https": "https"}


def _names(*paths: tuple[str, str]) -> Callable[[Any], list[str]]:
    """Names in a JSON list response: ``(list key, item key)`` pairs ("" = the body)."""

    def read(body: Any) -> list[str]:
        found: list[str] = []
        for list_key, item_key in paths:
            items = body.get(list_key) if isinstance(body, dict) and list_key else body
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict) and isinstance(item.get(item_key), str):
                    found.append(item[item_key])
        return found

    return read


@dataclass(frozen=True)
class Probe:
    """One cheap authenticated GET. ``path`` is appended to the REST base and may say
    ``{model}`` or ``{voice}``; ``subject`` is what it proves besides the key (``model``,
    ``voice`` or ``key``). ``listed`` reads the names a list answer offers; the subject
    must be among them (a list that says it is partial, ``next``, is not judged)."""

    path: str
    auth_header: str
    auth_format: str = "{key}"
    headers: tuple[tuple[str, str], ...] = ()
    subject: str = "model"
    listed: Callable[[Any], list[str]] | None = None
    fallback_path: str | None = None  # when the component names no model or voice

    def request_headers(self, key: str) -> dict[str, str]:
        return {self.auth_header: self.auth_format.format(key=key), **dict(self.headers)}


@dataclass(frozen=True)
class Provider:
    """Facts about one (role, provider)."""

    role: str
    provider: str
    key_env: str | None
    rest: str  # default REST base (the probe's); OpenAI's includes /v1
    ws: str | None = None  # default WebSocket endpoint the service streams over
    host_param: str | None = None  # component param (Pipecat kwarg) that moves the host
    host_env: str | None = None  # variable the provider's own client reads for its host
    probe: Probe | None = None
    voice_params: tuple[str, ...] = ()  # component params naming the voice, in order
    # A moved host is probed too (the same API), except where the path differs there
    # (Azure's OpenAI Realtime) or the host is a local stand-in with no REST side.
    probe_moved_host: bool = True
    openai_compatible: bool = False  # a moved host is a self-hosted server: list models
    docs: str = ""
    notes: tuple[str, ...] = field(default=())


def _openai(role: str) -> Provider:
    return Provider(
        role,
        "openai",
        "OPENAI_API_KEY",
        "https://api.openai.com/v1",
        host_param="base_url",
        host_env="OPENAI_BASE_URL",
        probe=Probe("/models/{model}", "Authorization", "Bearer {key}", fallback_path="/models"),
        openai_compatible=True,
        docs="https://platform.openai.com/docs/api-reference/models/retrieve",
    )


def _deepgram(role: str) -> Provider:
    listed = _names(("stt", "canonical_name"), ("stt", "name"))
    if role == "tts":
        listed = _names(("tts", "canonical_name"), ("tts", "name"))
    return Provider(
        role,
        "deepgram",
        "DEEPGRAM_API_KEY",
        "https://api.deepgram.com",
        ws="wss://api.deepgram.com",
        host_param="base_url",
        probe=Probe(
            "/v1/models",
            "Authorization",
            "Token {key}",
            subject="voice" if role == "tts" else "model",
            listed=listed,
        ),
        voice_params=("voice",) if role == "tts" else (),
        docs="https://developers.deepgram.com/reference/manage/models/list",
    )


def _cartesia(role: str) -> Provider:
    headers = (("Cartesia-Version", CARTESIA_VERSION),)
    tts = role == "tts"
    return Provider(
        role,
        "cartesia",
        "CARTESIA_API_KEY",
        "https://api.cartesia.ai",
        ws="wss://api.cartesia.ai/tts/websocket" if tts else "wss://api.cartesia.ai",
        host_param="url" if tts else "base_url",
        probe=Probe(
            "/voices/{voice}" if tts else "/voices?limit=1",
            "X-API-Key",
            headers=headers,
            subject="voice" if tts else "key",
            fallback_path="/voices?limit=1",
        ),
        voice_params=("voice_id", "voice"),
        docs="https://docs.cartesia.ai/api-reference/voices/get",
    )


def _elevenlabs(role: str) -> Provider:
    tts = role == "tts"
    return Provider(
        role,
        "elevenlabs",
        "ELEVENLABS_API_KEY",
        "https://api.elevenlabs.io",
        ws="wss://api.elevenlabs.io",
        host_param="url" if tts else "base_url",
        probe=Probe(
            "/v1/voices/{voice}" if tts else "/v1/models",
            "xi-api-key",
            subject="voice" if tts else "key",
            fallback_path="/v1/models",
        ),
        voice_params=("voice_id", "voice"),
        docs="https://elevenlabs.io/docs/api-reference/voices/get",
    )


def _gemini(role: str, provider: str = "google") -> Provider:
    live = provider == "gemini-live"
    return Provider(
        role,
        provider,
        "GOOGLE_API_KEY",
        "https://generativelanguage.googleapis.com",
        ws="wss://generativelanguage.googleapis.com" if live else None,
        # The bot turns a google component's base_url into the client's HttpOptions.
        host_param="base_url",
        host_env="GOOGLE_GEMINI_BASE_URL",
        probe=Probe(
            "/v1beta/models/{model}", "x-goog-api-key", fallback_path="/v1beta/models?pageSize=1"
        ),
        probe_moved_host=not live,
        docs="https://ai.google.dev/api/models#method:-models.get",
    )


PROVIDERS: dict[tuple[str, str], Provider] = {
    (p.role, p.provider): p
    for p in [
        _deepgram("stt"),
        _elevenlabs("stt"),
        _cartesia("stt"),
        Provider(
            "stt",
            "assemblyai",
            "ASSEMBLYAI_API_KEY",
            "https://streaming.assemblyai.com",
            ws="wss://streaming.assemblyai.com/v3/ws",
            host_param="api_endpoint_base_url",
            probe=Probe("/v3/token?expires_in_seconds=60", "Authorization", subject="key"),
            docs="https://www.assemblyai.com/docs/api-reference/streaming-api/generate-streaming-token",
        ),
        _openai("stt"),
        _openai("llm"),
        Provider(
            "llm",
            "anthropic",
            "ANTHROPIC_API_KEY",
            "https://api.anthropic.com",
            host_env="ANTHROPIC_BASE_URL",
            probe=Probe(
                "/v1/models/{model}",
                "x-api-key",
                headers=(("anthropic-version", ANTHROPIC_VERSION),),
                fallback_path="/v1/models?limit=1",
            ),
            docs="https://docs.anthropic.com/en/api/models",
        ),
        _gemini("llm"),
        _cartesia("tts"),
        _deepgram("tts"),
        _elevenlabs("tts"),
        _openai("tts"),
        _gemini("tts"),
        Provider(
            "realtime",
            "openai-realtime",
            "OPENAI_API_KEY",
            "https://api.openai.com/v1",
            ws="wss://api.openai.com/v1/realtime",
            host_param="base_url",
            probe=Probe(
                "/models/{model}", "Authorization", "Bearer {key}", fallback_path="/models"
            ),
            probe_moved_host=False,
            docs="https://platform.openai.com/docs/api-reference/models/retrieve",
        ),
        _gemini("realtime", "gemini-live"),
        Provider(
            "realtime",
            "ultravox",
            "ULTRAVOX_API_KEY",
            "https://api.ultravox.ai",
            # Not Pipecat's (its service hard-codes the host): the bot's ultravox builder
            # creates the call at base_url itself (pipecat_bot/realtime.hosted_ultravox).
            host_param="base_url",
            probe=Probe("/api/models", "X-API-Key", listed=_names(("results", "name"))),
            docs="https://docs.ultravox.ai/api-reference/other/models-get",
            notes=("Pipecat's Ultravox service hard-codes https://api.ultravox.ai",),
        ),
    ]
}


def component_label(role: str, name: str, model: str | None) -> str:
    """How checks name a component: ``stt deepgram (nova-3)``."""
    return f"{role} {name}" + (f" ({model})" if model else "")


def provider(role: str, name: str) -> Provider | None:
    """The facts for ``name`` in ``role``, or None (offline engines, unknown names)."""
    return PROVIDERS.get((role, name))


def key_env(role: str, name: str) -> str | None:
    """The API key variable of a provider (None: it needs none, or it is not in the table)."""
    row = provider(role, name)
    return row.key_env if row is not None else None


def key_variables() -> list[str]:
    """Every API key variable of the table, once."""
    return sorted({p.key_env for p in PROVIDERS.values() if p.key_env})


def with_scheme(url: str, default: str = "https") -> str:
    """``url`` with a scheme (Pipecat accepts bare hosts such as ``api.cartesia.ai``)."""
    return url if "://" in url else f"{default}://{url}"


def origin(url: str) -> str:
    """``scheme://host:port`` of a URL, the port always written (so origins compare)."""
    parts = urlsplit(with_scheme(url))
    scheme = parts.scheme.lower()
    port = parts.port or (443 if scheme in ("https", "wss") else 80)
    return f"{scheme}://{(parts.hostname or '').lower()}:{port}"


def rest_of(url: str, keep_path: bool) -> str:
    """The REST base a WebSocket or bare-host URL implies (ws -> http, wss -> https)."""
    parts = urlsplit(with_scheme(url, "wss"))
    scheme = _SCHEMES.get(parts.scheme.lower(), "https")
    path = parts.path.rstrip("/") if keep_path else ""
    return f"{scheme}://{parts.netloc}{path}"


@dataclass(frozen=True)
class Hosts:
    """Where one component's service will connect: the URLs to reach, the REST base to
    probe, and whether that is the provider's own host (``moved``: a param or variable)."""

    urls: tuple[str, ...]
    rest: str
    moved: bool
    source: str  # "default", "param base_url", "env OPENAI_BASE_URL"


def hosts(row: Provider, params: Mapping[str, Any], environ: Mapping[str, str]) -> Hosts:
    """The effective hosts of a component: its param, else the client's variable, else the
    provider's defaults."""
    keep_path = row.openai_compatible or row.provider == "openai-realtime"
    given = params.get(row.host_param) if row.host_param else None
    if isinstance(given, str) and given:
        source, url = f"param {row.host_param}", given
    elif row.host_env and environ.get(row.host_env):
        source, url = f"env {row.host_env}", environ[row.host_env]
    else:
        defaults = tuple(u for u in (row.rest, row.ws) if u)
        return Hosts(defaults, row.rest, moved=False, source="default")
    default_origins = {origin(u) for u in (row.rest, row.ws) if u}
    moved = origin(with_scheme(url, "wss")) not in default_origins
    return Hosts((with_scheme(url, "wss"),), rest_of(url, keep_path), moved, source)


def voice_of(row: Provider, params: Mapping[str, Any]) -> str | None:
    for name in row.voice_params:
        value = params.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def needs_key(row: Provider, where: Hosts) -> bool:
    """A self-hosted OpenAI-compatible server takes any key (the bot sends a placeholder)."""
    return bool(row.key_env) and not (row.openai_compatible and where.moved)
