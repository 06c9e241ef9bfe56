"""Model calls through LiteLLM: one Router per model list and process, failures as data.

LiteLLM is the client (the reference's): it reaches every provider a model list names
(OpenAI, Azure, Anthropic, Bedrock, Vertex, Gemini, any OpenAI-compatible server through
``api_base``), resolves ``os.environ/NAME`` keys, retries (``num_retries``: timeouts,
connection errors, 429, 5xx) with its own backoff, applies the request ``timeout``, and
reports usage and cost. This module adds what a benchmark needs on top:

* nothing raises for a failed call: :class:`LLMCall` carries ``error`` (type and message,
  every key the deployment resolves scrubbed from it), so a judge turns it into a metric
  error;
* LiteLLM is imported on the first call, not with this module: importing it takes seconds,
  and a worker that never calls a model must not pay that;
* :func:`chat` is a conversational turn (the ``llm`` agent and caller): tools, tool
  calls, finish reason and attempts, and :func:`warm` pays the import and the Router
  before a conversation's clock runs, so no turn's latency carries them.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from tasks.model_list import (
    Deployment,
    first_deployment,
    is_secret_param,
    missing_variables,
    resolve_params,
)

MAX_ERROR_CHARS = 400
REDACTED = "***"


class RouterPolicy(BaseModel):
    """How LiteLLM's Router retries and times out (spec 4.1: 5 retries, 480 s)."""

    model_config = {"frozen": True}
    num_retries: int = Field(default=5, ge=0, le=20, description="Retries after the first try")
    timeout_s: float = Field(default=480.0, gt=0, description="Per-request timeout")


class LLMCall(BaseModel):
    """One logical call (all its retries): text or error, usage and cost."""

    model_name: str = Field(description="The model list's model_name called")
    model: str = Field(default="", description="The provider's model id that answered")
    text: str = Field(default="", description="Assistant message content ('' if none)")
    error: str | None = Field(default=None, description="Why no usable response came back")
    input_tokens: int = 0
    output_tokens: int = 0
    input_audio_tokens: int = Field(default=0, description="Audio tokens inside input_tokens")
    cached_input_tokens: int = Field(default=0, description="Cached tokens inside input_tokens")
    cost_usd: float | None = Field(default=None, description="LiteLLM's cost of the response")
    latency_s: float = 0.0
    timestamp: str = ""


_ROUTERS: dict[str, Any] = {}
_ROUTERS_LOCK = threading.Lock()


def router_for(model_list: Sequence[Deployment], policy: RouterPolicy) -> Any:
    """The process's Router of ``model_list`` (one client pool per list and policy: a judge
    is built for every attempt, a Router per judge would leak connections)."""
    entries = [json.loads(d.model_dump_json(exclude_none=True)) for d in model_list]
    key = json.dumps([entries, policy.model_dump(), resolved_digest(model_list)], sort_keys=True)
    with _ROUTERS_LOCK:
        router = _ROUTERS.get(key)
        if router is None:
            # Slow import: only when a model is called.
            router = _ROUTERS[key] = import_litellm().Router(
                model_list=entries,
                num_retries=policy.num_retries,
                timeout=policy.timeout_s,
                # One deployment per judge model is the common case: cooling it down after
                # a few failures would fail every judge call for the cooldown's duration.
                disable_cooldowns=True,
            )
        return router


