"""The Anthropic Messages stand-in (:mod:`tasks.systems.standins.anthropic`): its conversion
to and from the brain's OpenAI chat history, the raw wire (headers, named SSE events), the
official ``anthropic`` SDK (installed in ``.venv-pipecat`` only, so driven there), and
Pipecat's ``AnthropicLLMService`` built by the catalogue's path for
``ink-whisper+haiku-4.5+sonic-3`` (``claude-haiku-4-5``). Pipecat's service takes no base
URL; its ``AsyncAnthropic`` client reads ``ANTHROPIC_BASE_URL``, which points it here."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tasks.systems.catalogue import load_catalogue, to_system_spec
from tasks.systems.standins.anthropic import FakeAnthropic, content_blocks, openai_history
from tests.tasks.systems.standins.pipecat_driver import require_pipecat, run_in_pipecat
from tests.tasks.systems.standins.test_openai_http import (
    LLM_SCRIPT,
    QUESTION,
    check_llm_exchange,
)
from tests.tasks.systems.standins.test_openai_realtime import scripted_brain

HEADERS = {"x-api-key": "test-key", "anthropic-version": "2023-06-01"}
TOOLS = [{"name": "lookup", "description": "look up", "input_schema": {"type": "object"}}]


def test_a_pipecat_shaped_request_becomes_the_openai_history() -> None:
    """The shapes Pipecat's Anthropic adapter sends: system as text blocks, consecutive
    messages merged (tool results and the caller's next words in one user message)."""
    body = {
        "system": [{"type": "text", "text": "You are an agent.", "cache_control": {}}],
        "messages": [
            {"role": "user", "content": "my code is a b c"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me check."},
                    {"type": "tool_use", "id": "toolu_1", "name": "find", "input": {"c": "abc"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [{"type": "text", "text": '{"status": "success"}'}],
                    },
                    {"type": "text", "text": "and my name is"},
                    {"type": "text", "text": "smith"},
                ],
            },
        ],
    }
    assert openai_history(body) == [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "my code is a b c"},
        {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [
                {
                    "id": "toolu_1",
                    "type": "function",
                    "function": {"name": "find", "arguments": '{"c": "abc"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_1", "content": '{"status": "success"}'},
        {"role": "user", "content": "and my name is smith"},
    ]


def test_the_brains_tool_call_becomes_a_tool_use_block() -> None:
    call: dict[str, Any] = {"id": "call_1", "type": "function"}
    call["function"] = {"name": "find", "arguments": '{"code": "ABC123"}'}
    blocks = content_blocks({"role": "assistant", "content": None, "tool_calls": [call]})
    assert [(b["type"], b["name"], b["input"]) for b in blocks] == [
        ("tool_use", "find", {"code": "ABC123"})
    ]
    assert blocks[0]["id"].startswith("toolu_")
    assert content_blocks({"role": "assistant", "content": "Hi."}) == [
        {"type": "text", "text": "Hi."}
    ]


def sse_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_raw_wire_headers_errors_and_named_events() -> None:
    body = {"model": "claude-haiku-4-5", "max_tokens": 64, "tools": TOOLS, "stream": True}
    body["messages"] = [{"role": "user", "content": QUESTION}]
    with FakeAnthropic(scripted_brain, models=["claude-haiku-4-5"]) as fake:
        url = f"{fake.base_url}/v1/messages"
        streamed = httpx.post(url, json=body, headers=HEADERS)
        no_key = httpx.post(url, json=body, headers={"anthropic-version": "2023-06-01"})
        rejected = httpx.post(url, json=body, headers={**HEADERS, "x-api-key": "reject"})
        no_version = httpx.post(url, json=body, headers={"x-api-key": "k"})
        no_tools = httpx.post(url, json={**body, "tools": []}, headers=HEADERS)
        unknown = httpx.get(f"{fake.base_url}/v1/models/claude-x", headers=HEADERS)
    assert streamed.headers["content-type"].startswith("text/event-stream")
    assert streamed.headers["request-id"].startswith("req_")
    events = sse_events(streamed.text)
    assert [name == data["type"] for name, data in events] == [True] * len(events)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "ping",
        *["content_block_delta"] * (len(events) - 6),
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start = events[1][1]["content_block"]
    assert (start["type"], start["name"], start["input"]) == ("tool_use", "lookup", {})
    deltas = [data["delta"] for name, data in events if name == "content_block_delta"]
    assert len(deltas) > 1 and all(d["type"] == "input_json_delta" for d in deltas)
    assert json.loads("".join(d["partial_json"] for d in deltas)) == {"heard": QUESTION}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert events[-2][1]["usage"]["output_tokens"] > 0
    assert events[0][1]["message"]["usage"]["input_tokens"] > 0
    for response, status, kind in [
        (no_key, 401, "authentication_error"),
        (rejected, 401, "authentication_error"),
        (no_version, 400, "invalid_request_error"),
        (no_tools, 400, "invalid_request_error"),
        (unknown, 404, "not_found_error"),
    ]:
        assert response.status_code == status, response.text
        assert response.json()["type"] == "error"
        assert response.json()["error"]["type"] == kind


SDK_SCRIPT = r"""
import json, anthropic

client = anthropic.Anthropic(max_retries=0)
tools = [{"name": "lookup", "description": "look up", "input_schema": {"type": "object"}}]
user = {"role": "user", "content": "What is the weather in Boston"}
called = client.messages.create(
    model="claude-haiku-4-5", max_tokens=64, system="You are a test agent.",
    messages=[user], tools=tools,
)
use = called.content[0]
result = {"type": "tool_result", "tool_use_id": use.id, "content": '{"answer": "sunny"}'}
history = [user, {"role": "assistant", "content": [use.model_dump()]},
           {"role": "user", "content": [result]}]
with client.messages.stream(
    model="claude-haiku-4-5", max_tokens=64, messages=history, tools=tools
) as stream:
    kinds = [event.type for event in stream]
    final = stream.get_final_message()
out = {
    "called": called.model_dump(mode="json"),
    "kinds": kinds,
    "final": final.model_dump(mode="json"),
    "model": client.models.retrieve("claude-haiku-4-5").id,
}
try:
    anthropic.Anthropic(api_key="reject", max_retries=0).models.retrieve("claude-haiku-4-5")
except anthropic.AuthenticationError as exc:
    out["rejected"] = exc.body
print(json.dumps(out))
"""


def test_anthropic_sdk_tool_use_then_streamed_text() -> None:
    require_pipecat()
    with FakeAnthropic(scripted_brain) as fake:
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test-key"}
        out = run_in_pipecat(SDK_SCRIPT, env=env)
    called = out["called"]
    assert called["stop_reason"] == "tool_use"
    assert [(b["type"], b["name"], b["input"]) for b in called["content"]] == [
        ("tool_use", "lookup", {"heard": QUESTION})
    ]
    assert called["usage"]["input_tokens"] > 0 and called["usage"]["output_tokens"] > 0
    assert out["kinds"][0] == "message_start" and out["kinds"][-1] == "message_stop"
    assert "text" in out["kinds"]  # the SDK's own event for each text_delta
    final = [(b["type"], b["text"]) for b in out["final"]["content"]]
    assert final == [("text", "The answer is sunny.")]
    assert out["final"]["stop_reason"] == "end_turn"
    assert out["model"] == "claude-haiku-4-5"
    assert out["rejected"]["error"]["type"] == "authentication_error"
    # The stand-in heard the tool result as a tool message of the brain's history.
    assert openai_history(fake.requests[-1])[-1] == {
        "role": "tool",
        "tool_call_id": called["content"][0]["id"],
        "content": '{"answer": "sunny"}',
    }


def test_pipecat_anthropic_llm_service_of_the_catalogue() -> None:
    require_pipecat()
    entry = load_catalogue().get("ink-whisper+haiku-4.5+sonic-3")
    component = to_system_spec(entry, {}).params["components"]["llm"]
    assert component == {"provider": "anthropic", "model": "claude-haiku-4-5", "params": {}}
    with FakeAnthropic(scripted_brain) as fake:
        env = {
            "STANDIN_COMPONENTS": json.dumps([component]),
            "STANDIN_QUESTION": QUESTION,
            "ANTHROPIC_BASE_URL": fake.base_url,
            "ANTHROPIC_API_KEY": "placeholder-key",
        }
        [result] = run_in_pipecat(LLM_SCRIPT, env=env)
    assert result["service"] == "AnthropicLLMService"
    check_llm_exchange(result)
    first, second = fake.requests
    assert first["model"] == second["model"] == "claude-haiku-4-5" and first["stream"]
    assert first["system"] == "You are a test agent."
    assert [t["name"] for t in first["tools"]] == ["lookup"]
    assert [m["role"] for m in openai_history(second)] == [
        "system",
        "user",
        "assistant",
        "tool",
    ]
    assert fake.headers[0]["x-api-key"] == "placeholder-key"
    assert fake.headers[0]["anthropic-version"]


def test_pipecat_anthropic_llm_service_reports_each_injected_fault() -> None:
    """Each fault key reaches Pipecat's bot as an ``ErrorFrame`` naming it, no tool call."""
    require_pipecat()
    component = {"provider": "anthropic", "model": "claude-haiku-4-5", "params": {}}
    with FakeAnthropic(scripted_brain) as fake:
        env = {
            "STANDIN_COMPONENTS": json.dumps([component]),
            "STANDIN_QUESTION": QUESTION,
            "STANDIN_KEYS": json.dumps(["reject", "ratelimit", "malformed", "drop"]),
            "ANTHROPIC_BASE_URL": fake.base_url,
        }
        results = run_in_pipecat(LLM_SCRIPT, env=env)
    errors = {r["key"]: " ".join(r["first"]["errors"]) for r in results}
    assert all(not r["first"]["calls"] and "second" not in r for r in results), results
    assert "401" in errors["reject"] and "authentication_error" in errors["reject"], errors
    assert "429" in errors["ratelimit"] and "rate_limit_error" in errors["ratelimit"], errors
    assert "Expecting" in errors["malformed"], errors  # the JSON decoder's complaint
    assert "peer closed connection" in errors["drop"], errors
    assert not fake.requests
