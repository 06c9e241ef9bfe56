"""Robustness deltas (spec 8.3): each perturbed condition versus ``clean``, per system.

Scenario means over trials (reduced in DuckDB when the data has a store, so the long
frame of values is never built: ``analysis.reduce``); delta = perturbed mean - clean mean
on the scenarios both conditions share; per cell a paired sign-flip permutation test and a
bootstrap CI of the mean delta; Holm-Bonferroni within each family: per domain the family
is (system, metric) across conditions x domains, pooled it is (system, metric) across
conditions.

Each delta row of the study's result also says which ``axis`` its condition perturbs
(:func:`condition_axis`: ``acoustic``, ``behavior`` or ``both``, read from the condition's
spec), so a report shows the deltas of EVA's behaviour personas apart from the acoustic
conditions'. The column is added by :func:`with_axes` after the tests, so the tables of
:func:`summary_tables` are unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from analysis.base import ANALYSES, AnalysisResult, skipped
from analysis.data import KEY_ENTITY_METRIC, RunData
from analysis.plotting import plot_grouped_bars, plot_heatmap, save_figure
from analysis.reduce import CELL, ScenarioSummary, scenario_summary
from analysis.stats import (
    bootstrap_ci,
    cell_seed,
    holm_bonferroni,
    sign_flip_tests,
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
    conditions_file: Path | None = Field(
        default=None,
        description="The run's conditions YAML, for the axis of conditions defined there",
    )
    expected_scenarios: int | None = Field(
        default=None,
        ge=1,
        description="Completeness gate (spec 8.3): a system is left out unless every domain x "
        "condition has this many matched scenarios with min_trials trials; None: no gate",
    )


AXIS_TABLES = ("robustness_scenario_deltas", "robustness_per_domain", "robustness_pooled")
UNKNOWN_AXIS = "unknown"


def condition_axis(spec: Any) -> str:
    """What a condition perturbs: ``behavior`` (a persona or an interaction: how the caller
    behaves), ``acoustic`` (accent, noise, connection or another registered kind: how it
    sounds), ``both``, or ``none`` (clean)."""
    behaves = spec.persona is not None or spec.interaction is not None
    sounds = any(getattr(spec, a) is not None for a in ("accent", "noise", "connection"))
    sounds = sounds or bool(spec.kinds())
    return {(True, True): "both", (True, False): "behavior", (False, True): "acoustic"}.get(
        (behaves, sounds), "none"
    )


def condition_axes(conditions: list[str], conditions_file: Path | None = None) -> dict[str, str]:
    """The axis of each named condition; a name neither registered nor in the file is
    ``unknown`` (a plug-in that is not installed where the analysis runs)."""
    from perturbations.conditions import CONDITIONS, load_conditions_yaml

    custom = {c.name: c for c in load_conditions_yaml(conditions_file)} if conditions_file else {}
    axes = {}
    for name in conditions:
        spec = custom.get(name) or (CONDITIONS.get(name) if name in CONDITIONS else None)
        axes[name] = UNKNOWN_AXIS if spec is None else condition_axis(spec)
    return axes


def with_axes(tables: dict[str, pd.DataFrame], axes: dict[str, str]) -> dict[str, pd.DataFrame]:
    """The tables with an ``axis`` column after ``condition`` in the per-condition ones."""
    out = dict(tables)
    for name in AXIS_TABLES:
        frame = tables.get(name)
        if frame is None or "condition" not in frame.columns:
            continue
        frame = frame.copy()
        where = list(frame.columns).index("condition") + 1
        axis = [axes.get(str(c), UNKNOWN_AXIS) for c in frame["condition"]]
        frame.insert(where, "axis", pd.Series(axis, index=frame.index, dtype=object))
        out[name] = frame
    return out


def paired_deltas(summary: ScenarioSummary, config: RobustnessConfig) -> pd.DataFrame:
    """Per (system, domain, condition, scenario, metric): perturbed - clean scenario mean."""
    metrics = [m for m in config.metrics if m in summary.metrics]
    means = summary.means[summary.means["metric"].isin(metrics)]
    means = means[means["n_trials"] >= config.min_trials]
    clean = means[means["condition"] == config.baseline].drop(columns="condition")
    perturbed = means[means["condition"] != config.baseline]
    paired = perturbed.merge(
        clean, on=["system", "domain", "scenario_id", "metric"], suffixes=("", "_clean")
    )
    paired["delta"] = paired["mean"] - paired["mean_clean"]
    return paired.rename(columns={"mean": "perturbed_mean", "mean_clean": "clean_mean"})


def scenario_deltas(data: RunData, config: RobustnessConfig) -> pd.DataFrame:
    """``paired_deltas`` of the data's scenario summary (reduced in DuckDB given a store)."""
    return paired_deltas(scenario_summary(data), config)


def completeness(
    summary: ScenarioSummary, deltas: pd.DataFrame, config: RobustnessConfig
) -> pd.DataFrame:
    """Scenarios per (system, domain, condition) and how many are matched to the baseline."""
    base = summary.cells.set_index(CELL)
    per = summary.trials.groupby(CELL)["trials"].agg(["min", "max"])
    per.columns = ["min_trials", "max_trials"]
    matched = deltas.groupby(CELL)["scenario_id"].nunique()
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


