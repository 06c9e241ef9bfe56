"""Scenario-level reductions of the kept values, in DuckDB when the data has a store.

The long frame (one row per kept attempt and metric) has ~11 M rows at 1 M attempts, and
building it in pandas is most of an analysis's time and memory. An analysis that needs only
per-scenario means and trial counts reads a ``ScenarioSummary`` instead: with a store it is
reduced in SQL over the rows ``load_run_data`` reads, so pandas sees scenarios x metrics
rows; without one (frames given) it is computed from ``RunData.values`` as before.

Both paths give the same bits, not just close numbers: a CI bound is rounded to 4 digits,
so a mean one ulp off can move it by 1e-4. The SQL path therefore hands each scenario's
values to ``kahan_means`` in the order the long frame holds them: by run and trial
(``read_values``), never by scan order, which changes with DuckDB's threads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.data import ENTITY_SQL, METRIC_SQL, UNIT, RunData, scenario_means
from tasks.store import Store

CELL = ["system", "domain", "condition"]

# Each scenario's values in the long frame's order: ``read_values`` sorts the kept rows by
# (run_id, trial), unique within a scenario and metric, so both paths hand the Kahan sums
# the same sequence whatever order DuckDB's threads produce rows in. NaN scores count as
# missing, as in pandas; groups without a value are kept so that the conditions and
# metrics seen match RunData's. NOT MATERIALIZED: DuckDB would otherwise write the ~11 M
# rows out before grouping them (4x the time at 1 M attempts).
_MEANS_SQL = f"""
WITH vals AS NOT MATERIALIZED (
  SELECT system, domain, condition, scenario_id, metric, run_id, trial,
         CASE WHEN isnan(value) THEN NULL ELSE value END AS value
  FROM (({METRIC_SQL}) UNION ALL ({ENTITY_SQL}))
)
SELECT system, domain, condition, scenario_id, metric,
       list(value ORDER BY run_id, trial) FILTER (WHERE value IS NOT NULL) AS trial_values,
       count(value) AS n_trials
FROM vals GROUP BY ALL
"""
# The kept attempts that have a value, decided per attempt: a DISTINCT over all seven
# columns of the ~11 M value rows takes 3x as long, and a semi join straight on them
# holds them all in its hash table (+1.5 GB at 1 M attempts). An attempt with both metric
# values and key entities is listed twice, which the DISTINCT counts below absorb. A trial
# counts once however many metrics it has; runs pooled into one cell keep their own trial
# numbers, so a trial is (run_id, trial), as ``pool_trials`` renumbers them.
_KEPT_SQL = f"""
SELECT t.system, t.domain, t.condition, t.scenario_id, t.run_id, t.trial, t.attempt_id
FROM trials t SEMI JOIN (
  SELECT DISTINCT run_id, attempt_id FROM ({METRIC_SQL})
  WHERE value IS NOT NULL AND NOT isnan(value)
) v ON v.run_id = t.run_id AND v.attempt_id = t.attempt_id
WHERE t.final AND t.valid
UNION ALL
SELECT t.system, t.domain, t.condition, t.scenario_id, t.run_id, t.trial, t.attempt_id
FROM trials t SEMI JOIN ({ENTITY_SQL}) e ON e.run_id = t.run_id AND e.attempt_id = t.attempt_id
WHERE t.final AND t.valid
"""
_TRIALS_SQL = """
SELECT system, domain, condition, scenario_id, count(DISTINCT (run_id, trial)) AS trials
FROM kept GROUP BY ALL
"""
_CELLS_SQL = """
SELECT system, domain, condition,
       count(DISTINCT scenario_id) AS scenarios, count(DISTINCT attempt_id) AS attempts
