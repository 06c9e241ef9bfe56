"""Hosted voices through LiteLLM's ``speech`` endpoint (OpenAI, ElevenLabs).

LiteLLM is the client, as it is for every chat model (:mod:`tasks.llm_router`): it builds
the provider's request, reads the key from ``os.environ/<KEY_ENV>``, retries rate limits,
5xx and dropped connections with its own backoff (``num_retries``) and maps the answer to
typed errors. This module adds what a caller voice needs: one deployment per engine, model
and base URL (the base URL points LiteLLM at a local stand-in in tests), the audio bytes or
a :class:`TtsError` naming engine, status and the provider's message, and :func:`warm`.

LiteLLM's Router speaks speech only asynchronously (``aspeech``), and its HTTP clients
belong to the event loop they were made on; so every request of the process runs on one
event loop in a daemon thread, and an engine (called from worker threads) waits on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import threading
from collections.abc import Coroutine
from typing import Any

from perturbations.audio import VoiceSpec
from tasks.llm_router import RouterPolicy, router_for
from tasks.model_list import ENV_REF, Deployment
from tasks.voice.providers._common import (
    ATTEMPTS,
    TIMEOUT_S,
    Provider,
    error_message,
    scrubbed,
    status_failure,
    transport_failure,
)
from tasks.voice.tts import TtsError

POLICY = RouterPolicy(num_retries=ATTEMPTS - 1, timeout_s=TIMEOUT_S)
# What a first speech request imports beyond ``import litellm`` and the Router (measured on
# LiteLLM 1.110: the provider's transformation, the OpenAI SDK's audio resources, the
# tokenizer and client set-up its bookkeeping loads). Names that a LiteLLM version lacks
# are skipped: warming is an optimisation, the call itself never depends on it.
FIRST_CALL_MODULES = (
    "httpcore",
    "h11",
    "openai.resources.audio.speech",
    "litellm.llms.elevenlabs.text_to_speech.transformation",
    "litellm.litellm_core_utils.default_encoding",
    "litellm.router_utils.client_initalization_utils",
    "litellm.llms.github_copilot.per_user_auth",
    "litellm.llms.fal_ai.cost_calculator",
    "litellm.llms.fal_ai.chat.transformation",
    "litellm.llms.edenai.chat.transformation",
    "opentelemetry.context",
)


def deployment(provider: Provider, model: str) -> Deployment:
    """The engine's model at its base URL, the key as an environment reference."""
    assert provider.litellm_provider is not None
    return Deployment(
        model_name=f"{provider.engine}-tts/{model}",
        litellm_params={
            "model": f"{provider.litellm_provider}/{model}",
            "api_base": provider.base_url(),
            "api_key": ENV_REF + provider.key_env,
        },
    )


def speech(provider: Provider, model: str, text: str, voice: str, params: dict[str, Any]) -> bytes:
    """The audio bytes LiteLLM's ``aspeech`` returns for ``text``, or a :class:`TtsError`."""
    key = provider.api_key()  # a missing key is named before anything is sent
    target = deployment(provider, model)
    url = provider.base_url()
    try:
        router = router_for([target], POLICY)
        response = _run(router.aspeech(model=target.model_name, input=text, voice=voice, **params))
    except Exception as exc:  # noqa: BLE001 - every LiteLLM failure becomes a TtsError
        raise failure(provider.engine, url, exc, key) from exc
    return bytes(response.content)


def failure(engine: str, url: str, exc: BaseException, key: str | None) -> TtsError:
    """A LiteLLM exception as a TtsError: no answer (connection, timeout) or HTTP status
    plus the provider's own message, and how many attempts the Router made."""
    import litellm

    status = getattr(exc, "status_code", None)
    if isinstance(exc, litellm.APIConnectionError | litellm.Timeout) or not isinstance(status, int):
        return TtsError(scrubbed(str(transport_failure(engine, url, exc)), key))
    retried = getattr(exc, "num_retries", None)
    attempts = 1 + retried if isinstance(retried, int) else 1
    message = scrubbed(provider_text(exc), key)
    return status_failure(engine, url, status, message, attempts)


def provider_text(exc: BaseException) -> str:
    """The provider's message inside a LiteLLM error: LiteLLM writes ``<Provider>Exception
    - <body or message>`` and appends its own retry notes after a blank line."""
    text = str(getattr(exc, "message", None) or exc).split("\n\n")[0]
    _, sep, body = text.partition("Exception - ")
    return error_message((body if sep else text).strip().encode())


def warm(provider: Provider, voice: VoiceSpec) -> None:
    """Pay LiteLLM's one-off costs now, before a call's clock runs: the import (seconds),
    the voice's Router, the event loop thread and the first request's lazy imports. Sends
    nothing. Never raises: a voice that cannot be built fails, as data, at its first turn."""
    try:
        if not os.environ.get(provider.key_env, "").strip():
            return
        model, _ = provider.model_and_voice(voice)
        router_for([deployment(provider, model)], POLICY)
        _loop()
        for name in FIRST_CALL_MODULES:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
    except Exception:  # noqa: BLE001, S110 - warming is an optimisation; the call reports
        pass


class _LoopThread:
    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True, name="tts-litellm").start()


_LOOP: _LoopThread | None = None
_LOOP_LOCK = threading.Lock()


def _loop() -> asyncio.AbstractEventLoop:
    """The process's speech loop (a forked worker starts its own: threads do not fork)."""
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None or _LOOP.pid != os.getpid():
            _LOOP = _LoopThread()
        return _LOOP.loop


def _run(coro: Coroutine[Any, Any, Any]) -> Any:
    # The Router applies POLICY's timeout to each attempt; this only bounds a lost loop.
    bound = TIMEOUT_S * ATTEMPTS * 2 + 30
    return asyncio.run_coroutine_threadsafe(coro, _loop()).result(timeout=bound)
