"""A small client for any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama,
a LiteLLM proxy): retries with backoff, token usage and latency, tool calls.

Transport failures, 408/409/425/429 and 5xx are retried with exponential backoff
(``base * 2**(attempt-1)`` capped, +-``jitter`` relative); other 4xx and malformed bodies
are returned as errors at once. Nothing here raises for a failed call: the result carries
``error`` so callers can turn a failure into data. The API key is read from the environment
variable named by ``api_key_env`` at call time, sent only as a bearer header, and scrubbed
from every error text, so it never reaches a stored record.
"""

from __future__ import annotations

import json
import os
import random
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import certifi
import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MAX_ERROR_BODY_CHARS = 300
REDACTED = "***"

_ssl_context: ssl.SSLContext | None = None
_ssl_lock = threading.Lock()


def default_ssl_context() -> ssl.SSLContext:
    """One verifying TLS context per process (httpx's default trust store, certifi).

    Building it costs ~0.1 s; httpx would build a new one for every client.
    """
    global _ssl_context
    with _ssl_lock:
        if _ssl_context is None:
            _ssl_context = ssl.create_default_context(cafile=certifi.where())
        return _ssl_context


class ChatEndpoint(BaseModel):
    """Where and how to call a chat-completions endpoint (never holds the key itself)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    base_url: str = Field(default="http://127.0.0.1:8000/v1", description="Endpoint incl. /v1")
    model: str = Field(default="gpt-4o-mini", description="Model name sent in each request")
    api_key_env: str | None = Field(
        default=None, description="Name of the env var holding the API key (none: no auth)"
    )
    temperature: float | None = Field(
        default=0.0, ge=0.0, le=2.0, description="Sampling temperature (None: server default)"
    )
    max_tokens: int | None = Field(default=None, ge=1, description="Completion token cap")
    timeout_s: float = Field(default=60.0, gt=0, description="Per-request timeout")
    max_retries: int = Field(default=3, ge=0, le=20, description="Retries after the first try")
    backoff_base_s: float = Field(default=1.0, ge=0, description="First retry delay")
    backoff_cap_s: float = Field(default=30.0, ge=0, description="Longest retry delay")
    jitter: float = Field(default=0.2, ge=0, le=1, description="Relative +- jitter of backoff")
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="Merged into every request body (e.g. seed, top_p)"
    )


EndpointT = TypeVar("EndpointT", bound=ChatEndpoint)


class EndpointParamsError(ValueError):
    """Bad parameters of an LLM component (names the fields, never echoes their values)."""


def parse_endpoint_params(cls: type[EndpointT], raw: Any, owner: str) -> EndpointT:
    """``cls(**raw)`` with an error that names the fields but leaves out the input values.

    pydantic quotes the offending value, and a user may have put a key where it must not
    be (``api_key: sk-...``); such an error text would be stored with the attempt.
    """
    try:
        return cls.model_validate(dict(raw or {}))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(params)'}: {err['msg']}"
            for err in exc.errors(include_input=False, include_url=False)
        )
        fields = ", ".join(sorted(cls.model_fields))
        raise EndpointParamsError(f"{owner} params: {problems} (valid: {fields})") from None


class ChatUsage(BaseModel):
    """Cost and timing of one logical call (all its HTTP attempts).

    Same fields as ``tasks.judges.base.TokenUsage`` so either converts to the other.
    """

    model: str = Field(description="Model name sent in the request")
    input_tokens: int = Field(default=0, description="usage.prompt_tokens of the response")
    output_tokens: int = Field(default=0, description="usage.completion_tokens of the response")
    attempts: int = Field(default=0, description="HTTP attempts including retries")
    latency_s: float = Field(default=0.0, description="Wall time of the call incl. retries")
    timestamp: str = Field(default="", description="UTC ISO time the call finished")


class ChatToolCall(BaseModel):
    """One function call the model asked for."""

    id: str = Field(description="The call id the tool message must answer")
    name: str = Field(description="Function name as the model wrote it")
    arguments: str = Field(default="{}", description="Arguments as the model wrote them (JSON)")

    def parsed_arguments(self) -> dict[str, Any] | None:
        """The arguments as an object, or None when they are not a JSON object."""
        try:
            value = json.loads(self.arguments or "{}")
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


class ChatResult(BaseModel):
    """What one call produced: text and/or tool calls, or an error; always the usage."""

    text: str = Field(default="", description="Assistant message content ('' if none)")
    tool_calls: list[ChatToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    error: str | None = Field(default=None, description="Why no usable response was obtained")
    usage: ChatUsage

    def assistant_message(self) -> dict[str, Any]:
        """The message to append to the history, in request form."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in self.tool_calls
            ]
        elif message["content"] is None:
            message["content"] = ""
        return message


class MalformedResponseError(ValueError):
    """A 2xx body that is not a chat-completions response."""


