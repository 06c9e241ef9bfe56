"""The "brain" every provider stand-in shares: the reference policy replayed over a chat history.

``next_message(scenario, messages)`` returns the next assistant message of an OpenAI
chat-completions conversation. It is stateless: a fresh
:class:`tasks.simulate.reference.policy.ReferencePolicy` is run over the history each time, one
``respond(heard)`` per user message, where ``heard`` is the user message's text - what the
caller said AS TRANSCRIBED by the pipeline under test. The policy's tool calls are answered
from the history's tool messages, in order; the first call the history has not answered
yet becomes the returned ``tool_calls`` message, and a turn that needs no more tools
returns the policy's reply as text. So the golden trace decides WHAT is done, every
caller-supplied value (codes, names, dates) comes from the transcript, and every tool runs
in the harness's engine (through the system's own tool path), never here.

A turn whose tool calls were cut short (the caller spoke before the model went on) sees
the unanswered calls fail with ``not_executed``, as they did for the pipeline.
A stand-in is built around the record(s) it serves; the system under test never forwards
scenario data.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from scenarios.models import Scenario
from scenarios.schema import function_name_map
from tasks.simulate.reference.policy import ReferencePolicy
from tasks.voice.stt import Expectation

NOT_EXECUTED = {
    "status": "error",
    "error_type": "not_executed",
    "message": "the conversation moved on before this tool ran",
}


class _NeedTool(Exception):
    def __init__(self, tool: str, params: dict[str, Any]) -> None:
        super().__init__(tool)
        self.tool, self.params = tool, params


class _ReplayTools:
    """A ToolGateway answering from the history; at the last turn, asks for the next call."""

    def __init__(self) -> None:
        self.results: deque[dict[str, Any]] = deque()
        self.final = False

    def call(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.results:
            return self.results.popleft()
        if self.final:
            raise _NeedTool(name, params)
        return dict(NOT_EXECUTED)


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _result(message: dict[str, Any]) -> dict[str, Any]:
    try:
        value = json.loads(text_of(message))
    except ValueError:
        return {"status": "error", "error_type": "unreadable", "message": text_of(message)}
    return value if isinstance(value, dict) else {"status": "success", "result": value}


def _turns(messages: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(heard text, tool results that followed it) per user message."""
    turns: list[tuple[str, list[dict[str, Any]]]] = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            turns.append((text_of(message), []))
        elif role == "tool" and turns:
            turns[-1][1].append(_result(message))
    return turns


def next_message(scenario: Scenario, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The next assistant message (text, or one tool call) for this history."""
    names = {tool: name for name, tool in function_name_map(scenario.agent).items()}
    tools = _ReplayTools()
    policy = ReferencePolicy(scenario, tools)
    reply = policy.greet()
    turns = _turns(messages)
    answered = sum(m.get("role") == "tool" for m in messages)
    for index, (heard, results) in enumerate(turns):
        tools.results = deque(results)
        tools.final = index == len(turns) - 1
        try:
            reply = policy.respond(heard)
        except _NeedTool as need:
            call = {
                "id": f"call_{answered + 1}",
                "type": "function",
                "function": {
                    "name": names.get(need.tool, need.tool),
                    "arguments": json.dumps(need.params, ensure_ascii=False),
                },
            }
            return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": reply.text}


def expectation_after(scenario: Scenario, messages: list[dict[str, Any]]) -> Expectation:
    """What the caller's next turn should hold after this history's last question, as the
    reference policy that asked it expects (a code of the schema's format after "please
    spell", :func:`tasks.simulate.reference.asking.expectation_for`): a model in a
    realtime session has the conversation and the tool schema; an STT has neither."""
    tools = _ReplayTools()
    policy = ReferencePolicy(scenario, tools)
    policy.greet()
    turns = _turns(messages)
    for index, (heard, results) in enumerate(turns):
        tools.results = deque(results)
        tools.final = index == len(turns) - 1
        try:
            policy.respond(heard)
        except _NeedTool:
            return None  # mid-turn: a tool call is pending, no question asked yet
    return policy.expectation
