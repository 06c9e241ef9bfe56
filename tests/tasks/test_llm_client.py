"""The shared chat-completions client: retries, parsing, usage, key handling."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tasks.llm_client import (
    REDACTED,
    ChatClient,
    ChatEndpoint,
    ChatResult,
    EndpointParamsError,
    parse_endpoint_params,
)

KEY_ENV = "EVAFLOW_TEST_CLIENT_KEY"
SECRET = "sk-client-test-secret-value"


def ok_body(message: dict[str, Any], usage: dict[str, int] | None = None) -> dict[str, Any]:
    return {
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": usage or {"prompt_tokens": 11, "completion_tokens": 3},
    }


def client_for(
    handler: Callable[[httpx.Request], httpx.Response], **params: object
) -> tuple[ChatClient, list[float]]:
    sleeps: list[float] = []
    endpoint = ChatEndpoint(base_url="http://llm.test/v1", model="m", **params)  # type: ignore[arg-type]
    client = ChatClient(
        endpoint,
        transport=httpx.MockTransport(handler),
        sleep=sleeps.append,
        rng=random.Random(0),
    )
    return client, sleeps


def ask(client: ChatClient) -> ChatResult:
    return client.complete([{"role": "user", "content": "hi"}])


def test_text_usage_and_request_body() -> None:
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        assert request.url.path == "/v1/chat/completions"
        return httpx.Response(200, json=ok_body({"role": "assistant", "content": "hello"}))

    client, _ = client_for(handler, temperature=0.3, max_tokens=50, extra_body={"seed": 7})
    result = ask(client)

    assert result.error is None and result.text == "hello" and not result.tool_calls
    assert (result.usage.input_tokens, result.usage.output_tokens) == (11, 3)
    assert result.usage.attempts == 1 and result.usage.latency_s > 0 and result.usage.timestamp
    assert client.complete([], model="audio-model").usage.model == "audio-model"
    assert seen[1]["model"] == "audio-model"
    assert seen[0] == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.3,
        "max_tokens": 50,
        "seed": 7,
    }


def test_retryable_statuses_back_off_then_succeed() -> None:
    statuses = iter([429, 502])

    def handler(request: httpx.Request) -> httpx.Response:
        status = next(statuses, 200)
        if status != 200:
            return httpx.Response(status, text="busy")
        return httpx.Response(200, json=ok_body({"role": "assistant", "content": "ok"}))

    client, sleeps = client_for(handler, backoff_base_s=1.0, jitter=0.0, max_retries=3)
    result = ask(client)

    assert result.text == "ok" and result.usage.attempts == 3
    assert sleeps == [1.0, 2.0]


def test_client_errors_are_not_retried() -> None:
    client, sleeps = client_for(lambda r: httpx.Response(400, text="bad request"))
    result = ask(client)

    assert result.error is not None and "HTTP 400" in result.error
    assert result.usage.attempts == 1 and not sleeps


def test_transport_errors_are_retried_and_reported() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    client, sleeps = client_for(handler, max_retries=2, backoff_base_s=0.0)
    result = ask(client)

    assert result.error is not None and "ConnectError" in result.error
    assert result.usage.attempts == 3 and len(sleeps) == 2


def test_tool_calls_and_content_parts_are_parsed() -> None:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": "One "}, {"type": "text", "text": "moment."}],
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}},
            {"type": "function", "function": {"name": "g", "arguments": {"b": 2}}},
        ],
    }
    client, _ = client_for(lambda r: httpx.Response(200, json=ok_body(message)))
    result = ask(client)

    assert result.text == "One moment."
    assert [(c.id, c.name, c.parsed_arguments()) for c in result.tool_calls] == [
        ("c1", "f", {"a": 1}),
        ("call_1", "g", {"b": 2}),
    ]
    history = result.assistant_message()
    assert history["tool_calls"][1]["function"] == {"name": "g", "arguments": '{"b": 2}'}


@pytest.mark.parametrize(
    "body",
    [b"not json", b'{"choices": []}', b'{"choices": [{"message": "text"}]}', b"[1, 2]"],
)
def test_malformed_bodies_are_errors_not_exceptions(body: bytes) -> None:
    client, sleeps = client_for(lambda r: httpx.Response(200, content=body))
    result = ask(client)

    assert result.error is not None and "malformed" in result.error and not sleeps


def test_key_comes_from_env_and_is_scrubbed_from_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)

    def handler(request: httpx.Request) -> httpx.Response:
        # A misbehaving proxy echoing the auth header back in its error text.
        return httpx.Response(401, text=f"bad key {request.headers['Authorization']}")

    client, _ = client_for(handler, api_key_env=KEY_ENV)
    result = ask(client)

    assert result.error is not None and SECRET not in result.error and REDACTED in result.error
    assert SECRET not in result.model_dump_json()


def test_missing_key_env_is_an_error_without_a_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(500)

    client, _ = client_for(handler, api_key_env=KEY_ENV)
    result = ask(client)

    assert result.error is not None and KEY_ENV in result.error and not calls


def test_bad_params_name_fields_and_leave_values_out() -> None:
    with pytest.raises(EndpointParamsError) as info:
        parse_endpoint_params(ChatEndpoint, {"api_key": SECRET, "timeout_s": -1}, "my component")
    text = str(info.value)
    assert text.startswith("my component params:")
    assert "api_key" in text and "timeout_s" in text and "api_key_env" in text
    assert SECRET not in text and "-1" not in text
    assert parse_endpoint_params(ChatEndpoint, None, "x") == ChatEndpoint()
