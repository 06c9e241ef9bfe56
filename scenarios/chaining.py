"""ID chaining: replay a golden trace whose quoted IDs are stale.

ITSM traces were written with counter-style IDs (``REQ-FAC-048271``) while the engine
derives IDs from a content hash (``REQ-FAC-0ddb46f41d67``), so a verbatim replay quotes
IDs the engine never produced. Walking each trace response alongside the response the
engine actually returned gives an old->new map, which is applied to later call params.
The reference agent uses :class:`IdChainer` the same way when it follows a trace.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from pydantic import BaseModel, Field

from scenarios.dbhash import db_hash
from scenarios.executor import ToolEngine
from scenarios.models import Scenario

_WHITESPACE = re.compile(r"\s")
_LETTER = re.compile(r"[A-Za-z]")
_DIGIT = re.compile(r"\d")


def is_identifier(value: Any) -> bool:
    """A generated ID looks like one token mixing letters and digits (not a name or date)."""
    return (
        isinstance(value, str)
        and len(value) >= 3
        and not _WHITESPACE.search(value)
        and bool(_LETTER.search(value))
        and bool(_DIGIT.search(value))
    )


def _strings(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(_strings(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_strings(v) for v in value)) if value else set()
    return set()


def _status(response: Any) -> Any:
    return response.get("status") if isinstance(response, dict) else None


def _parallel_pairs(old: Any, new: Any) -> list[tuple[str, str]]:
    """(old, new) string pairs at the same position of two JSON values."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [pair for k in old if k in new for pair in _parallel_pairs(old[k], new[k])]
    if isinstance(old, list) and isinstance(new, list):
        return [pair for o, n in zip(old, new, strict=False) for pair in _parallel_pairs(o, n)]
    if isinstance(old, str) and isinstance(new, str) and old != new:
        return [(old, new)]
    return []


class IdChainer:
    """Maps IDs quoted by a golden trace to the IDs the engine really produced."""

    def __init__(self) -> None:
        self.mapping: dict[str, str] = {}

    def feed(self, trace_response: Any, actual_response: Any) -> dict[str, str]:
        """Learn from one (trace, actual) response pair; returns the new mappings."""
        if _status(trace_response) != _status(actual_response):
            return {}  # an error answering a success (or vice versa) has no parallel IDs
        produced = _strings(actual_response)
        learned = {
            old: new
            for old, new in _parallel_pairs(trace_response, actual_response)
            # An old value the engine also returned is a real ID, merely moved (e.g. a
            # reordered list), not a stale one.
            if is_identifier(old) and is_identifier(new) and old not in produced
        }
        self.mapping.update(learned)
        return learned

    def apply(self, params: Any) -> Any:
        """Deep copy of ``params`` with every value equal to a stale ID replaced."""
        if isinstance(params, str):
            return self.mapping.get(params, params)
        if isinstance(params, dict):
            return {k: self.apply(v) for k, v in params.items()}
        if isinstance(params, list):
            return [self.apply(v) for v in params]
        return copy.deepcopy(params)


class ReplayedCall(BaseModel):
    index: int = Field(description="0-based position among the trace's tool calls")
    tool: str
    trace_params: dict[str, Any] = Field(description="Params as written in the trace")
    params: dict[str, Any] = Field(description="Params actually sent (after chaining)")
    response: dict[str, Any] = Field(description="Engine response")
    trace_response: dict[str, Any] | None = Field(default=None, description="Trace's response")


class TraceReplay(BaseModel):
    """Result of replaying one scenario's golden trace through a fresh engine."""

    scenario: str = Field(description="Scenario key 'domain/id'")
    calls: list[ReplayedCall] = Field(default_factory=list)
    id_map: dict[str, str] = Field(default_factory=dict, description="Stale ID -> engine ID")
    expected_hash: str = Field(description="Hash of the expected DB")
    final_hash: str | None = Field(default=None, description="Hash of the DB after the replay")
    hash_match: bool = False
    final_db: dict[str, Any] = Field(default_factory=dict, description="DB after the replay")
    error: str | None = Field(default=None, description="Why the replay could not run")


def make_engine(
    domain: str, initial_db: dict[str, Any], tool_names: list[str] | None
) -> ToolEngine | str:
    """A fresh engine, or the reason none can be built (engine missing or broken)."""
    try:
        return ToolEngine(domain, initial_db, tool_names)
    except Exception as exc:  # noqa: BLE001 - an absent/broken engine is reported, not raised
        return f"no tool engine for domain {domain!r}: {type(exc).__name__}: {exc}"


def execute_safely(engine: ToolEngine, tool: str, params: Any) -> dict[str, Any]:
    """Engine response; a programming error in a tool becomes an error response."""
    try:
        return engine.execute(tool, params)
    except Exception as exc:  # noqa: BLE001 - one bad tool must not abort a whole replay
        return {"status": "error", "error_type": "engine_failure", "message": str(exc)}


def replay_trace(scenario: Scenario) -> TraceReplay:
    """Run the resolved ``expected_trace`` tool calls, chaining IDs, and compare hashes."""
    result = TraceReplay(scenario=scenario.key, expected_hash=db_hash(scenario.expected_db))
    engine = make_engine(scenario.domain, scenario.initial_db, scenario.agent.tool_names)
    if isinstance(engine, str):
        result.error = engine
        return result
    chainer = IdChainer()
    pending: ReplayedCall | None = None
    for event in scenario.expected_trace:
        kind = event.get("event_type")
        if kind == "tool_call":
            trace_params = dict(event.get("params") or {})
            params = chainer.apply(trace_params)
            response = execute_safely(engine, str(event.get("tool_name")), params)
            pending = ReplayedCall(
                index=len(result.calls),
                tool=str(event.get("tool_name")),
                trace_params=trace_params,
                params=params,
                response=response,
            )
            result.calls.append(pending)
        elif kind == "tool_response" and pending is not None:
            if event.get("tool_name") == pending.tool:
                pending.trace_response = dict(event.get("response") or {})
                chainer.feed(pending.trace_response, pending.response)
            pending = None
    result.id_map = dict(chainer.mapping)
    result.final_db = engine.db
    result.final_hash = engine.final_hash
    result.hash_match = result.final_hash == result.expected_hash
    return result
