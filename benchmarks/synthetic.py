"""A synthetic store of any size, written exactly as a real run would write it.

Columnar generation (numpy + pyarrow ``take`` over small string pools, no per-row Python)
through ``tasks.store.Store.write_batch`` with the schemas of ``tasks.tables``: one run per
system, batches of whole trials, ``trials`` last. Defaults: 12 systems x 213 scenarios x
10 conditions; per attempt about 20 turns, 10 metric rows, 3 key entities and 2 tool
calls. Pass rates follow a simple logistic model (system skill, scenario difficulty shared
by all systems, condition harm) and the EVA composites follow from their components.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict, Field

DOMAIN_SHARE = {"airline": 50, "itsm": 80, "medical_hr": 83}  # 213 scenarios
CONDITIONS = (
    "clean",
    "noise",
    "accent",
    "connection",
    "babble",
    "reverb",
    "mp3",
    "fast",
    "slow",
    "quiet",
)
METRICS = (
    "task_completion",
    "faithfulness",
    "agent_speech_fidelity",
    "conversation_progression",
    "turn_taking",
    "conciseness",
    "EVA-A_pass",
    "EVA-X_pass",
    "EVA-overall_pass",
    "EVA-A_mean",
)
WORD_TEXT = """booking flight refund seat change confirm number code date please your account
ticket laptop password shift nurse schedule approve reset the a to for with my on is can I help
you thank"""


class StoreShape(BaseModel):
    """Size and make-up of the synthetic store."""

    model_config = ConfigDict(frozen=True)
    attempts: int = Field(default=1_000_000, ge=100, description="Total attempts (rows of trials)")
    systems: int = Field(default=12, ge=1)
    conditions: int = Field(default=len(CONDITIONS), ge=1, le=len(CONDITIONS))
    turns_mean: int = Field(default=20, ge=2, description="Turns per attempt (uniform 10..30)")
    entities_max: int = Field(default=6, ge=0, description="Key entities per attempt: 0..max")
    tool_calls_max: int = Field(default=4, ge=0, description="Tool calls per attempt: 0..max")
    batch_attempts: int = Field(default=25_000, ge=10, description="Attempts per stored batch")
    seed: int = 0

    @property
    def scenarios(self) -> list[tuple[str, str]]:
        return [(d, f"{d[:2]}-{i:03d}") for d, n in DOMAIN_SHARE.items() for i in range(n)]


# --------------------------------------------------------------------------- generation


class _Pools:
    """Small string pools; columns are built by ``take`` so 20 M rows cost no Python loop."""

    def __init__(self, rng: np.random.Generator) -> None:
        words = WORD_TEXT.split()
        self.sentences = pa.array(
            [" ".join(rng.choice(words, size=rng.integers(4, 18))) for _ in range(512)]
        )
        self.segments = pa.array([f"[[{i * 0.37:.2f}, {i * 0.37 + 1.9:.2f}]]" for i in range(64)])
        codes = [
            "".join(rng.choice(list("ABCDEFGHJKLMNPQRSTUVWXYZ23456789"), 6)) for _ in range(256)
        ]
        self.codes = pa.array(codes)
        self.misheard = pa.array([c[:3] + c[3:][::-1] for c in codes])
        self.entity_types = pa.array(["code", "employee_id", "date", "amount", "flight_number"])
        self.tools = pa.array(
            [
                "get_reservation",
                "search_flights",
                "rebook_flight",
                "verify_identity",
                "create_ticket",
                "reset_password",
            ]
        )
        self.params = pa.array([f'{{"confirmation_number": "{c}"}}' for c in codes[:64]])
        self.responses = pa.array(
            ['{"status": "success"}', '{"status": "error", "error_type": "not_found"}']
        )


def _const(value: Any, n: int, kind: pa.DataType = pa.string()) -> pa.Array:
    return pa.array([value], type=kind).take(pa.array(np.zeros(n, dtype=np.int64)))


def _attempt_layout(shape: StoreShape, system: int, rng: np.random.Generator) -> dict[str, Any]:
    """Attempts of one system: every (scenario, condition) cell gets T trials; some retried."""
    per_system = shape.attempts // shape.systems + (system < shape.attempts % shape.systems)
    cells = len(shape.scenarios) * shape.conditions
    trials_per_cell = max(1, per_system // cells)
    n_trials = cells * trials_per_cell
    retried = np.zeros(n_trials, dtype=bool)
    extra = max(0, per_system - n_trials)
    retried[rng.choice(n_trials, size=min(extra, n_trials), replace=False)] = True
    return {"n_trials": n_trials, "retried": retried, "trials_per_cell": trials_per_cell}


def _levels(rng: np.random.Generator, p: np.ndarray) -> np.ndarray:
    """0 / 0.5 / 1 ratings that are more often 1 when ``p`` is high."""
    r = rng.random(p.size)
    return np.where(r < p, 1.0, np.where(r < p + (1 - p) / 2, 0.5, 0.0))


def _values(rng: np.random.Generator, ease: np.ndarray) -> np.ndarray:
    """(attempts x 10) metric values, composites derived from components by the EVA rules."""
    n = ease.size
    p = 1 / (1 + np.exp(-ease))
    task = (rng.random(n) < p).astype(float)
    faith = _levels(rng, p)
    fidelity = np.clip(rng.normal(0.93 + 0.05 * p, 0.03), 0, 1)
    progression = _levels(rng, p)
    turn_taking = np.clip(rng.normal(0.7 + 0.25 * p, 0.1), 0, 1)
    concise = _levels(rng, np.sqrt(p))
    a_pass = ((task == 1) & (faith >= 0.5) & (fidelity >= 0.95)).astype(float)
    x_pass = ((progression >= 0.5) & (turn_taking >= 0.8) & (concise >= 0.5)).astype(float)
    a_mean = (task + faith + fidelity) / 3
    columns = (
        task,
        faith,
        fidelity,
        progression,
        turn_taking,
        concise,
        a_pass,
        x_pass,
        a_pass * x_pass,
        a_mean,
    )
    return np.stack(columns, axis=1)


def _batch_tables(
    shape: StoreShape,
    pools: _Pools,
    run_id: str,
    batch: str,
    trial_rows: dict[str, np.ndarray],
    rng: np.random.Generator,
) -> dict[str, pa.Table]:
    """The trials, metrics, turns, entities and tool_calls parts of one batch."""
    n = trial_rows["attempt"].size
    ids = pa.array(trial_rows["attempt_id"])
    key = {"run_id": _const(run_id, n), "batch": _const(batch, n), "attempt_id": ids}
    return {
        "trials": _trials(key, trial_rows, rng),
        "metrics": _metrics(key, trial_rows["ease"], rng),
        "turns": _turns(shape, pools, key, rng),
        "entities": _entities(shape, pools, key, trial_rows["ease"], rng),
        "tool_calls": _tool_calls(shape, pools, key, rng),
    }


def _trials(key: dict, rows: dict[str, np.ndarray], rng: np.random.Generator) -> pa.Table:
    n = rows["attempt"].size
    names = ("trial_key", "system", "scenario_id", "domain", "condition")
    columns = {
        **key,
        **{k: pa.array(rows[k]) for k in names},
        "trial": pa.array(rows["trial"], pa.int32()),
        "attempt": pa.array(rows["attempt"], pa.int32()),
        "final": pa.array(rows["final"]),
        "status": pa.array(np.where(rows["final"], "ok", "invalid")),
        "end_reason": _const("goodbye", n),
        "valid": pa.array(rows["final"]),
        "mode": _const("audio", n),
        "clock": _const("virtual", n),
        "duration_s": pa.array(rng.uniform(60, 300, n)),
        "wall_s": pa.array(rng.uniform(5, 30, n)),
        "stage_seconds_json": _const('{"stt": 1.2, "tts": 0.8, "vad": 0.1}', n),
    }
    return _table("trials", columns, n)


def _metrics(key: dict, ease: np.ndarray, rng: np.random.Generator) -> pa.Table:
    values = _values(rng, ease).ravel()
    owner = pa.array(np.repeat(np.arange(ease.size), len(METRICS)))
    columns = {
        **{k: v.take(owner) for k, v in key.items()},
        "metric": pa.array(np.tile(np.array(METRICS), ease.size)),
        "score": pa.array(values),
        "normalized_score": pa.array(values),
        "passed": pa.array(values >= 0.5),
        "skipped": _const(False, values.size, pa.bool_()),
        "version": _const("v0.1", values.size),
        "judge": _const("offline", values.size),
        "details_json": _const("{}", values.size),
    }
    return _table("metrics", columns, values.size)


def _table(name: str, columns: dict[str, pa.Array], n: int) -> pa.Table:
    from tasks.tables import SCHEMAS

    schema = SCHEMAS[name]
    arrays = [
        columns[f.name].cast(f.type) if f.name in columns else pa.nulls(n, f.type) for f in schema
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def _rows_per_attempt(key: dict[str, pa.Array], counts: np.ndarray) -> tuple[dict, np.ndarray]:
    owner = pa.array(np.repeat(np.arange(counts.size), counts))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    within = np.arange(int(counts.sum())) - np.repeat(starts, counts)
    return {k: v.take(owner) for k, v in key.items()}, within


def _turns(shape: StoreShape, pools: _Pools, key: dict, rng: np.random.Generator) -> pa.Table:
    n_att = len(key["attempt_id"])
    counts = rng.integers(shape.turns_mean // 2, shape.turns_mean * 3 // 2 + 1, n_att)
    keys, within = _rows_per_attempt(key, counts)
    m = within.size
    assistant = within % 2 == 0
    start = within * 4.0 + rng.uniform(0, 1, m)
    text = pools.sentences.take(pa.array(rng.integers(0, len(pools.sentences), m)))
    columns = {
        **keys,
        "turn_id": pa.array((within + 1) // 2, pa.int32()),
        "role": pa.array(np.where(assistant, "assistant", "user")),
        "intended_text": text,
        "heard_text": text,
        "start_s": pa.array(start),
        "end_s": pa.array(start + rng.uniform(0.8, 3.5, m)),
        "latency_s": pa.array(
            np.where(assistant, rng.lognormal(0.2, 0.4, m), np.nan), from_pandas=True
        ),
        "interrupted": pa.array(rng.random(m) < 0.03),
        "interrupts": pa.array(rng.random(m) < 0.03),
        "segments_json": pools.segments.take(pa.array(rng.integers(0, len(pools.segments), m))),
    }
    return _table("turns", columns, m)


def _entities(
    shape: StoreShape, pools: _Pools, key: dict, ease: np.ndarray, rng: np.random.Generator
) -> pa.Table:
    counts = rng.integers(0, shape.entities_max + 1, ease.size)
    keys, within = _rows_per_attempt(key, counts)
    m = within.size
    correct = rng.random(m) < np.repeat(1 / (1 + np.exp(-ease - 1)), counts)
    code = pa.array(rng.integers(0, len(pools.codes), m))
    columns = {
        **keys,
        "turn_id": pa.array(within * 2 + 1, pa.int32()),
        "type": pools.entity_types.take(pa.array(rng.integers(0, len(pools.entity_types), m))),
        "expected": pools.codes.take(code),
        "heard": pc.if_else(pa.array(correct), pools.codes.take(code), pools.misheard.take(code)),
        "correct": pa.array(correct),
    }
    return _table("entities", columns, m)


def _tool_calls(shape: StoreShape, pools: _Pools, key: dict, rng: np.random.Generator) -> pa.Table:
    counts = rng.integers(0, shape.tool_calls_max + 1, len(key["attempt_id"]))
    keys, within = _rows_per_attempt(key, counts)
    m = within.size
    ok = rng.random(m) < 0.9
    columns = {
        **keys,
        "call_index": pa.array(within, pa.int32()),
        "turn_id": pa.array(within + 1, pa.int32()),
        "tool_name": pools.tools.take(pa.array(rng.integers(0, len(pools.tools), m))),
        "params_json": pools.params.take(pa.array(rng.integers(0, len(pools.params), m))),
        "response_json": pools.responses.take(pa.array(np.where(ok, 0, 1))),
        "status": pa.array(np.where(ok, "success", "error")),
        "t_call_s": pa.array(within * 8.0 + 2.0),
        "t_response_s": pa.array(within * 8.0 + 2.05),
    }
    return _table("tool_calls", columns, m)


def _system_trial_rows(
    shape: StoreShape, system: int, run_id: str, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """One row per attempt of one system, in trial order (a retried trial has 2 attempts)."""
    layout = _attempt_layout(shape, system, rng)
    scenarios = shape.scenarios
    t_per = layout["trials_per_cell"]
    trial_idx = np.arange(layout["n_trials"])
    scen = trial_idx // (shape.conditions * t_per)
    cond = (trial_idx // t_per) % shape.conditions
    trial = trial_idx % t_per
    attempts = 1 + layout["retried"]
    owner = np.repeat(trial_idx, attempts)
    number = np.arange(owner.size) - np.repeat(np.cumsum(attempts) - attempts, attempts) + 1
    name = f"system-{system:02d}"
    domain = np.array([d for d, _ in scenarios])[scen]
    sid = np.array([s for _, s in scenarios])[scen]
    cname = np.array(CONDITIONS)[cond]
    tkey = np.char.add(np.char.add(np.char.add(f"{name}/", domain), "/"), sid)
    tkey = np.char.add(
        np.char.add(np.char.add(tkey, "/"), cname), np.char.add("/t", trial.astype(str))
    )
    skill = np.linspace(-0.5, 1.5, shape.systems)[system]
    # Scenario difficulty is shared by all systems, as it would be in a real benchmark.
    difficulty = np.random.default_rng(shape.seed + 1).normal(0, 1, len(scenarios))
    ease = skill - difficulty[scen] - 0.15 * cond
    return {
        "trial_key": tkey[owner],
        "attempt_id": np.char.add(
            np.char.add(f"{run_id}/", tkey[owner]), np.char.add("/a", number.astype(str))
        ),
        "system": np.full(owner.size, name),
        "scenario_id": sid[owner],
        "domain": domain[owner],
        "condition": cname[owner],
        "trial": trial[owner],
        "attempt": number,
        "final": number == attempts[owner],
        "ease": ease[owner],
        "owner": owner,
    }


def generate_store(root: str, shape: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write the synthetic store; returns row counts and seconds (run in a child process)."""
    from tasks.store import Store
    from tasks.tables import to_table

    spec = StoreShape(**(shape or {}))
    rng = np.random.default_rng(spec.seed)
    pools = _Pools(rng)
    store = Store(root)
    counts: dict[str, Any] = dict.fromkeys(
        ("trials", "metrics", "turns", "entities", "tool_calls", "batches"), 0
    )
    started = time.perf_counter()
    for system in range(spec.systems):
        run_id = f"bench-{system:02d}"
        rows = _system_trial_rows(spec, system, run_id, rng)
        bounds = _batch_bounds(rows["owner"], spec.batch_attempts)
        for b, (lo, hi) in enumerate(bounds):
            part = {k: v[lo:hi] for k, v in rows.items()}
            tables = _batch_tables(spec, pools, run_id, f"b{b:04d}", part, rng)
            store.write_batch(run_id, f"b{b:04d}", tables)
            for name, table in tables.items():
                counts[name] += table.num_rows
            counts["batches"] += 1
        run_row = {
            "run_id": run_id,
            "batch": "run",
            "created_at": "2026-01-01T00:00:00+00:00",
            "evaflow_version": "bench",
            "config_json": "{}",
            "specs_json": "{}",
        }
        store.write_single("runs", run_id, to_table("runs", [run_row]), name="run")
    counts["seconds"] = time.perf_counter() - started
    return counts


def _batch_bounds(owner: np.ndarray, size: int) -> list[tuple[int, int]]:
    """Cut points near every ``size`` attempts that never split a trial's attempts."""
    bounds, lo = [], 0
    while lo < owner.size:
        hi = min(owner.size, lo + size)
        while hi < owner.size and owner[hi] == owner[hi - 1]:
            hi += 1
        bounds.append((lo, hi))
        lo = hi
    return bounds