class ChatClient:
    """Sync chat-completions client; one keep-alive connection pool, thread-safe.

    ``transport``, ``sleep`` and ``rng`` exist for tests.
    """

    def __init__(
        self,
        endpoint: ChatEndpoint,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.endpoint = endpoint
        self._transport = transport
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._http: httpx.Client | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return self.endpoint.base_url.rstrip("/") + "/chat/completions"

    def close(self) -> None:
        with self._lock:
            if self._http is not None:
                self._http.close()
                self._http = None

    def complete(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: str | None = None,
        model: str | None = None,
    ) -> ChatResult:
        """One chat completion; retries per the module rules; never raises for HTTP trouble.

        ``model`` overrides the endpoint's model for this call (e.g. a judge's audio model).
        """
        started = time.perf_counter()
        usage = ChatUsage(model=model or self.endpoint.model)
        key, missing = api_key(self.endpoint.api_key_env)
        if missing:
            return _finish(ChatResult(error=missing, usage=usage), started)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        body = self.request_body(messages, tools=tools, tool_choice=tool_choice)
        body["model"] = usage.model
        error = "no attempt made"
        for attempt in range(1, self.endpoint.max_retries + 2):
            usage.attempts = attempt
            error, retry, result = self._attempt(body, headers, usage)
            if result is not None:
                return _finish(result, started)
            if not retry or attempt > self.endpoint.max_retries:
                break
            self._sleep(self.backoff(attempt))
        text = f"chat request failed after {usage.attempts} attempt(s): {error}"
        return _finish(ChatResult(error=redact(text, key), usage=usage), started)

    def request_body(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: str | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.endpoint.model, "messages": list(messages)}
        if self.endpoint.temperature is not None:
            body["temperature"] = self.endpoint.temperature
        if self.endpoint.max_tokens:
            body["max_tokens"] = self.endpoint.max_tokens
        if tools:
            body["tools"] = list(tools)
            if tool_choice:
                body["tool_choice"] = tool_choice
        return {**body, **self.endpoint.extra_body}

    def backoff(self, attempt: int) -> float:
        """Delay before retry number ``attempt`` (1-based)."""
        ep = self.endpoint
        delay = min(ep.backoff_cap_s, ep.backoff_base_s * 2 ** (attempt - 1))
        return max(0.0, delay * (1 + self._rng.uniform(-ep.jitter, ep.jitter)))

    def _client(self) -> httpx.Client:
        with self._lock:
            if self._http is None:
                self._http = httpx.Client(
                    timeout=self.endpoint.timeout_s,
                    transport=self._transport,
                    verify=default_ssl_context(),
                )
            return self._http

    def _attempt(
        self, body: dict[str, Any], headers: dict[str, str], usage: ChatUsage
    ) -> tuple[str, bool, ChatResult | None]:
        """(error, retryable, result): result is set when the call is over (good or not)."""
        try:
            response = self._client().post(self.url, json=body, headers=headers)
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            return f"{type(exc).__name__}: {exc}", True, None
        if response.status_code >= 400:
            error = f"HTTP {response.status_code}: {response.text[:MAX_ERROR_BODY_CHARS]}"
            return error, response.status_code in RETRY_STATUS, None
        try:
            return "", False, parse_response(response.content, usage)
        except MalformedResponseError as exc:
            return f"malformed chat-completions response: {exc}", False, None


def api_key(env: str | None) -> tuple[str | None, str | None]:
    """(key, error): the key from the named env var; an error text when it is unset."""
    if not env:
        return None, None
    key = os.environ.get(env)
    if not key:
        return None, f"environment variable {env} (api_key_env) is not set"
    return key, None


def redact(text: str, key: str | None) -> str:
    """``text`` with the key (if any) replaced - servers sometimes echo the auth header."""
    return text.replace(key, REDACTED) if key else text


def parse_response(content: bytes, usage: ChatUsage) -> ChatResult:
    """A chat-completions body as a :class:`ChatResult` (raises MalformedResponseError)."""
    try:
        payload = json.loads(content)
        choice = payload["choices"][0]
        message = choice["message"]
        if not isinstance(message, dict):
            raise TypeError("message is not an object")
        calls = [_tool_call(raw, i) for i, raw in enumerate(message.get("tool_calls") or [])]
        text = _content_text(message.get("content"))
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise MalformedResponseError(f"{type(exc).__name__}: {str(exc)[:200]}") from exc
    counts = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    usage.input_tokens = _int(counts.get("prompt_tokens"))
    usage.output_tokens = _int(counts.get("completion_tokens"))
    return ChatResult(
        text=text,
        tool_calls=calls,
        finish_reason=choice.get("finish_reason"),
        usage=usage,
    )


def _tool_call(raw: Any, index: int) -> ChatToolCall:
    function = raw["function"]
    name = function["name"]
    if not isinstance(name, str) or not name:
        raise TypeError(f"tool call {index} has no function name")
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        # Some servers send an object instead of a JSON string.
        arguments = json.dumps(arguments if arguments is not None else {})
    call_id = raw.get("id") or f"call_{index}"
    return ChatToolCall(id=str(call_id), name=name, arguments=arguments)


def _content_text(content: Any) -> str:
    """Message content as text: a string, or the text parts of a content-part list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        return "".join(p for p in parts if isinstance(p, str))
    raise TypeError(f"message content of type {type(content).__name__}")


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _finish(result: ChatResult, started: float) -> ChatResult:
    result.usage.latency_s = time.perf_counter() - started
    result.usage.timestamp = datetime.now(UTC).isoformat()
    return result