def _groups(frame: pd.DataFrame, keys: list[str]) -> list[tuple[tuple[Any, ...], np.ndarray]]:
    """(key, row positions) per group, in groupby's sorted order with rows in frame order."""
    if frame.empty:
        return []
    grouped = frame.groupby(keys, sort=True)
    codes = grouped.ngroup().to_numpy()
    order = np.argsort(codes, kind="stable")
    order = order[codes[order] >= 0]  # a row with a missing key is in no group
    sizes = grouped.size()
    return list(zip(sizes.index, np.split(order, np.cumsum(sizes.to_numpy())[:-1]), strict=True))


def _family_cells(deltas: pd.DataFrame, config: RobustnessConfig, pooled: bool) -> list[dict]:
    """One row per cell of a family: sign-flip test, bootstrap CI, arm means.

    Cells are tested together (``sign_flip_tests``); each keeps the seed of its keys
    (system, metric, condition, domain or ``pooled``), so results do not depend on batching.
    """
    keys = ["system", "metric", "condition", *([] if pooled else ["domain"])]
    groups = _groups(deltas, keys)
    delta, clean, perturbed = (
        deltas[c].to_numpy(dtype=np.float64) for c in ("delta", "clean_mean", "perturbed_mean")
    )
    cell_keys = [(*key, POOLED) if pooled else tuple(key) for key, _ in groups]
    seeds = [cell_seed(config.seed, *key) for key in cell_keys]
    tests = sign_flip_tests([delta[rows] for _, rows in groups], seeds, config.n_permutations)
    cells = []
    for (system, metric, condition, domain), (_, rows), seed, test in zip(
        cell_keys, groups, seeds, tests, strict=True
    ):
        low, high = bootstrap_ci(
            delta[rows].tolist(), seed, n_boot=config.n_bootstrap, alpha=config.alpha
        )
        cells.append(
            {
                "system": system,
                "metric": metric,
                "domain": domain,
                "condition": condition,
                "family": "pooled" if pooled else "per_domain",
                "n": test.n,
                "clean_mean": float(np.mean(clean[rows])),
                "perturbed_mean": float(np.mean(perturbed[rows])),
                "observed_mean_delta": test.observed,
                "ci_lower": np.nan if low is None else low,
                "ci_upper": np.nan if high is None else high,
                "raw_p": test.p_value,
                "exact": test.exact,
            }
        )
    return cells


def cell_tests(deltas: pd.DataFrame, config: RobustnessConfig) -> pd.DataFrame:
    """Per-domain and pooled cells with tests, CIs and Holm-corrected p-values."""
    rows = _family_cells(deltas, config, pooled=False) + _family_cells(deltas, config, pooled=True)
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


def summary_tables(summary: ScenarioSummary, config: RobustnessConfig) -> dict[str, pd.DataFrame]:
    """The robustness tables from a scenario summary."""
    deltas = paired_deltas(summary, config)
    complete = completeness(summary, deltas, config)
    dropped = incomplete_systems(complete, config)
    deltas = deltas[~deltas["system"].isin(dropped)]
    cells = cell_tests(deltas, config)
    return {
        "robustness_scenario_deltas": deltas,
        "robustness_completeness": complete,
        "robustness_per_domain": cells[cells["family"] == "per_domain"].drop(columns="family"),
        "robustness_pooled": cells[cells["family"] == "pooled"].drop(columns="family"),
    }


def robustness_tables(data: RunData, config: RobustnessConfig) -> dict[str, pd.DataFrame]:
    """The robustness tables of ``data`` (reduced in DuckDB when it has a store)."""
    return summary_tables(scenario_summary(data), config)


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
    scenarios = scenario_summary(data)
    conditions = scenarios.conditions
    if config.baseline not in conditions:
        return skipped(
            "robustness",
            f"no '{config.baseline}' condition in the data "
            f"(conditions: {', '.join(conditions) or 'none'})",
        )
    if len(conditions) < 2:
        return skipped("robustness", "only the baseline condition is present")
    axes = condition_axes(conditions, config.conditions_file)
    tables = with_axes(summary_tables(scenarios, config), axes)
    pooled = tables["robustness_pooled"]
    if pooled.empty:
        dropped = incomplete_systems(tables["robustness_completeness"], config)
        why = f"; incomplete: {', '.join(dropped)}" if dropped else ""
        return skipped(
            "robustness",
            f"no system has scenarios under both the baseline and a perturbed condition{why}",
        )
    metrics = [m for m in config.metrics if m in scenarios.metrics]
    significant = pooled[pooled["reject"]]
    summary = {
        "cells": int(len(pooled) + len(tables["robustness_per_domain"])),
        "significant_pooled": [
            f"{r.system} {r.condition} {r.metric}: {r.observed_mean_delta:+.3f}{r.stars}"
            for r in significant.itertuples()
        ],
        "excluded_incomplete": incomplete_systems(tables["robustness_completeness"], config),
        "axes": axes,
    }
    return AnalysisResult(
        name="robustness",
        tables=tables,
        summary=summary,
        figures=_figures(pooled, metrics, out_dir),
    )
