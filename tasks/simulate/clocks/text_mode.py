"""Text mode: caller and agent exchange text turns; no audio, no clock."""

from __future__ import annotations

import time

from scenarios.models import Scenario
from tasks.records import AttemptRecord, EndReason, TimelineEvent, TurnRecord
from tasks.simulate.agents import AgentContext, get_agent
from tasks.simulate.callers import build_caller
from tasks.simulate.clocks.record import finish_record, new_gateway, new_record
from tasks.simulate.config import SimulationConfig


def simulate_text(scenario: Scenario, config: SimulationConfig) -> AttemptRecord:
    """One conversation in text mode (turn 0 = agent greeting; turn n = user n + reply n).

    Heard text equals intended text on both sides. Raises only on harness bugs; use
    :func:`tasks.simulate.simulate` for the never-raising entry point.
    """
    started = time.perf_counter()
    record = new_record(scenario, config.model_copy(update={"mode": "text"}))
    gateway = new_gateway(scenario)
    agent = get_agent(config.agent, "text").text_session(
        AgentContext(scenario=scenario, tools=gateway, config=config)
    )
    caller = build_caller(config.caller, scenario, config)
    reply = agent.greet()
    record.turns.append(
        TurnRecord(turn_id=0, role="assistant", intended_text=reply.text, heard_text=reply.text)
    )
    end_reason: EndReason = "max_duration"
    for turn_id in range(1, config.max_turns + 1):
        said = caller.respond(reply.text)
        record.turns.append(
            TurnRecord(turn_id=turn_id, role="user", intended_text=said.text, heard_text=said.text)
        )
        if said.end_call:
            record.caller_ended = True
            record.events.append(TimelineEvent(t_s=0.0, source="caller", kind="end_call"))
            end_reason = "goodbye"
            break
        gateway.turn_id = turn_id
        reply = agent.respond(said.text)
        record.turns.append(
            TurnRecord(
                turn_id=turn_id, role="assistant", intended_text=reply.text, heard_text=reply.text
            )
        )
        if reply.end_call:
            record.events.append(TimelineEvent(t_s=0.0, source="agent", kind="end_call"))
            end_reason = "goodbye"
            break
    record.events.extend(getattr(caller, "events", []))  # e.g. an LLM caller's usage
    finish_record(record, scenario, gateway, end_reason)
    record.wall_s = time.perf_counter() - started
    return record
