"""Chat turns through LiteLLM (:func:`tasks.llm_router.chat`, :func:`~tasks.llm_router.warm`):
tools and tool calls, usage, retries, failures as data, keys from the environment. Against
the local chat-completions server of ``tests.fake_llm`` over real HTTP on loopback, reached
through a deployment's ``api_base`` as LiteLLM reaches any OpenAI-compatible endpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tasks.llm_chat import endpoint_deployment
from tasks.llm_router import REDACTED, ChatCall, RouterPolicy, chat
from tasks.model_list import Deployment
from tests.fake_llm import (
    FakeChatServer,
    FakeResponse,
    completion,
    fake_llm_fixture,  # noqa: F401 - registers the fake_llm fixture
    text_reply,
    tool_reply,
)

KEY_ENV = "EVAFLOW_TEST_ROUTER_KEY"
SECRET = "sk-router-test-secret-value"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look something up.",
            "parameters": {"type": "object", "properties": {"code": {"type": "string"}}},
        },
    }
]
HI = [{"role": "user", "content": "hi"}]


def models(server: FakeChatServer, key_env: str | None = None) -> list[Deployment]:
    return [endpoint_deployment("m", server.base_url, key_env)]


def ask(server: FakeChatServer, retries: int = 0, **kwargs: Any) -> ChatCall:
    policy = RouterPolicy(num_retries=retries, timeout_s=10)
    return chat(models(server, kwargs.pop("key_env", None)), "m", HI, policy=policy, **kwargs)


def header(server: FakeChatServer, name: str, index: int = -1) -> str | None:
    return {k.lower(): v for k, v in server.requests[index].headers.items()}.get(name)


def test_tools_params_usage_and_tool_calls(fake_llm: FakeChatServer) -> None:
    fake_llm.push(tool_reply([("lookup", {"code": "ZK3"}), ("lookup", "{oops")], text="Hold on."))
    params = {"temperature": 0.3, "max_tokens": 50, "extra_body": {"top_k": 7}, "seed": 3}
    call = ask(fake_llm, tools=TOOLS, tool_choice="auto", params=params)

    body = fake_llm.requests[0].body
    assert body["model"] == "m" and body["messages"] == HI
    assert (body["tools"], body["tool_choice"]) == (TOOLS, "auto")
    assert (body["temperature"], body["max_tokens"], body["top_k"], body["seed"]) == (
        0.3,
        50,
        7,
        3,
    )
    assert call.error is None and call.text == "Hold on." and call.finish_reason == "tool_calls"
    assert [(c.name, c.parsed_arguments()) for c in call.tool_calls] == [
        ("lookup", {"code": "ZK3"}),
        ("lookup", None),  # not a JSON object: the agent answers it without running it
    ]
    assert (call.input_tokens, call.output_tokens, call.attempts) == (120, 20, 1)
    assert call.latency_s > 0 and call.timestamp and call.model == "fake-model"
    assert call.cost_usd is None or call.cost_usd >= 0  # LiteLLM's own figure
    message = call.assistant_message()
    assert message["content"] == "Hold on."
    assert [t["id"] for t in message["tool_calls"]] == [c.id for c in call.tool_calls]


def test_tool_choice_goes_only_with_tools_and_a_text_answer_has_none(
    fake_llm: FakeChatServer,
) -> None:
    fake_llm.push(text_reply("Hello."))
    call = ask(fake_llm, tool_choice="none")

    assert "tools" not in fake_llm.requests[0].body
    assert "tool_choice" not in fake_llm.requests[0].body
    assert call.text == "Hello." and not call.tool_calls and call.finish_reason == "stop"
    assert call.assistant_message() == {"role": "assistant", "content": "Hello."}


@pytest.mark.filterwarnings("ignore::UserWarning")  # LiteLLM's serializer, on the object
def test_an_arguments_object_and_a_missing_id_still_make_tool_calls(
    fake_llm: FakeChatServer,
) -> None:
    """Some servers send arguments as an object and no call id; the tool message still
    needs a JSON string and an id to answer."""
    raw = {"type": "function", "function": {"name": "lookup", "arguments": {"code": "A1"}}}
    fake_llm.push(completion({"role": "assistant", "content": None, "tool_calls": [raw]}))
    (tool,) = ask(fake_llm, tools=TOOLS).tool_calls

    assert tool.parsed_arguments() == {"code": "A1"} and tool.id


def test_a_server_error_is_retried_by_litellm(fake_llm: FakeChatServer) -> None:
    fake_llm.push(FakeResponse(502, {"error": "bad gateway"}), text_reply("ok"))
    call = ask(fake_llm, retries=2)

    assert call.error is None and call.text == "ok"
    assert call.attempts == 2 == len(fake_llm.requests)


def test_a_client_error_is_not_retried(fake_llm: FakeChatServer) -> None:
    fake_llm.fallback = FakeResponse(400, {"error": {"message": "bad request"}})
    call = ask(fake_llm, retries=3)

    assert call.error is not None and call.error.startswith("BadRequestError")
    assert "bad request" in call.error
    assert call.attempts == 1 == len(fake_llm.requests)


def test_retries_spent_leave_an_error_with_the_attempts(fake_llm: FakeChatServer) -> None:
    fake_llm.fallback = FakeResponse(503, {"error": "down"})
    call = ask(fake_llm, retries=1)

    assert call.error is not None and "ServiceUnavailableError" in call.error
    assert call.attempts == 2 == len(fake_llm.requests)


def test_an_unreachable_endpoint_is_an_error_not_an_exception() -> None:
    deployments = [endpoint_deployment("m", "http://127.0.0.1:9/v1", None)]
    call = chat(deployments, "m", HI, policy=RouterPolicy(num_retries=0, timeout_s=5))

    assert call.error is not None and "Connection error" in call.error and not call.text


@pytest.mark.filterwarnings("ignore::UserWarning")  # LiteLLM's serializer, on the garbage
@pytest.mark.parametrize(
    "body",
    [b"not json", b'{"choices": []}', b'{"choices": [{"message": "text"}]}', b"[1, 2]"],
)
def test_malformed_bodies_are_errors_not_exceptions(fake_llm: FakeChatServer, body: bytes) -> None:
    fake_llm.fallback = FakeResponse(200, body)
    call = ask(fake_llm)

    assert call.error and not call.text and not call.tool_calls


def test_the_key_comes_from_the_environment_and_is_scrubbed_from_errors(
    fake_llm: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    # A misbehaving proxy echoing the key in its error text.
    fake_llm.push(FakeResponse(401, {"error": {"message": f"Incorrect API key {SECRET}"}}))
    call = ask(fake_llm, key_env=KEY_ENV)

    assert header(fake_llm, "authorization") == f"Bearer {SECRET}"
    assert call.error is not None and call.error.startswith("AuthenticationError")
    assert SECRET not in call.model_dump_json() and REDACTED in call.error


def test_a_missing_key_variable_is_an_error_without_a_request(
    fake_llm: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    call = ask(fake_llm, key_env=KEY_ENV)

    assert call.error == f"environment variable {KEY_ENV} is not set"
    assert call.attempts == 0 and not fake_llm.requests


def test_a_changed_key_is_used_at_once(
    fake_llm: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LiteLLM reads ``os.environ/`` keys when it builds a Router: a Router built before a
    key was set or rotated must not be reused with the old one."""
    fake_llm.fallback = text_reply("ok")
    for key in ("sk-first-key", "sk-second-key"):
        monkeypatch.setenv(KEY_ENV, key)
        assert ask(fake_llm, key_env=KEY_ENV).error is None
        assert header(fake_llm, "authorization") == f"Bearer {key}"


