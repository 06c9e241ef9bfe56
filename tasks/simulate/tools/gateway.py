"""The harness-owned door to the trial's tools: every agent tool call goes through here.

The harness owns the scenario DB. In-process agents get a :class:`ToolGateway` object;
external agents will reach the same gateway through the tool bridge (HTTP / MCP). Every
call is logged with the turn it happened in and its call-time on the harness clock, so
timing never depends on the agent's own logs.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any, Protocol

from scenarios.executor import ToolEngine
from tasks.records import TimelineEvent, ToolCallRecord


class ToolGateway(Protocol):
    def call(self, name: str, params: dict[str, Any]) -> dict[str, Any]: ...


class EngineGateway:
    """Runs calls on a fresh :class:`ToolEngine` and keeps the call log (thread-safe)."""

    def __init__(self, engine: ToolEngine, now: Callable[[], float] = lambda: 0.0) -> None:
        self.engine = engine
        self.now = now
        self.turn_id = 0
        self.calls: list[ToolCallRecord] = []
        self.events: list[TimelineEvent] = []
        self._lock = threading.Lock()

    def call(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            t_call = self.now()
            try:
                response = self.engine.execute(name, copy.deepcopy(params))
            except Exception as exc:  # noqa: BLE001 - a broken tool is the agent's error data
                response = {"status": "error", "error_type": "engine_failure", "message": str(exc)}
            self._append(name, params, response, t_call, self.now())
            return copy.deepcopy(response)

    def log_call(self, name: str, params: dict[str, Any], response: dict[str, Any]) -> None:
        """Log a call the agent answered without executing it (the cascade's transfer)."""
        with self._lock:
            t_call = self.now()
            self._append(name, params, response, t_call, t_call)

    def _append(
        self,
        name: str,
        params: dict[str, Any],
        response: dict[str, Any],
        t_call: float,
        t_response: float,
    ) -> None:
        # Copies: the agent may mutate what it passed or got back after the call.
        self.calls.append(
            ToolCallRecord(
                index=len(self.calls),
                turn_id=self.turn_id,
                tool_name=name,
                params=copy.deepcopy(params),
                response=copy.deepcopy(response),
                t_call_s=t_call,
                t_response_s=t_response,
            )
        )

    def log_event(self, event: TimelineEvent) -> None:
        """Keep an agent diagnostic event (e.g. LLM usage) for the attempt's timeline."""
        with self._lock:
            self.events.append(event.model_copy(deep=True))