def resolved_digest(model_list: Sequence[Deployment]) -> str:
    """A digest of what the list's ``os.environ/`` references resolve to now: LiteLLM reads
    them when it builds the Router, so a changed (or newly set) key needs a new Router."""
    resolved = [resolve_params(d, os.environ) for d in model_list]
    text = json.dumps(resolved, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def import_litellm() -> Any:
    """The ``litellm`` module, set up as :func:`router_for` sets it up (the shipped cost
    map); for calls outside a Router, such as the files API. The cost map is the one shipped
    with the installed LiteLLM, not today's download: the same costs on every machine, and
    no network fetch (with retries) at import."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    return litellm


def complete(
    model_list: Sequence[Deployment],
    model_name: str,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any] | None = None,
    policy: RouterPolicy | None = None,
) -> LLMCall:
    """One chat completion of ``model_name`` through the list's Router (never raises). Its
    latency starts once the Router exists: a process's first call imports LiteLLM (seconds),
    which is not the model's time."""
    started = time.perf_counter()
    call = LLMCall(model_name=model_name)
    try:
        router = router_for(model_list, policy or RouterPolicy())
        started = time.perf_counter()
        response = router.completion(
            model=model_name, messages=messages, drop_params=True, **dict(params or {})
        )
        _read_response(call, response)
    except Exception as exc:  # noqa: BLE001 - every failure is data (a metric error)
        call.error = error_text(exc, secrets(model_list, model_name))
    call.latency_s = time.perf_counter() - started
    call.timestamp = datetime.now(UTC).isoformat()
    return call


def _read_response(call: LLMCall, response: Any) -> None:
    choice = response.choices[0]
    content = choice.message.content
    call.text = content if isinstance(content, str) else ""
    call.model = str(getattr(response, "model", "") or "")
    usage = getattr(response, "usage", None)
    call.input_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    call.output_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    details = getattr(usage, "prompt_tokens_details", None)
    call.input_audio_tokens = int(getattr(details, "audio_tokens", 0) or 0)
    call.cached_input_tokens = int(getattr(details, "cached_tokens", 0) or 0)
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost")
    call.cost_usd = float(cost) if isinstance(cost, int | float) else None


def secrets(model_list: Sequence[Deployment], model_name: str) -> list[str]:
    """The key values the calls to ``model_name`` resolve (to scrub from error texts)."""
    found = []
    for deployment in model_list:
        if deployment.model_name != model_name:
            continue
        resolved = resolve_params(deployment, os.environ)
        found += [v for k, v in resolved.items() if is_secret_param(k) and isinstance(v, str)]
    return [s for s in found if len(s) >= 4]


def error_text(exc: BaseException, keys: Sequence[str]) -> str:
    """``Type: message`` on one line, shortened, with every key replaced."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    for key in keys:
        text = text.replace(key, REDACTED)
    return text[:MAX_ERROR_CHARS]


# --------------------------------------------------------------------------- chat with tools


class ToolCall(BaseModel):
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


class ChatCall(LLMCall):
    """A chat turn of the ``llm`` agent or caller: text and/or tool calls, or an error."""

    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    attempts: int = Field(default=0, description="Requests sent, LiteLLM's retries included")

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


WARM_UP_MESSAGES = [{"role": "user", "content": "warm-up"}]


def warm(model_list: Sequence[Deployment], policy: RouterPolicy | None = None) -> None:
    """Pay LiteLLM's one-off costs now, before a conversation's clock runs: the import
    (seconds), the list's Router, and the lazy imports of a first completion (a
    ``mock_response`` call, which sends nothing). Never raises: a list that cannot be
    built fails, as data, at its first real call."""
    try:
        router = router_for(model_list, policy or RouterPolicy())
        import httpcore  # noqa: F401 - the transport the provider client loads on first use

        for name in dict.fromkeys(d.model_name for d in model_list):
            router.completion(model=name, messages=WARM_UP_MESSAGES, mock_response="ok")
    except Exception:  # noqa: BLE001, S110 - warming is an optimisation; the real call reports
        pass


def missing_keys(model_list: Sequence[Deployment], model_name: str) -> list[str]:
    """The unset variables a call to ``model_name``'s first deployment needs."""
    deployment = first_deployment(list(model_list), model_name)
    return missing_variables(deployment, os.environ) if deployment is not None else []


def chat(
    model_list: Sequence[Deployment],
    model_name: str,
    messages: list[dict[str, Any]],
    *,
    tools: Sequence[dict[str, Any]] | None = None,
    tool_choice: str | None = None,
    params: Mapping[str, Any] | None = None,
    policy: RouterPolicy | None = None,
) -> ChatCall:
    """One chat completion that may ask for ``tools`` (never raises). ``latency_s`` is the
    model's: it starts once the Router exists, so building it (LiteLLM's import on a cold
    process) is never counted; a missing key variable is an error without a request."""
    call = ChatCall(model_name=model_name)
    started = time.perf_counter()
    if missing := missing_keys(model_list, model_name):
        noun = "variable" if len(missing) == 1 else "variables"
        verb = "is" if len(missing) == 1 else "are"
        call.error = f"environment {noun} {', '.join(missing)} {verb} not set"
        return _stamped(call, started)
    request = dict(params or {})
    if tools:
        request["tools"] = list(tools)
        if tool_choice:
            request["tool_choice"] = tool_choice
    try:
        router = router_for(model_list, policy or RouterPolicy())
        started = time.perf_counter()
        response = router.completion(
            model=model_name, messages=messages, drop_params=True, **request
        )
        _read_chat_response(call, response)
    except Exception as exc:  # noqa: BLE001 - every failure is data (the turn says so)
        call.error = error_text(exc, secrets(model_list, model_name))
        # LiteLLM marks an error it retried with its retries (exhausted); others were one try.
        call.attempts = int(getattr(exc, "num_retries", 0) or 0) + 1
    return _stamped(call, started)


def _stamped(call: ChatCall, started: float) -> ChatCall:
    call.latency_s = time.perf_counter() - started
    call.timestamp = datetime.now(UTC).isoformat()
    return call


def _read_chat_response(call: ChatCall, response: Any) -> None:
    _read_response(call, response)
    choice = response.choices[0]
    raw_calls = getattr(choice.message, "tool_calls", None) or []
    call.tool_calls = [tool_call(raw, i) for i, raw in enumerate(raw_calls)]
    call.finish_reason = getattr(choice, "finish_reason", None)
    hidden = getattr(response, "_hidden_params", None) or {}
    retries = (hidden.get("additional_headers") or {}).get("x-litellm-attempted-retries")
    call.attempts = (int(retries) if isinstance(retries, int | str) else 0) + 1


def tool_call(raw: Any, index: int) -> ToolCall:
    """One of LiteLLM's tool calls (it mints a missing id and turns an arguments object,
    which some servers send, into its JSON) as a :class:`ToolCall`."""
    function = raw.function
    arguments = function.arguments
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {})
    return ToolCall(
        id=str(raw.id or f"call_{index}"), name=str(function.name or ""), arguments=arguments
    )
