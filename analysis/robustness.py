"""Robustness deltas (spec 8.3): each perturbed condition versus ``clean``, per system.

Scenario means over trials; delta = perturbed mean - clean mean on the scenarios both
conditions share; per cell a paired sign-flip permutation test and a bootstrap CI of the
mean delta; Holm-Bonferroni within each family: per domain the family is (system, metric)
across conditions x domains, pooled it is (system, metric) across conditions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from analysis.base import ANALYSES, AnalysisResult, present, skipped
from analysis.data import KEY_ENTITY_METRIC, RunData, scenario_means
from analysis.plotting import plot_grouped_bars, plot_heatmap, save_figure
from analysis.stats import (
    bootstrap_ci,
    cell_seed,
    holm_bonferroni,
    sign_flip_test,
    significance_stars,
)

ROBUSTNESS_METRICS = (
    "EVA-A_pass",
    "EVA-X_pass",
    "EVA-A_mean",
    "EVA-X_mean",
    "task_completion",
    "faithfulness",
    "agent_speech_fidelity",
    "conversation_progression",
    "turn_taking",
    "conciseness",
    KEY_ENTITY_METRIC,
)
BAR_METRICS = (
    "EVA-A_pass",
    "EVA-X_pass",
    "task_completion",
    "faithfulness",
    "turn_taking",
    KEY_ENTITY_METRIC,
)
"""The bar chart shows these (the heatmap shows every metric)."""
POOLED = "pooled"
RESULT_COLUMNS = [
    "system",
    "metric",
    "domain",
    "condition",
    "n",
    "clean_mean",
    "perturbed_mean",
    "observed_mean_delta",
    "ci_lower",
    "ci_upper",
    "raw_p",
    "corrected_p",
    "reject",
    "stars",
    "exact",
]


class RobustnessConfig(BaseModel):
    """Parameters of the robustness study (defaults from the reference analysis)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    metrics: list[str] = Field(
        default_factory=lambda: list(ROBUSTNESS_METRICS),
        description="Metrics to compare (absent ones are left out)",
    )
    baseline: str = Field(default="clean", description="Condition the others are compared to")
    alpha: float = Field(default=0.05, gt=0, lt=1, description="Family-wise error rate")
    n_permutations: int = Field(default=10_000, ge=100, description="Monte Carlo sign patterns")
    n_bootstrap: int = Field(default=1000, ge=100, description="Bootstrap resamples per CI")
    seed: int = Field(default=42, ge=0, description="Base seed of every cell's seed")
    min_trials: int = Field(default=1, ge=1, description="Trials a scenario needs in both arms")
    expected_scenarios: int | None = Field(
        default=None,
        ge=1,
        description="Completeness gate (spec 8.3): a system is left out unless every domain x "
        "condition has this many matched scenarios with min_trials trials; None: no gate",
    )


def scenario_deltas(data: RunData, config: RobustnessConfig) -> pd.DataFrame:
    """Per (system, domain, condition, scenario, metric): perturbed - clean scenario mean."""
    metrics = present(data, config.metrics)
    means = scenario_means(data.values[data.values["metric"].isin(metrics)])
    means = means[means["n_trials"] >= config.min_trials]
    clean = means[means["condition"] == config.baseline].drop(columns="condition")
    perturbed = means[means["condition"] != config.baseline]
    paired = perturbed.merge(
        clean, on=["system", "domain", "scenario_id", "metric"], suffixes=("", "_clean")
    )
    paired["delta"] = paired["mean"] - paired["mean_clean"]
    return paired.rename(columns={"mean": "perturbed_mean", "mean_clean": "clean_mean"})


def completeness(data: RunData, deltas: pd.DataFrame, config: RobustnessConfig) -> pd.DataFrame:
    """Scenarios per (system, domain, condition) and how many are matched to the baseline."""
    values = data.values.dropna(subset=["value"])
    base = values.groupby(["system", "domain", "condition"]).agg(
        scenarios=("scenario_id", "nunique"), attempts=("attempt_id", "nunique")
    )
    trials = values.groupby(["system", "domain", "condition", "scenario_id"])["trial"].nunique()
    per = trials.groupby(["system", "domain", "condition"]).agg(["min", "max"])
    per.columns = ["min_trials", "max_trials"]
    matched = deltas.groupby(["system", "domain", "condition"])["scenario_id"].nunique()
    out = base.join(per).join(matched.rename("matched_scenarios")).reset_index()
    out["matched_scenarios"] = out["matched_scenarios"].fillna(0).astype(int)
    out.loc[out["condition"] == config.baseline, "matched_scenarios"] = out["scenarios"]
    out["complete"] = (out["min_trials"] >= config.min_trials) & (
        out["matched_scenarios"] >= (config.expected_scenarios or 0)
    )
    return out


def incomplete_systems(table: pd.DataFrame, config: RobustnessConfig) -> list[str]:
    """Systems the completeness gate leaves out (none when the gate is off)."""
    if config.expected_scenarios is None:
        return []
    return sorted(table.loc[~table["complete"], "system"].unique())


def _cell(deltas: pd.DataFrame, config: RobustnessConfig, keys: tuple[Any, ...]) -> dict:
    seed = cell_seed(config.seed, *keys)
    d = deltas["delta"].to_numpy(dtype=np.float64)
    test = sign_flip_test(d, config.n_permutations, seed)
    low, high = bootstrap_ci(d.tolist(), seed, n_boot=config.n_bootstrap, alpha=config.alpha)
    return {
        "n": test.n,
        "clean_mean": float(deltas["clean_mean"].mean()),
        "perturbed_mean": float(deltas["perturbed_mean"].mean()),
        "observed_mean_delta": test.observed,
        "ci_lower": np.nan if low is None else low,
        "ci_upper": np.nan if high is None else high,
        "raw_p": test.p_value,
        "exact": test.exact,
    }