FROM kept GROUP BY ALL
"""


@dataclass(frozen=True)
class ScenarioSummary:
    """What the robustness study needs from the kept values, at scenario level."""

    means: pd.DataFrame
    """UNIT, metric, mean, n_trials: mean of the values per scenario and metric (NaN out)."""
    trials: pd.DataFrame
    """UNIT, trials: kept trials with at least one value, per scenario."""
    cells: pd.DataFrame
    """system, domain, condition, scenarios, attempts: those with at least one value."""
    metrics: list[str]
    """Metrics with at least one value, sorted."""
    conditions: list[str]
    """Conditions of any kept row, sorted (``RunData.conditions``)."""


def scenario_summary(data: RunData) -> ScenarioSummary:
    """The summary of ``data``: reduced in DuckDB when it has a store, else in pandas."""
    if data.store is not None:
        return summary_from_store(data.store, data.runs)
    return summary_from_values(data.values)


def summary_from_values(values: pd.DataFrame) -> ScenarioSummary:
    """The summary from the long frame (the reference computation)."""
    kept = values.dropna(subset=["value"])
    cells = kept.groupby(CELL).agg(
        scenarios=("scenario_id", "nunique"), attempts=("attempt_id", "nunique")
    )
    trials = kept.groupby(UNIT)["trial"].nunique().rename("trials")
    return ScenarioSummary(
        means=scenario_means(values),
        trials=trials.reset_index(),
        cells=cells.reset_index(),
        metrics=sorted(kept["metric"].dropna().unique().tolist()),
        conditions=sorted(values["condition"].dropna().unique().tolist()),
    )


def summary_from_store(store: Store, runs: list[str]) -> ScenarioSummary:
    """The summary reduced in DuckDB: pandas receives scenario-level rows only."""
    con = store.connect(runs)
    try:
        groups = con.sql(_MEANS_SQL).to_arrow_table()
        con.execute(f"CREATE TEMP TABLE kept AS {_KEPT_SQL}")
        trials = con.execute(_TRIALS_SQL).df()
        cells = con.execute(_CELLS_SQL).df()
    finally:
        con.close()
    lists = groups.column("trial_values").combine_chunks()
    offsets = lists.offsets.to_numpy()
    keys = groups.drop_columns(["trial_values"]).to_pandas()
    if not np.array_equal(np.diff(offsets), keys["n_trials"].to_numpy()):
        raise RuntimeError("scenario value lists do not match their counts")  # never silent
    keys["mean"] = kahan_means(lists.values.to_numpy(zero_copy_only=False), offsets)
    return ScenarioSummary(
        means=_means(keys),
        trials=_sorted(trials, UNIT),
        cells=_sorted(cells, CELL),
        metrics=sorted(keys.loc[keys["n_trials"] > 0, "metric"].dropna().unique().tolist()),
        conditions=sorted(keys["condition"].dropna().unique().tolist()),
    )


def kahan_means(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Mean of each group ``values[offsets[i]:offsets[i + 1]]`` exactly as pandas takes it.

    pandas' groupby mean is a Kahan-compensated sum in row order (a NaN compensation is
    reset to 0) divided by the count; this repeats those steps, one row of every group at
    a time, so the same values in the same order give the same bits. Empty groups: NaN.
    """
    counts = np.diff(offsets)
    sums = np.zeros(counts.size)
    compensation = np.zeros(counts.size)
    for k in range(int(counts.max(initial=0))):
        live = np.flatnonzero(counts > k)
        y = values[offsets[live] + k] - compensation[live]
        t = sums[live] + y
        c = (t - sums[live]) - y
        compensation[live] = np.where(np.isnan(c), 0.0, c)
        sums[live] = t
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts


def _sorted(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Rows in pandas' groupby order (sorted keys; rows with a missing key dropped)."""
    out = frame.dropna(subset=keys).sort_values(keys, kind="stable")
    return out.reset_index(drop=True)


def _means(groups: pd.DataFrame) -> pd.DataFrame:
    """``scenario_means``' frame: groups with a value, in its order and columns."""
    out = _sorted(groups[groups["n_trials"] > 0], [*UNIT, "metric"])
    return out[[*UNIT, "metric", "mean", "n_trials"]]
