"""Reading the stored tables into the long frame every analysis starts from.

One row per (kept attempt, metric): the final attempt of each trial, if it was valid,
with the value pass@k uses (normalized score, else raw score; NaN when the metric
errored or was skipped, which the ``skipped`` / ``errored`` flags tell apart).
Key-entity accuracy is added as the pseudo-metric ``key_entity_accuracy``: the share
of the attempt's key entities the agent heard right. ``load_run_data`` reads it on
first use, so analyses that reduce in DuckDB (``analysis.reduce``) never build it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tasks.costs.summary import SystemCost, system_costs
from tasks.store import Store

KEY_ENTITY_METRIC = "key_entity_accuracy"
UNIT = ["system", "domain", "condition", "scenario_id"]
VALUE_COLUMNS = [
    "run_id",
    "system",
    "domain",
    "condition",
    "scenario_id",
    "trial",
    "attempt_id",
    "metric",
    "value",
    "skipped",
    "errored",
]

METRIC_SQL = """
SELECT t.run_id, t.system, t.domain, t.condition, t.scenario_id, t.trial, t.attempt_id,
       m.metric,
       CASE WHEN m.error IS NOT NULL OR coalesce(m.skipped, false) THEN NULL
            ELSE coalesce(m.normalized_score, m.score) END AS value,
       coalesce(m.skipped, false) AND m.error IS NULL AS skipped,
       m.error IS NOT NULL AS errored
FROM trials t JOIN metrics m ON m.run_id = t.run_id AND m.attempt_id = t.attempt_id
WHERE t.final AND t.valid AND m.parent IS NULL
"""
ENTITY_SQL = f"""
SELECT t.run_id, t.system, t.domain, t.condition, t.scenario_id, t.trial, t.attempt_id,
       '{KEY_ENTITY_METRIC}' AS metric,
       avg(CASE WHEN e.correct THEN 1.0 ELSE 0.0 END) AS value,
       false AS skipped, false AS errored
FROM trials t JOIN entities e ON e.run_id = t.run_id AND e.attempt_id = t.attempt_id
WHERE t.final AND t.valid
GROUP BY ALL
"""
# A fixed row order: DuckDB returns rows in scan order, which varies with its threads,
# and a group's mean (a Kahan sum in row order) moves in its last bit with the order.
# (run_id, trial) is unique within a scenario and metric; analysis.reduce sorts the same.
_ORDER = "ORDER BY run_id, trial, attempt_id, metric"
_TRIALS_SQL = """
SELECT run_id, attempt_id, trial_key, system, domain, condition, scenario_id, trial, attempt,
       final, valid, status, end_reason, validation_reason, mode, duration_s
