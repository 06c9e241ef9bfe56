"""Stored runs with planted differences between systems, for the noise-floor tests.

Written like ``tests.analysis.synthetic`` (its runs row, the real row builders and
``Store.write_batch``), but each system's composites are drawn from a model whose
answers are known:

* scenario i has a base pass probability ``base_i ~ U(0.2, 0.6)`` (seeded); system s
  passes EVA-A and EVA-X in each trial with probability ``base_i + shift[s]``, so the
  true paired difference of pass rates between two systems is the difference of shifts;
* ``EVA-A_mean`` is ``0.5 + shift[s] / 2 + scenario effect + trial noise`` (true paired
  difference: half the shift difference), EVA-X_mean and EVA-overall_mean likewise;
* ``flips``: a system listed there passes [1, 0, 1] on its first ``flips`` scenarios
  and the same pass in every trial on the rest, so its flip rate is known exactly.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from analysis.data import VALUE_COLUMNS
from tasks.records import AttemptRecord, MetricScore
from tasks.store import Store
from tasks.tables import metric_rows, to_table, trial_row

DOMAIN = "airline"


def planted_values(
    shifts: dict[str, float],
    n: int,
    k: int,
    seed: int,
    run: str = "planted",
    flips: dict[str, int] | None = None,
) -> pd.DataFrame:
    """The long frame ``analysis.data`` reads: one row per (system, scenario, trial, metric)."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.2, 0.6, size=n)
    effect = rng.normal(0.0, 0.1, size=n)
    rows = []
    for system, shift in shifts.items():
        passes = _passes(rng, base + shift, n, k, (flips or {}).get(system))
        for i in range(n):
            for t in range(k):
                noise = rng.normal(0.0, 0.1, size=3)
                means = np.clip(0.5 + shift / 2 + effect[i] + noise, 0.0, 1.0)
                values = {
                    "EVA-A_pass": passes[i, t],
                    "EVA-X_pass": passes[i, t],
                    "EVA-A_mean": means[0],
                    "EVA-X_mean": means[1],
                    "EVA-overall_mean": means[2],
                }
                key = f"{run}/{system}/{DOMAIN}/S{i}/clean/t{t}/a1"
                for metric, value in values.items():
                    rows.append(
                        (run, system, DOMAIN, "clean", f"S{i}", t, key, metric, float(value))
                    )
    frame = pd.DataFrame(rows, columns=VALUE_COLUMNS[:-2])
    return frame.assign(skipped=False, errored=False)


def _passes(
    rng: np.random.Generator, p: np.ndarray, n: int, k: int, flips: int | None
) -> np.ndarray:
    if flips is None:
        return (rng.random((n, k)) < p[:, None]).astype(np.float64)
    # The first ``flips`` scenarios change between trials; the rest never do.
    steady = (rng.random(n) < p).astype(np.float64)
    out = np.repeat(steady[:, None], k, axis=1)
    out[:flips] = [1.0 if t % 2 == 0 else 0.0 for t in range(k)]
    return out


def write_run(store: Store, values: pd.DataFrame) -> str:
    """Write a planted frame as a stored run (trials and metrics rows); returns its id."""
    run = str(values["run_id"].iloc[0])
    trials, metrics = [], []
    for attempt_id, group in values.groupby("attempt_id", sort=True):
        first = group.iloc[0]
        record = AttemptRecord(
            attempt_id=str(attempt_id),
            run_id=run,
            system=str(first["system"]),
            scenario_id=str(first["scenario_id"]),
            domain=str(first["domain"]),
            condition=str(first["condition"]),
            trial=int(first["trial"]),
        )
        key = f"{record.system}/{record.domain}/{record.scenario_id}/clean/{record.trial}"
        trials.append(trial_row(record, "b0", key, True, {"valid": True}))
        scores = [
            MetricScore(name=str(m), score=float(v), normalized_score=float(v))
            for m, v in zip(group["metric"], group["value"], strict=True)
        ]
        metrics += metric_rows(record, "b0", scores)
    store.write_batch(
        run, "b0", {"trials": to_table("trials", trials), "metrics": to_table("metrics", metrics)}
    )
    runs_row = {
        "run_id": run,
        "batch": "run",
        "created_at": "2026-01-01T00:00:00+00:00",
        "evaflow_version": "0.1.0",
        "config_json": json.dumps({"run_id": run, "note": "planted"}),
        "specs_json": json.dumps({"systems": sorted(values["system"].unique())}),
    }
    store.write_single("runs", run, to_table("runs", [runs_row]), name="run")
    return run