def test_an_endpoint_without_a_key_variable_gets_a_placeholder(fake_llm: FakeChatServer) -> None:
    """OpenAI's client sends no request without some key; a local server needs none."""
    fake_llm.push(text_reply("ok"))
    assert ask(fake_llm).error is None
    assert header(fake_llm, "authorization") == "Bearer no-key"


COLD_PROCESS = """
import json, sys, time
from tasks.llm_chat import endpoint_deployment
from tasks.llm_router import chat, warm

deployments = [endpoint_deployment("m", sys.argv[1], None)]
cold = "litellm" not in sys.modules
if sys.argv[2] == "warm":
    started = time.perf_counter()
    warm(deployments)
    warm_s = time.perf_counter() - started
else:
    warm_s = 0.0
started = time.perf_counter()
call = chat(deployments, "m", [{"role": "user", "content": "hi"}])
print(json.dumps({"cold": cold, "warm_s": warm_s, "wall_s": time.perf_counter() - started,
                  "latency_s": call.latency_s, "error": call.error}))
"""


def cold_run(server: FakeChatServer, mode: str) -> dict[str, Any]:
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", COLD_PROCESS, server.base_url, mode],
        capture_output=True,
        text=True,
        check=True,
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
        timeout=120,
    )
    seen: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["cold"] and seen["error"] is None, seen
    return seen


def test_warming_pays_the_import_before_the_call(fake_llm: FakeChatServer) -> None:
    fake_llm.fallback = text_reply("ok")
    seen = cold_run(fake_llm, "warm")
    assert seen["warm_s"] > 0.3, seen
    assert seen["wall_s"] < seen["warm_s"] / 3, seen  # the call itself: no import, no Router


def test_a_cold_call_does_not_count_the_import_as_latency(fake_llm: FakeChatServer) -> None:
    fake_llm.fallback = text_reply("ok")
    seen = cold_run(fake_llm, "cold")
    assert seen["wall_s"] > 0.3, seen  # this call paid the import ...
    assert seen["latency_s"] < seen["wall_s"] / 3, seen  # ... and did not call it latency
