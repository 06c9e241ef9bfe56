"""The tool executor: one per trial, owning a private deep copy of the scenario DB."""

from __future__ import annotations

import copy
import traceback
from collections import Counter
from typing import Any

from scenarios.dbhash import db_hash
from scenarios.engines import ToolFn, domain_tools


class ToolEngine:
    """Executes an agent's tool calls against one trial's DB, exactly like the reference.

    It never raises on agent input: unknown tools, bad parameters and exceptions inside
    a tool all come back as structured error responses (spec 2.2).
    """

    def __init__(
        self,
        domain: str,
        initial_db: dict[str, Any],
        tool_names: list[str] | None = None,
    ) -> None:
        self.domain = domain
        self.tools: dict[str, ToolFn] = domain_tools(domain)
        self.allowed = set(tool_names) if tool_names is not None else set(self.tools)
        self.original_db = copy.deepcopy(initial_db)
        self.db: dict[str, Any] = copy.deepcopy(initial_db)
        self.counters: Counter[str] = Counter()

    def reset(self) -> None:
        self.db = copy.deepcopy(self.original_db)
        self.counters.clear()

    def execute(self, tool_name: str, params: Any) -> dict[str, Any]:
        self.counters[tool_name] += 1
        if tool_name not in self.allowed:
            return {
                "status": "error",
                "error_type": "tool_not_found",
                "message": f"Tool '{tool_name}' not found",
            }
        fn = self.tools.get(tool_name)
        if fn is None:
            return {
                "status": "error",
                "error_type": "function_not_found",
                "message": f"Function for tool '{tool_name}' not found",
            }
        if not isinstance(params, dict):
            params = {}
        snapshot = copy.deepcopy(self.db)
        try:
            response = fn(copy.deepcopy(params), self.db, self.counters[tool_name])
        except Exception as exc:  # noqa: BLE001 - agent input must never crash the run
            self.db.clear()
            self.db.update(snapshot)
            return {
                "status": "error",
                "error_type": "execution_error",
                "message": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(limit=3),
            }
        if not isinstance(response, dict) or "status" not in response:
            raise RuntimeError(f"{self.domain}.{tool_name} returned a response without 'status'")
        return response

    @property
    def final_hash(self) -> str:
        return db_hash(self.db)
