"""Building the :class:`AttemptRecord` both modes return."""

from __future__ import annotations

import copy
import traceback
from typing import Any

from scenarios.dbhash import db_hash
from scenarios.executor import ToolEngine
from scenarios.models import Scenario
from tasks.records import AttemptRecord, AttemptStatus, EndReason
from tasks.simulate.clocks.entities import entity_records
from tasks.simulate.config import SimulationConfig
from tasks.simulate.tools.gateway import EngineGateway

STATUS_OF_END: dict[str, AttemptStatus] = {
    "goodbye": "ok",
    "transfer": "ok",
    "max_duration": "ok",
    "inactivity_timeout": "ok",
    "agent_timeout": "agent_error",
    "agent_disconnected": "agent_error",
    "protocol_error": "agent_error",
    "harness_error": "infra_error",
    # A provider outage is infrastructure: never scored against the agent (issue 29).
    "provider_error": "infra_error",
}


def new_record(scenario: Scenario, config: SimulationConfig) -> AttemptRecord:
    return AttemptRecord(
        attempt_id=config.attempt_id(scenario.key),
        run_id=config.run_id,
        system=config.system,
        scenario_id=scenario.id,
        domain=scenario.domain,
        condition=config.condition_name,
        trial=config.trial,
        attempt=config.attempt,
        mode=config.mode,
        clock="none" if config.mode == "text" else config.clock,
        initial_db=copy.deepcopy(scenario.initial_db),
        initial_db_hash=db_hash(scenario.initial_db),
        expected_db_hash=db_hash(scenario.expected_db),
    )


def new_gateway(scenario: Scenario, now: Any = None) -> EngineGateway:
    engine = ToolEngine(scenario.domain, scenario.initial_db, scenario.agent.tool_names)
    return EngineGateway(engine, now) if now is not None else EngineGateway(engine)


def finish_record(
    record: AttemptRecord,
    scenario: Scenario,
    gateway: EngineGateway | None,
    end_reason: EndReason,
    error: str | None = None,
) -> AttemptRecord:
    """Fill the outcome: end reason, status, tool calls, final DB, entities."""
    record.end_reason = end_reason
    record.status = STATUS_OF_END[end_reason]
    record.error = error
    if gateway is not None:
        record.tool_calls = list(gateway.calls)
        record.events.extend(gateway.events)
        record.final_db = gateway.engine.db  # the engine is this attempt's alone
        record.final_db_hash = db_hash(gateway.engine.db)
        record.entities = entity_records(scenario, record.tool_calls)
    else:
        record.final_db = copy.deepcopy(record.initial_db)
        record.final_db_hash = record.initial_db_hash
    return record


def harness_failure(
    scenario: Scenario, config: SimulationConfig, exc: BaseException
) -> AttemptRecord:
    """The record of an attempt the harness itself could not run."""
    record = new_record(scenario, config)
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return finish_record(record, scenario, None, "harness_error", error=text)
