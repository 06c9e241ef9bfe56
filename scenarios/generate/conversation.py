"""A golden conversation written turn by turn, its tool calls run by the real engine.

The flow modules script what the caller and the agent say; every tool call goes through
:class:`scenarios.executor.ToolEngine`, so the trace carries the engine's exact responses
and the DB the conversation ends with is, by construction, the expected DB.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from scenarios.executor import ToolEngine

GREETING = "Hello! How can I help you today?"


class GenerationError(RuntimeError):
    """A flow asked for something the world does not support (a generator bug)."""


def _as_json(value: Any) -> Any:
    """The value as it will read back from the JSON file (tuples -> lists and so on)."""
    return json.loads(json.dumps(value, default=str))


class Conversation:
    """Builds ``expected_trace`` events; starts with the agent's greeting."""

    def __init__(self, domain: str, db: dict[str, Any], tool_names: list[str] | None) -> None:
        self.engine = ToolEngine(domain, db, tool_names)
        self.events: list[dict[str, Any]] = []
        # The caller may say goodbye in its last answer and the agent close after it.
        self.agent_closes = False
        self.agent(GREETING)

    def agent(self, text: str) -> None:
        self.events.append({"event_type": "agent_utterance", "utterance": text})

    def user(self, text: str) -> None:
        self.events.append({"event_type": "user_utterance", "utterance": text})

    def call(self, tool: str, expect: str | None = None, **params: Any) -> dict[str, Any]:
        """Run one tool call; it must succeed, or fail with ``expect`` as its error type.

        A flow's script is written for a definite outcome, so any other outcome means the
        world was built wrong and the record must not be written.
        """
        params = _as_json(params)
        response = _as_json(self.engine.execute(tool, copy.deepcopy(params)))
        outcome = response.get("error_type") if response.get("status") == "error" else None
        if outcome != expect:
            raise GenerationError(
                f"{tool}({params}) gave {outcome or 'success'}, expected {expect or 'success'}:"
                f" {response.get('message')}"
            )
        self.events.append({"event_type": "tool_call", "tool_name": tool, "params": params})
        self.events.append(
            {
                "event_type": "tool_response",
                "tool_name": tool,
                "status": response.get("status", ""),
                "response": response,
            }
        )
        return response

    @property
    def db(self) -> dict[str, Any]:
        return self.engine.db

    @property
    def caller_turns(self) -> int:
        return sum(e["event_type"] == "user_utterance" for e in self.events)

    def expected_trace(self) -> dict[str, Any]:
        """The ``ground_truth.expected_trace`` object (spec 1.4)."""
        if self.events[-1]["event_type"] != "user_utterance" and not self.agent_closes:
            raise GenerationError("a conversation must end with the caller's goodbye")
        return {
            "trace": copy.deepcopy(self.events),
            "conversation_ended": True,
            "end_reason": "goodbye",
            "total_events": len(self.events),
            "total_turns": self.caller_turns,
        }
