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
  and a worker that never calls a model must not pay that.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from tasks.model_list import Deployment, is_secret_param, resolve_params

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
    key = json.dumps([entries, policy.model_dump()], sort_keys=True)
    with _ROUTERS_LOCK:
        router = _ROUTERS.get(key)
        if router is None:
            # The cost map shipped with the installed LiteLLM, not today's download: the
            # same costs on every machine, and no network fetch (with retries) at import.
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            from litellm import Router  # slow import: only when a model is called

            router = _ROUTERS[key] = Router(
                model_list=entries,
                num_retries=policy.num_retries,
                timeout=policy.timeout_s,
                # One deployment per judge model is the common case: cooling it down after
                # a few failures would fail every judge call for the cooldown's duration.
                disable_cooldowns=True,
            )
        return router


def import_litellm() -> Any:
    """The ``litellm`` module, set up as :func:`router_for` sets it up (the shipped cost
    map); for calls outside a Router, such as the files API."""
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
    """One chat completion of ``model_name`` through the list's Router (never raises)."""
    started = time.perf_counter()
    call = LLMCall(model_name=model_name)
    try:
        router = router_for(model_list, policy or RouterPolicy())
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
