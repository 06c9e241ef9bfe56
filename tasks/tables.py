"""Explicit Arrow schemas of the stored tables and the conversion from records to rows.

Every table carries ``run_id`` and ``batch``: a batch is the unit of atomic commit (see
``tasks.store``). Nested data (params, responses, details) is stored as JSON text so
DuckDB users can reach into it with ``->>``.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from tasks.records import AttemptRecord, MetricScore

TABLE_ORDER = ("runs", "turns", "tool_calls", "events", "entities", "metrics", "audio", "trials")
"""Write order inside a batch: ``trials`` last, because its part file is the commit marker."""

_KEY = [("run_id", pa.string()), ("batch", pa.string()), ("attempt_id", pa.string())]

SCHEMAS: dict[str, pa.Schema] = {
    "runs": pa.schema(
        [
            ("run_id", pa.string()),
            ("batch", pa.string()),
            ("created_at", pa.string()),
            ("evaflow_version", pa.string()),
            ("config_json", pa.string()),
            ("specs_json", pa.string()),
            # Added column (older runs read it as null): the run ran against local
            # stand-ins of the providers (evaflow run --rehearse), not the providers.
            ("rehearsal", pa.bool_()),
            # Added columns (older runs read them as null): the price table the run was
            # costed with (tasks.costs.prices): its version (content hash @ newest as_of)
            # and its rows as JSON, read back by the ``prices`` view.
            ("price_table_version", pa.string()),
            ("price_table_json", pa.string()),
        ]
    ),
    "trials": pa.schema(
        _KEY
        + [
            ("trial_key", pa.string()),
            ("system", pa.string()),
            ("scenario_id", pa.string()),
            ("domain", pa.string()),
            ("condition", pa.string()),
            ("trial", pa.int32()),
            ("attempt", pa.int32()),
            ("final", pa.bool_()),
            ("status", pa.string()),
            ("end_reason", pa.string()),
            ("error", pa.string()),
            ("valid", pa.bool_()),
            ("validation_reason", pa.string()),
            ("failed_metrics", pa.string()),
            ("mode", pa.string()),
            ("clock", pa.string()),
            ("caller_ended", pa.bool_()),
            ("duration_s", pa.float64()),
            ("wall_s", pa.float64()),
            ("n_turns", pa.int32()),
            ("n_tool_calls", pa.int32()),
            ("initial_db_hash", pa.string()),
            ("final_db_hash", pa.string()),
            ("expected_db_hash", pa.string()),
            ("stage_seconds_json", pa.string()),
            # Added column (older runs read it as null): the pipeline the attempt was
            # scored as, cascade / audio_llm / s2s (tasks.systems.spec.pipeline_of); null
            # when it was not scored.
            ("pipeline", pa.string()),
            # Added column (older runs read it as null): the attempt ran against local
            # stand-ins of the providers (a rehearsal), not the providers.
            ("rehearsal", pa.bool_()),
            # Added column (older runs read it as null): the agent was served the whole
            # resolved scenario, expected DB included (share_scenario; a scenario_shared
            # event), so its scores are not those of an agent under test.
            ("scenario_shared", pa.bool_()),
            # Added columns (older runs read them as null): the scenario DB before and
            # after the call, so a stored attempt can be judged again (evaflow score).
            ("initial_db_json", pa.string()),
            ("final_db_json", pa.string()),
        ]
    ),
    "turns": pa.schema(
        _KEY
        + [
            ("turn_id", pa.int32()),
            ("role", pa.string()),
            ("intended_text", pa.string()),
            ("heard_text", pa.string()),
            ("start_s", pa.float64()),
            ("end_s", pa.float64()),
            ("latency_s", pa.float64()),
            ("interrupted", pa.bool_()),
            ("interrupts", pa.bool_()),
            ("segments_json", pa.string()),
        ]
    ),
    "tool_calls": pa.schema(
        _KEY
        + [
            ("call_index", pa.int32()),
            ("turn_id", pa.int32()),
            ("tool_name", pa.string()),
            ("params_json", pa.string()),
            ("response_json", pa.string()),
            ("status", pa.string()),
            ("error_type", pa.string()),
            ("t_call_s", pa.float64()),
            ("t_response_s", pa.float64()),
        ]
    ),
    "events": pa.schema(
        _KEY
        + [
            ("t_s", pa.float64()),
            ("source", pa.string()),
            ("kind", pa.string()),
            ("data_json", pa.string()),
        ]
    ),
    "entities": pa.schema(
        _KEY
        + [
            ("turn_id", pa.int32()),
            ("type", pa.string()),
            ("expected", pa.string()),
            ("heard", pa.string()),
            ("correct", pa.bool_()),
        ]
    ),
    "metrics": pa.schema(
        _KEY
        + [
            ("metric", pa.string()),
            ("parent", pa.string()),
            ("score", pa.float64()),
            ("normalized_score", pa.float64()),
            ("passed", pa.bool_()),
            ("threshold", pa.float64()),
            ("skipped", pa.bool_()),
            ("error", pa.string()),
            ("version", pa.string()),
            ("judge", pa.string()),
            ("prompt_hash", pa.string()),
            ("details_json", pa.string()),
            # Added columns (older runs read them as null = the run's own scoring): which
            # scoring a row belongs to ("run", or the name given to evaflow score) and
            # when a re-scoring was made; views show each metric's latest (tasks.scorings).
            ("scoring", pa.string()),
            ("scored_at", pa.string()),
        ]
    ),
    "audio": pa.schema(
        _KEY
        + [
            ("track", pa.string()),
            ("format", pa.string()),
            ("sample_rate", pa.int32()),
            ("duration_s", pa.float64()),
            ("data", pa.binary()),
        ]
    ),
    "aggregates": pa.schema(
        [
            ("run_id", pa.string()),
            ("batch", pa.string()),
            ("system", pa.string()),
            ("domain", pa.string()),
            ("condition", pa.string()),
            ("dimension", pa.string()),
            ("pass_at_1", pa.float64()),
            ("pass_at_k", pa.float64()),
            ("pass_pow_k", pa.float64()),
            ("pass_pow_k_theoretical", pa.float64()),
            ("pass_at_1_ci_lower", pa.float64()),
            ("pass_at_1_ci_upper", pa.float64()),
            ("pass_pow_k_ci_lower", pa.float64()),
            ("pass_pow_k_ci_upper", pa.float64()),
            ("mean", pa.float64()),
            ("k", pa.int32()),
            ("n", pa.int32()),
            ("n_attempts", pa.int32()),
            ("excluded", pa.int32()),
            # Added columns (older runs read them as null); see tasks.aggregate.aggregate.
            # pass_* above are over complete scenarios (>= k valid trials, spec 5.4); ``n``
            # counts scenarios with any value, ``incomplete`` those of them left out of the
            # pass figures; ``mean`` is an alias of ``mean_over_scenarios``.
            ("incomplete", pa.int32()),
            ("pass_at_1_over_valid_trials", pa.float64()),
            ("mean_over_trials", pa.float64()),
            ("mean_over_scenarios", pa.float64()),
        ]
    ),
    # Judge noise (tasks.judge_noise, evaflow judges noise): per metric and judge model,
    # the spread of repeated judgings of the same kept attempts (repeat scorings
    # PREFIX-1..N) against the spread between attempts; one part per prefix.
    "judge_noise": pa.schema(
        [
            ("run_id", pa.string()),
            ("batch", pa.string()),
            ("prefix", pa.string()),
            ("scorings", pa.string()),
            ("computed_at", pa.string()),
            ("metric", pa.string()),
            ("judge", pa.string()),
            ("judge_model", pa.string()),
            ("repeats", pa.int32()),
            ("n_attempts", pa.int32()),
            ("n_repeated", pa.int32()),
            ("n_values", pa.int32()),
            ("n_errors", pa.int32()),
            ("mean", pa.float64()),
            ("judge_var", pa.float64()),
            ("judge_sd", pa.float64()),
            ("judge_sd_max", pa.float64()),
            ("flip_rate", pa.float64()),
            ("n_flipped", pa.int32()),
            ("conversation_var", pa.float64()),
            ("conversation_sd", pa.float64()),
            ("judge_share", pa.float64()),
            ("conversation_var_adjusted", pa.float64()),
            ("judge_share_adjusted", pa.float64()),
        ]
    ),
}

ATTEMPT_TABLES = ("trials", "turns", "tool_calls", "events", "entities", "metrics", "audio")


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def _key(record: AttemptRecord, batch: str) -> dict[str, Any]:
    return {"run_id": record.run_id, "batch": batch, "attempt_id": record.attempt_id}


def trial_row(
    record: AttemptRecord,
    batch: str,
    trial_key: str,
    final: bool,
    validation: dict[str, Any],
    rehearsal: bool = False,
) -> dict[str, Any]:
    return {
        **_key(record, batch),
        "trial_key": trial_key,
        "system": record.system,
        "scenario_id": record.scenario_id,
        "domain": record.domain,
        "condition": record.condition,
        "trial": record.trial,
        "attempt": record.attempt,
        "final": final,
        "status": record.status,
        "end_reason": record.end_reason,
        "error": record.error or validation.get("error") or None,
        "valid": bool(validation.get("valid", False)),
        "validation_reason": validation.get("reason"),
        "failed_metrics": ",".join(validation.get("failed_metrics") or []),
        "mode": record.mode,
        "clock": record.clock,
        "caller_ended": record.caller_ended,
        "duration_s": record.duration_s,
        "wall_s": record.wall_s,
        "n_turns": len(record.turns),
        "n_tool_calls": len(record.tool_calls),
        "initial_db_hash": record.initial_db_hash,
        "final_db_hash": record.final_db_hash,
        "expected_db_hash": record.expected_db_hash,
        "stage_seconds_json": dumps(record.stage_seconds),
        "pipeline": validation.get("pipeline"),
        "rehearsal": rehearsal,
        "scenario_shared": any(e.kind == "scenario_shared" for e in record.events),
        # Key order kept (not sorted): a re-scoring reads the DBs exactly as judged.
        "initial_db_json": json.dumps(record.initial_db, default=str, ensure_ascii=False),
        "final_db_json": json.dumps(record.final_db, default=str, ensure_ascii=False),
    }


def turn_rows(record: AttemptRecord, batch: str) -> list[dict[str, Any]]:
    return [
        {
            **_key(record, batch),
            "turn_id": t.turn_id,
            "role": t.role,
            "intended_text": t.intended_text,
            "heard_text": t.heard_text,
            "start_s": t.start_s,
            "end_s": t.end_s,
            "latency_s": t.latency_s,
            "interrupted": t.interrupted,
            "interrupts": t.interrupts,
            "segments_json": dumps([[s.start_s, s.end_s] for s in t.segments]),
        }
        for t in record.turns
    ]


def tool_call_rows(record: AttemptRecord, batch: str) -> list[dict[str, Any]]:
    return [
        {
            **_key(record, batch),
            "call_index": c.index,
            "turn_id": c.turn_id,
            "tool_name": c.tool_name,
            "params_json": dumps(c.params),
            "response_json": dumps(c.response),
            "status": c.status,
            "error_type": c.error_type,
            "t_call_s": c.t_call_s,
            "t_response_s": c.t_response_s,
        }
        for c in record.tool_calls
    ]


def event_rows(record: AttemptRecord, batch: str) -> list[dict[str, Any]]:
    return [
        {
            **_key(record, batch),
            "t_s": e.t_s,
            "source": e.source,
            "kind": e.kind,
            "data_json": dumps(e.data),
        }
        for e in record.events
    ]


def entity_rows(record: AttemptRecord, batch: str) -> list[dict[str, Any]]:
    return [
        {
            **_key(record, batch),
            "turn_id": e.turn_id,
            "type": e.type,
            "expected": e.expected,
            "heard": e.heard,
            "correct": e.correct,
        }
        for e in record.entities
    ]


RUN_SCORING = "run"
"""The ``scoring`` of the metric rows a run stores itself (older runs: null, read as this)."""


def metric_rows(
    record: AttemptRecord,
    batch: str,
    scores: list[MetricScore],
    scoring: str = RUN_SCORING,
    scored_at: str | None = None,
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def add(score: MetricScore, name: str, parent: str | None) -> None:
        rows.append(
            {
                **_key(record, batch),
                "metric": name,
                "parent": parent,
                "score": score.score,
                "normalized_score": score.normalized_score,
                "passed": score.passed,
                "threshold": score.threshold,
                "skipped": score.skipped,
                "error": score.error,
                "version": score.version,
                "judge": score.judge,
                "prompt_hash": score.prompt_hash,
                "details_json": dumps(score.details),
                "scoring": scoring,
                "scored_at": scored_at,
            }
        )
        for key, sub in score.sub_metrics.items():
            add(sub, f"{name}.{key}", name)

    for score in scores:
        add(score, score.name, None)
    return rows


def to_table(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    """Rows -> Arrow table with the table's explicit schema (missing keys become null)."""
    schema = SCHEMAS[name]
    columns = {f.name: [row.get(f.name) for row in rows] for f in schema}
    return pa.table(columns, schema=schema)
