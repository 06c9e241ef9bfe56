"""Rebuild an attempt's record from its stored rows, so it can be judged again.

Pure functions: rows in (as ``tasks.tables`` wrote them), an :class:`AttemptRecord` out.
Audio is stored as WAV bytes; the metrics read files, so the caller writes each track
where it likes (:func:`write_audio`) and passes the paths as ``audio`` refs. Runs stored
before the trials rows carried the DBs get them back from the scenario and a replay of
the stored tool calls (:func:`with_replayed_dbs`), kept only when their hashes match.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tasks.records import (
    AttemptRecord,
    AttemptStatus,
    AudioRef,
    EntityRecord,
    Segment,
    TimelineEvent,
    ToolCallRecord,
    TurnRecord,
)

Row = Mapping[str, Any]


def _value(row: Row, key: str, default: Any = None) -> Any:
    """A cell, with pandas' missing values (None, NaN) as ``default``."""
    value = row.get(key, default)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return default
    return value


def _json(row: Row, key: str, default: Any) -> Any:
    text = _value(row, key)
    return json.loads(text) if text else default


def turn_from_row(row: Row) -> TurnRecord:
    return TurnRecord(
        turn_id=int(row["turn_id"]),
        role=row["role"],
        intended_text=_value(row, "intended_text", ""),
        heard_text=_value(row, "heard_text", ""),
        segments=[Segment(start_s=s, end_s=e) for s, e in _json(row, "segments_json", [])],
        interrupted=bool(_value(row, "interrupted", False)),
        interrupts=bool(_value(row, "interrupts", False)),
        latency_s=_value(row, "latency_s"),
    )


def tool_call_from_row(row: Row) -> ToolCallRecord:
    return ToolCallRecord(
        index=int(row["call_index"]),
        turn_id=int(row["turn_id"]),
        tool_name=row["tool_name"],
        params=_json(row, "params_json", {}),
        response=_json(row, "response_json", {}),
        t_call_s=_value(row, "t_call_s"),
        t_response_s=_value(row, "t_response_s"),
    )


def event_from_row(row: Row) -> TimelineEvent:
    return TimelineEvent(
        t_s=float(row["t_s"]),
        source=row["source"],
        kind=row["kind"],
        data=_json(row, "data_json", {}),
    )


def entity_from_row(row: Row) -> EntityRecord:
    return EntityRecord(
        turn_id=int(row["turn_id"]),
        type=row["type"],
        expected=row["expected"],
        heard=_value(row, "heard"),
        correct=bool(row["correct"]),
    )


def _status_as_simulated(trial: Row) -> AttemptStatus:
    """The status the simulator gave the attempt (validation overwrote the stored one), which
    is what its metrics saw."""
    from tasks.simulate.clocks.record import STATUS_OF_END

    simulated = STATUS_OF_END.get(trial["end_reason"])
    return simulated if simulated is not None else trial["status"]


def rebuild_record(
    trial: Row,
    turns: Sequence[Row] = (),
    tool_calls: Sequence[Row] = (),
    events: Sequence[Row] = (),
    entities: Sequence[Row] = (),
    audio: Sequence[AudioRef] = (),
) -> AttemptRecord:
    """The record of one stored attempt (its ``trials`` row and its rows of the others, in
    stored order). A store written before the DBs were stored rebuilds them empty."""
    return AttemptRecord(
        attempt_id=trial["attempt_id"],
        run_id=trial["run_id"],
        system=trial["system"],
        scenario_id=trial["scenario_id"],
        domain=trial["domain"],
        condition=trial["condition"],
        trial=int(trial["trial"]),
        attempt=int(trial["attempt"]),
        mode=trial["mode"],
        clock=trial["clock"],
        status=_status_as_simulated(trial),
        end_reason=trial["end_reason"],
        error=_value(trial, "error"),
        caller_ended=bool(trial["caller_ended"]),
        duration_s=float(_value(trial, "duration_s", 0.0)),
        wall_s=float(_value(trial, "wall_s", 0.0)),
        turns=[turn_from_row(r) for r in turns],
        tool_calls=[tool_call_from_row(r) for r in tool_calls],
        events=[event_from_row(r) for r in events],
        entities=[entity_from_row(r) for r in entities],
        audio=list(audio),
        initial_db=_json(trial, "initial_db_json", {}),
        final_db=_json(trial, "final_db_json", {}),
        initial_db_hash=_value(trial, "initial_db_hash", ""),
        final_db_hash=_value(trial, "final_db_hash", ""),
        expected_db_hash=_value(trial, "expected_db_hash", ""),
        stage_seconds=_json(trial, "stage_seconds_json", {}),
    )


def write_audio(rows: Sequence[Row], directory: Path) -> list[AudioRef]:
    """Write an attempt's stored tracks to ``directory`` as WAV files; their refs."""
    directory.mkdir(parents=True, exist_ok=True)
    refs = []
    for row in rows:
        path = directory / f"{row['track']}.wav"
        path.write_bytes(row["data"])
        refs.append(
            AudioRef(
                track=row["track"],
                path=str(path),
                sample_rate=int(row["sample_rate"]),
                duration_s=float(row["duration_s"]),
            )
        )
    return refs


def with_replayed_dbs(record: AttemptRecord, scenario: Any) -> AttemptRecord:
    """``record`` with its initial and final DBs from ``scenario`` and a replay of its tool
    calls on the deterministic engine, when stored without them; each kept only if it hashes
    as stored (a call the agent answered without the engine may not replay)."""
    import copy

    from scenarios.dbhash import db_hash
    from scenarios.executor import ToolEngine

    if record.final_db or not record.final_db_hash:
        return record
    if db_hash(scenario.initial_db) != record.initial_db_hash:
        return record
    engine = ToolEngine(scenario.domain, scenario.initial_db, scenario.agent.tool_names)
    for call in record.tool_calls:
        try:
            engine.execute(call.tool_name, copy.deepcopy(call.params))
        except Exception:  # noqa: BLE001 - the run logged the failure as its response
            continue
    record.initial_db = copy.deepcopy(scenario.initial_db)
    if db_hash(engine.db) == record.final_db_hash:
        record.final_db = engine.db
    return record
