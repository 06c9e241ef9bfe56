"""Run-level aggregation: composites of the final valid attempts -> pass@1 / pass@k / pass^k."""

from __future__ import annotations

from typing import Any

import pandas as pd

from tasks.store import Store
from tasks.tables import to_table

COMPOSITE_DIMENSIONS = ("EVA-A_pass", "EVA-X_pass", "EVA-overall_pass")
SUMMARY_COLUMNS = [
    "system",
    "architecture",
    "domain",
    "condition",
    "dimension",
    "pass_at_1",
    "pass_at_k",
    "pass_pow_k",
    "k",
    "n",
]


def system_architectures(store: Store, run_id: str) -> dict[str, str | None]:
    """System name -> cascade / hybrid / s2s (None: unknown) from the run's stored specs."""
    import json

    from tasks.systems.catalogue import architecture_of

    runs = store.read("runs", run_id)
    if runs.empty or "specs_json" not in runs.columns:
        return {}
    try:
        specs = json.loads(str(runs["specs_json"].iloc[-1]) or "{}")
    except ValueError:
        return {}
    systems = specs.get("systems") if isinstance(specs, dict) else None
    # Specs as the flow stores them; a bare name (older or hand-made rows) says nothing.
    return {
        str(s.get("name") if isinstance(s, dict) else s): (
            architecture_of(s) if isinstance(s, dict) else None
        )
        for s in systems or []
    }


def attempt_values(store: Store, run_id: str) -> pd.DataFrame:
    """One row per (final, valid attempt, dimension) with the value used for pass@k."""
    from tasks.scorings import latest_metrics

    trials = store.read("trials", run_id)
    metrics = latest_metrics(store.read("metrics", run_id))  # each metric's latest scoring
    if trials.empty:
        return pd.DataFrame(
            columns=["system", "domain", "condition", "scenario_id", "trial", "dimension", "value"]
        )
    final = trials[trials["final"] & trials["valid"]]
    top = metrics[metrics["parent"].isna()]
    merged = final.merge(top, on=["run_id", "attempt_id"], how="inner", suffixes=("", "_m"))
    merged["value"] = merged["normalized_score"].where(
        merged["normalized_score"].notna(), merged["score"]
    )
    # The metric's error, not the attempt's ("the agent ended the call" is no metric error).
    metric_error = merged["error_m"] if "error_m" in merged.columns else merged["error"]
    merged.loc[metric_error.notna() | merged["skipped"].astype(bool), "value"] = float("nan")
    # An agent failure kept for scoring fails the composites it left null (nothing to
    # score, e.g. no turns): failures of the agent are scored, not excluded.
    null_composite = merged["metric"].isin(COMPOSITE_DIMENSIONS) & merged["value"].isna()
    merged.loc[null_composite & (merged["status"] == "agent_error"), "value"] = 0.0
    out = merged.rename(columns={"metric": "dimension"})
    # Keep every scenario cell in the frame, even when no attempt was valid, so that
    # all-invalid scenarios are counted as excluded rather than silently dropped.
    invalid = trials[trials["final"] & ~trials["valid"]]
    if not invalid.empty:
        filler = [
            {**row, "dimension": dim, "value": float("nan")}
            for row in invalid[["system", "domain", "condition", "scenario_id", "trial"]].to_dict(
                "records"
            )
            for dim in COMPOSITE_DIMENSIONS
        ]
        out = pd.concat([out, pd.DataFrame(filler)], ignore_index=True)
    return out[["system", "domain", "condition", "scenario_id", "trial", "dimension", "value"]]


def summarize_run(store: Store, run_id: str) -> list[dict[str, Any]]:
    """Compute and store the run's aggregates (per domain and pooled as domain 'all')."""
    from tasks.aggregate import aggregate

    values = attempt_values(store, run_id)
    if values.empty:
        return []
    per_domain = aggregate(values, by=["system", "domain", "condition", "dimension"], seed=run_id)
    pooled = aggregate(values, by=["system", "condition", "dimension"], seed=run_id)
    table = pd.concat([per_domain, pooled.assign(domain="all")], ignore_index=True)
    table = table.assign(run_id=run_id, batch="aggregates")
    if "n" not in table.columns and "n_scenarios" in table.columns:
        table = table.rename(columns={"n_scenarios": "n"})
    table = table.rename(
        columns={"excluded_scenarios": "excluded", "incomplete_scenarios": "incomplete"}
    )
    records: list[dict[str, Any]] = [
        {str(k): v for k, v in row.items()} for row in table.to_dict("records")
    ]
    store.write_single("aggregates", run_id, to_table("aggregates", records))
    headline = table[table["dimension"].isin(COMPOSITE_DIMENSIONS)]
    architectures = system_architectures(store, run_id)
    headline = headline.assign(architecture=headline["system"].map(architectures))
    return [
        {str(k): (None if pd.isna(v) else v) for k, v in row.items()}
        for row in headline[[c for c in SUMMARY_COLUMNS if c in headline.columns]].to_dict(
            "records"
        )
    ]
