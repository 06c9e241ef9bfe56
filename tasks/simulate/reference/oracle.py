"""The reference agent's uses of the golden trace's values, marked on the attempt.

The policy (:mod:`tasks.simulate.reference.policy`) takes caller values from what it heard
and IDs from responses it got. What it still takes from the trace as the trace has it is
the agent's own part of the plan: an option of the tool schema's enum the trace's agent
chose (``agent_choice``: a notification type, a rebooking type), or any other value it
neither heard nor received (``trace_value``: a computed amount, a summary it would have
written, a value the caller said in words its recogniser could not place). Each such use
is an ``oracle_value`` event on the attempt's timeline (through the gateway's
``log_event``, the hook agents use for diagnostics), so the stored rows say which call
parameters did not come from the conversation. A value the trace took from a response
this conversation never received is not used at all: the agent gives up (issue 32).
"""

from __future__ import annotations

from typing import Any, Literal

from tasks.records import TimelineEvent

OracleReason = Literal["agent_choice", "trace_value"]
ORACLE_EVENT = "oracle_value"


def oracle_reason(value: Any, enum: list[Any] | None) -> OracleReason:
    """``agent_choice`` for one of the schema's options, else ``trace_value``."""
    return "agent_choice" if enum and value in enum else "trace_value"


def oracle_event(
    tool: str, param: str, value: Any, reason: OracleReason, t_s: float
) -> TimelineEvent:
    return TimelineEvent(
        t_s=t_s,
        source="agent",
        kind=ORACLE_EVENT,
        data={"tool": tool, "param": param, "value": value, "reason": reason},
    )


def log_oracle_uses(tools: Any, tool: str, uses: list[tuple[str, Any, OracleReason]]) -> None:
    """Hand each use to the gateway's ``log_event`` (a gateway without one keeps none)."""
    log = getattr(tools, "log_event", None)
    if log is None:
        return
    now = getattr(tools, "now", None)
    t_s = float(now()) if callable(now) else 0.0
    for param, value, reason in uses:
        log(oracle_event(tool, param, value, reason, t_s))
