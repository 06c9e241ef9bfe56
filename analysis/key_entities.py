"""Key-entity transcription accuracy versus task completion, per system.

The unit is one kept conversation: its share of key entities heard right (x) and its
task completion (y). Per system, pooled over domains and conditions and per domain:
Pearson r with its p-value, and the split at a threshold (default 70% accuracy) with
task completion on each side and the relative drop below it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from pydantic import BaseModel, ConfigDict, Field

from analysis.base import ANALYSES, AnalysisResult, skipped
from analysis.data import KEY_ENTITY_METRIC, RunData
from analysis.plotting import color_for, empty_axes_note, save_figure
from analysis.stats import pearson

ALL_SYSTEMS = "(all systems)"
POOLED = "pooled"


class KeyEntityConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    threshold: float = Field(default=0.7, ge=0, le=1, description="Accuracy split point")
    accuracy_metric: str = Field(default=KEY_ENTITY_METRIC, description="x: accuracy metric")
    outcome_metric: str = Field(default="task_completion", description="y: outcome metric")


def paired_values(data: RunData, config: KeyEntityConfig) -> pd.DataFrame:
    """One row per kept conversation with both the accuracy and the outcome present."""
    wide = data.wide([config.accuracy_metric, config.outcome_metric])
    wide = wide.rename(
        columns={config.accuracy_metric: "accuracy", config.outcome_metric: "outcome"}
    )
    return wide.dropna(subset=["accuracy", "outcome"]).reset_index(drop=True)


def split_stats(accuracy: np.ndarray, outcome: np.ndarray, threshold: float) -> dict[str, Any]:
    """Outcome mean at or above vs below the threshold, and the relative drop below it."""
    high = accuracy >= threshold - 1e-12
    tc_high = float(outcome[high].mean()) if high.any() else math.nan
    tc_low = float(outcome[~high].mean()) if (~high).any() else math.nan
    drop = (tc_high - tc_low) / tc_high if tc_high and not math.isnan(tc_low) else math.nan
    return {
        "n_high": int(high.sum()),
        "n_low": int((~high).sum()),
        "outcome_high": tc_high,
        "outcome_low": tc_low,
        "relative_drop": drop,
    }


def correlation_table(pairs: pd.DataFrame, config: KeyEntityConfig) -> pd.DataFrame:
    """Per system (and all systems together), pooled and per domain."""
    rows = []
    scopes = [(s, pairs[pairs["system"] == s]) for s in sorted(pairs["system"].unique())]
    if len(scopes) > 1:
        scopes.append((ALL_SYSTEMS, pairs))
    for system, sub in scopes:
        parts = [(POOLED, sub)] + [(d, g) for d, g in sub.groupby("domain", sort=True)]
        for domain, group in parts:
            x = group["accuracy"].to_numpy(dtype=np.float64)
            y = group["outcome"].to_numpy(dtype=np.float64)
            result = pearson(x, y)
            rows.append(
                {
                    "system": system,
                    "domain": domain,
                    "n": result.n,
                    "r": result.r,
                    "p_value": result.p_value,
                    "mean_accuracy": float(x.mean()),
                    "mean_outcome": float(y.mean()),
                    "threshold": config.threshold,
                    **split_stats(x, y, config.threshold),
                }
            )
    return pd.DataFrame(rows)


def panel_caption(stats: pd.Series, threshold: float) -> str:
    """r, p, n and the drop, saying so when a value is undefined rather than printing nan."""
    if math.isnan(stats["r"]):
        corr = f"r undefined (n={stats['n']}; one side is constant or n < 3)"
    else:
        corr = f"r={stats['r']:.2f} (p={stats['p_value']:.3g}, n={stats['n']})"
    drop = stats["relative_drop"]
    split = "n/a" if math.isnan(drop) else f"{drop:.0%}"
    return f"{corr}, drop below {threshold:.0%}: {split}"


def _figure(pairs: pd.DataFrame, table: pd.DataFrame, config: KeyEntityConfig) -> Figure:
    systems = sorted(pairs["system"].unique())
    ncols = min(3, len(systems))
    nrows = math.ceil(len(systems) / ncols)
    fig = Figure(figsize=(4.4 * ncols, 3.6 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    conditions = sorted(pairs["condition"].unique())
    rng = np.random.default_rng(0)  # jitter only separates overlapping 0/1 outcomes
    for ax, system in zip(axes, systems, strict=False):
        sub = pairs[pairs["system"] == system]
        for c, condition in enumerate(conditions):
            part = sub[sub["condition"] == condition]
            jitter = rng.uniform(-0.03, 0.03, size=len(part))
            ax.scatter(
                part["accuracy"],
                part["outcome"] + jitter,
                s=12,
                alpha=0.55,
                color=color_for(c),
                label=condition,
            )
        stats = table[(table["system"] == system) & (table["domain"] == POOLED)].iloc[0]
        if sub["accuracy"].nunique() > 1:
            slope, intercept = np.polyfit(sub["accuracy"], sub["outcome"], 1)
            xs = np.linspace(0, 1, 20)
            ax.plot(xs, intercept + slope * xs, color="black", linewidth=1.2, label="linear fit")
        ax.axvline(config.threshold, color="#C44E52", linestyle=":", linewidth=1)
        ax.set_title(f"{system}\n{panel_caption(stats, config.threshold)}", fontsize=8)
        ax.set_xlim(-0.03, 1.03)
        ax.set_ylim(-0.1, 1.1)
        ax.set_xlabel("key-entity accuracy")
        ax.set_ylabel(config.outcome_metric)
        ax.legend(fontsize=6, loc="center right")
    for ax in axes[len(systems) :]:
        empty_axes_note(ax, "")
        ax.set_visible(False)
    fig.suptitle(
        "Key-entity transcription accuracy vs task completion (one dot per call)", fontsize=10
    )
    return fig


@ANALYSES.register("key-entities")
def analyze_key_entities(data: RunData, out_dir: Path, params: dict[str, Any]) -> AnalysisResult:
    """Correlation of key-entity accuracy with task completion; scatter with fit."""
    config = KeyEntityConfig(**params)
    pairs = paired_values(data, config)
    if pairs.empty:
        return skipped(
            "key-entities",
            f"no kept conversation has both {config.accuracy_metric} and {config.outcome_metric}",
        )
    table = correlation_table(pairs, config)
    pooled = table[table["domain"] == POOLED]
    summary: dict[str, Any] = {
        str(row.system): {
            "r": row.r,
            "p_value": row.p_value,
            "n": row.n,
            "relative_drop": row.relative_drop,
        }
        for row in pooled.itertuples()
    }
    figures = save_figure(_figure(pairs, table, config), out_dir, "key_entity_correlation")
    return AnalysisResult(
        name="key-entities",
        figures=figures,
        summary=summary,
        tables={"key_entity_correlation": table, "key_entity_pairs": pairs},
    )