def cell_tests(deltas: pd.DataFrame, config: RobustnessConfig) -> pd.DataFrame:
    """Per-domain and pooled cells with tests, CIs and Holm-corrected p-values."""
    rows = []
    for (system, metric, condition, domain), group in deltas.groupby(
        ["system", "metric", "condition", "domain"], sort=True
    ):
        keys = (system, metric, condition, domain)
        rows.append(
            {
                "system": system,
                "metric": metric,
                "domain": domain,
                "condition": condition,
                "family": "per_domain",
                **_cell(group, config, keys),
            }
        )
    for (system, metric, condition), group in deltas.groupby(
        ["system", "metric", "condition"], sort=True
    ):
        keys = (system, metric, condition, POOLED)
        rows.append(
            {
                "system": system,
                "metric": metric,
                "domain": POOLED,
                "condition": condition,
                "family": "pooled",
                **_cell(group, config, keys),
            }
        )
    if not rows:
        return pd.DataFrame(columns=[*RESULT_COLUMNS, "family"])
    cells = pd.DataFrame(rows)
    cells["corrected_p"] = np.nan
    cells["reject"] = False
    for _, family in cells.groupby(["system", "metric", "family"], sort=False):
        corrected, reject = holm_bonferroni(family["raw_p"].tolist(), config.alpha)
        cells.loc[family.index, "corrected_p"] = corrected
        cells.loc[family.index, "reject"] = reject
    cells["stars"] = [significance_stars(p) for p in cells["corrected_p"]]
    return cells[[*RESULT_COLUMNS, "family"]]


def robustness_tables(data: RunData, config: RobustnessConfig) -> dict[str, pd.DataFrame]:
    deltas = scenario_deltas(data, config)
    complete = completeness(data, deltas, config)
    dropped = incomplete_systems(complete, config)
    deltas = deltas[~deltas["system"].isin(dropped)]
    cells = cell_tests(deltas, config)
    return {
        "robustness_scenario_deltas": deltas,
        "robustness_completeness": complete,
        "robustness_per_domain": cells[cells["family"] == "per_domain"].drop(columns="family"),
        "robustness_pooled": cells[cells["family"] == "pooled"].drop(columns="family"),
    }


def _figures(pooled: pd.DataFrame, metrics: list[str], out_dir: Path) -> list[str]:
    table = pooled.assign(row=pooled["system"] + " · " + pooled["condition"])
    values = table.pivot(index="row", columns="metric", values="observed_mean_delta")
    values = values.reindex(columns=[m for m in metrics if m in values.columns])
    labels = (
        table.assign(
            label=[
                f"{d:+.2f}{s}" if np.isfinite(d) else ""
                for d, s in zip(table["observed_mean_delta"], table["stars"], strict=True)
            ]
        )
        .pivot(index="row", columns="metric", values="label")
        .reindex_like(values)
        .fillna("")
    )
    heat = plot_heatmap(
        values,
        labels,
        "Robustness: mean delta vs clean (pooled over domains; Holm-corrected stars)",
        "perturbed - clean",
    )
    files = save_figure(heat, out_dir, "robustness_heatmap")
    shown = [m for m in BAR_METRICS if m in metrics] or metrics[:6]
    subset = pooled[pooled["metric"].isin(shown)]
    ordered = subset.assign(
        metric=pd.Categorical(subset["metric"], categories=shown, ordered=True)
    ).sort_values("metric")
    ordered = ordered.assign(metric=ordered["metric"].astype(str))
    bars = plot_grouped_bars(
        ordered,
        "metric",
        "system",
        "condition",
        "observed_mean_delta",
        ("ci_lower", "ci_upper"),
        "Mean delta vs clean with 95% bootstrap CI",
    )
    return files + save_figure(bars, out_dir, "robustness_bars")


@ANALYSES.register("robustness")
def analyze_robustness(data: RunData, out_dir: Path, params: dict[str, Any]) -> AnalysisResult:
    """Robustness deltas with tests, CIs, Holm correction, heatmap and bar chart."""
    config = RobustnessConfig(**params)
    if config.baseline not in data.conditions:
        return skipped(
            "robustness",
            f"no '{config.baseline}' condition in the data "
            f"(conditions: {', '.join(data.conditions) or 'none'})",
        )
    if len(data.conditions) < 2:
        return skipped("robustness", "only the baseline condition is present")
    tables = robustness_tables(data, config)
    pooled = tables["robustness_pooled"]
    if pooled.empty:
        dropped = incomplete_systems(tables["robustness_completeness"], config)
        why = f"; incomplete: {', '.join(dropped)}" if dropped else ""
        return skipped(
            "robustness",
            f"no system has scenarios under both the baseline and a perturbed condition{why}",
        )
    metrics = present(data, config.metrics)
    significant = pooled[pooled["reject"]]
    summary = {
        "cells": int(len(pooled) + len(tables["robustness_per_domain"])),
        "significant_pooled": [
            f"{r.system} {r.condition} {r.metric}: {r.observed_mean_delta:+.3f}{r.stars}"
            for r in significant.itertuples()
        ],
        "excluded_incomplete": incomplete_systems(tables["robustness_completeness"], config),
    }
    return AnalysisResult(
        name="robustness",
        tables=tables,
        summary=summary,
        figures=_figures(pooled, metrics, out_dir),
    )