FROM trials
"""


class RunData:
    """What the analyses read: metric values of the kept attempts, and every attempt.

    From ``load_run_data`` it holds the store and reads each frame on first use (once):
    an analysis that reduces in DuckDB (``analysis.reduce``) then never pays for the
    ~11 M-row long frame of a 1 M-attempt store. Built from frames it has no store.
    """

    def __init__(
        self,
        runs: list[str],
        values: pd.DataFrame | None = None,
        attempts: pd.DataFrame | None = None,
        store: Store | None = None,
    ) -> None:
        if store is None and (values is None or attempts is None):
            raise ValueError("RunData needs either both frames or a store to read them from")
        self.runs = list(runs)
        self.store = store
        self._values = values
        self._attempts = attempts
        self._costs: dict[str, list[SystemCost]] = {}

    def __repr__(self) -> str:
        return f"RunData(runs={self.runs!r}, store={self.store.root if self.store else None!r})"

    @property
    def loaded(self) -> bool:
        """Whether the long frame of values is in memory (read, or given)."""
        return self._values is not None

    @property
    def values(self) -> pd.DataFrame:
        """One row per (kept attempt, metric); read from the store on first use."""
        if self._values is None:
            assert self.store is not None  # __init__ guarantees a store when a frame is absent
            self._values = read_values(self.store, self.runs)
        return self._values

    @property
    def attempts(self) -> pd.DataFrame:
        """Every attempt (``trials`` rows); read from the store on first use."""
        if self._attempts is None:
            assert self.store is not None
            self._attempts = _query(self.store, self.runs, _TRIALS_SQL)
        return self._attempts

    def costs(self, run_id: str) -> list[SystemCost]:
        """Dollars per system of ``run_id`` (``system_costs``), read once: the report's cost
        figure and its costs table share one read (a connection registers the cost views)."""
        if run_id not in self._costs:
            if self.store is None:
                raise ValueError("the costs are read from the costs view: it needs the store")
            self._costs[run_id] = system_costs(self.store, run_id)
        return self._costs[run_id]

    @property
    def metrics(self) -> list[str]:
        return sorted(self.values["metric"].dropna().unique().tolist())

    @property
    def systems(self) -> list[str]:
        return sorted(self.values["system"].dropna().unique().tolist())

    @property
    def conditions(self) -> list[str]:
        return sorted(self.values["condition"].dropna().unique().tolist())

    def metric(self, name: str) -> pd.DataFrame:
        return self.values[self.values["metric"] == name]

    def wide(self, metrics: list[str]) -> pd.DataFrame:
        """One row per kept attempt, one column per requested metric (NaN if absent)."""
        keys = ["run_id", "system", "domain", "condition", "scenario_id", "trial", "attempt_id"]
        sub = self.values[self.values["metric"].isin(metrics)]
        table = sub.groupby([*keys, "metric"], sort=True)["value"].first().unstack("metric")
        table = table.reindex(columns=metrics)
        table.columns.name = None
        return table.reset_index()


def load_run_data(store: Store, runs: list[str]) -> RunData:
    """The kept attempts of ``runs`` (read lazily); raises ``ValueError`` naming unknown runs."""
    known = store.run_ids()
    missing = [r for r in runs if r not in known]
    if missing:
        raise ValueError(
            f"run(s) {missing} not found in store {store.root}; runs: {', '.join(known) or '(none)'}"
        )
    return RunData(runs=list(runs), store=store)


def _query(store: Store, runs: list[str], sql: str) -> pd.DataFrame:
    con = store.connect(runs)
    try:
        return con.execute(sql).df()
    finally:
        con.close()


def read_values(store: Store, runs: list[str]) -> pd.DataFrame:
    """The long frame: metric values and key-entity accuracy of the kept attempts, pooled."""
    con = store.connect(runs)
    try:
        metrics = con.execute(f"{METRIC_SQL} {_ORDER}").df()
        entities = con.execute(f"{ENTITY_SQL} {_ORDER}").df()
    finally:
        con.close()
    values = (
        pd.concat([frame for frame in (metrics, entities) if not frame.empty], ignore_index=True)
        if len(metrics) + len(entities)
        else metrics
    )
    return pool_trials(values)


def pool_trials(values: pd.DataFrame) -> pd.DataFrame:
    """Renumber trials so that runs sharing a system and condition add trials, not clash.

    Trial numbers restart in every run; when several runs hold the same system x
    condition x scenario their trials are numbered 0..n-1 in (run, trial) order.
    """
    if values.empty:
        return values.reindex(columns=VALUE_COLUMNS)
    out = values.copy()
    out["value"] = pd.to_numeric(out["value"], errors="coerce").astype(np.float64)
    if out["run_id"].nunique() > 1:
        slots = (
            out[[*UNIT, "run_id", "trial"]]
            .drop_duplicates()
            .sort_values([*UNIT, "run_id", "trial"])
        )
        slots["pooled_trial"] = slots.groupby(UNIT, sort=False).cumcount()
        out = out.merge(slots, on=[*UNIT, "run_id", "trial"], how="left")
        out["trial"] = out.pop("pooled_trial")
    out["trial"] = out["trial"].astype(np.int64)
    return out[VALUE_COLUMNS].reset_index(drop=True)


def scenario_means(values: pd.DataFrame) -> pd.DataFrame:
    """Mean over trials per (system, domain, condition, scenario, metric); NaNs ignored."""
    grouped = values.dropna(subset=["value"]).groupby([*UNIT, "metric"], sort=True)
    out = grouped["value"].agg(["mean", "count"]).reset_index()
    return out.rename(columns={"count": "n_trials"})
