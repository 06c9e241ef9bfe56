"""Consistency (pass@1, pass@k, pass^k per system) and Pareto fronts of EVA-A vs EVA-X.

All rates come from ``tasks.aggregate.aggregate`` over the kept attempts, pooled over
domains, so they match the run's ``aggregates`` table definitions (scenario-level
bootstrap CIs, k = the largest number of trials of a scenario).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from pydantic import BaseModel, ConfigDict, Field

from analysis.base import ANALYSES, AnalysisResult, present, skipped
from analysis.data import RunData
from analysis.plotting import PARETO_COLUMNS, color_for, plot_pareto, save_figure
from analysis.stats import pareto_front
from tasks.aggregate import aggregate

DIMENSIONS = ("EVA-A_pass", "EVA-X_pass")
VIEWS = {"pass@1": "pass_at_1", "pass^k": "pass_pow_k"}
BY_CONDITION = ("system", "condition", "dimension")


class ConsistencyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    dimensions: list[str] = Field(default_factory=lambda: list(DIMENSIONS))
    seed: int = Field(default=0, ge=0, description="Bootstrap seed (0 as in the run aggregates)")
    n_bootstrap: int = Field(default=2000, ge=100)


def rates(
    data: RunData | pd.DataFrame,
    dimensions: list[str],
    seed: int,
    n_boot: int,
    by: Sequence[str] = BY_CONDITION,
) -> pd.DataFrame:
    """pass@1 / pass@k / pass^k with CIs per ``by`` x dimension (by default per system x
    condition, domains pooled) from a ``RunData`` or its long ``values`` frame."""
    values = data.values if isinstance(data, RunData) else data
    rows = values[values["metric"].isin(dimensions)]
    rows = rows.rename(columns={"metric": "dimension"})
    if rows.empty:
        return pd.DataFrame()
    table = aggregate(
        rows[["system", "domain", "condition", "scenario_id", "trial", "dimension", "value"]],
        by=list(by),
        seed=seed,
        n_boot=n_boot,
    )
    table["gap"] = table["pass_at_k"] - table["pass_pow_k"]
    return table


def gap_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Median pass@k - pass^k gap over systems, per condition and dimension."""
    grouped = table.dropna(subset=["gap"]).groupby(["condition", "dimension"], sort=True)
    out = grouped["gap"].agg(median_gap="median", min_gap="min", max_gap="max", n_systems="count")
    return out.reset_index()


def pareto_points(table: pd.DataFrame, view: str, condition: str) -> pd.DataFrame:
    """EVA-A vs EVA-X points (with CIs) of one view and condition, front flagged."""
    col = VIEWS[view]
    sub = table[table["condition"] == condition]
    a = sub[sub["dimension"] == "EVA-A_pass"].set_index("system")
    x = sub[sub["dimension"] == "EVA-X_pass"].set_index("system")
    systems = sorted(set(a.index) & set(x.index))
    frame = pd.DataFrame(
        {
            "system": systems,
            "eva_a": [a.at[s, col] for s in systems],
            "eva_x": [x.at[s, col] for s in systems],
            "eva_a_lo": [a.at[s, f"{col}_ci_lower"] for s in systems],
            "eva_a_hi": [a.at[s, f"{col}_ci_upper"] for s in systems],
            "eva_x_lo": [x.at[s, f"{col}_ci_lower"] for s in systems],
            "eva_x_hi": [x.at[s, f"{col}_ci_upper"] for s in systems],
            "group": "run",
        }
    )
    frame["on_front"] = pareto_front(frame["eva_a"], frame["eva_x"]) if systems else []
    return frame[PARETO_COLUMNS]


def _consistency_figure(table: pd.DataFrame) -> Figure:
    dims = list(dict.fromkeys(table["dimension"]))
    labels = sorted(set(zip(table["system"], table["condition"], strict=True)))
    fig = Figure(figsize=(5.2 * len(dims), 1.2 + 0.42 * len(labels)), layout="constrained")
    axes = fig.subplots(1, len(dims), squeeze=False).ravel()
    for ax, dim in zip(axes, dims, strict=True):
        sub = table[table["dimension"] == dim].set_index(["system", "condition"])
        for i, key in enumerate(labels):
            if key not in sub.index:
                continue
            row = sub.loc[key]
            ax.plot(
                [row["pass_pow_k"], row["pass_at_k"]],
                [i, i],
                color="#999",
                linewidth=3,
                solid_capstyle="round",
            )
            ax.plot(
                row["pass_pow_k"], i, "o", color=color_for(3), label="pass^k" if i == 0 else None
            )
            ax.plot(
                row["pass_at_1"], i, "D", color=color_for(0), label="pass@1" if i == 0 else None
            )
            ax.plot(
                row["pass_at_k"], i, "o", color=color_for(2), label="pass@k" if i == 0 else None
            )
        ax.set_yticks(range(len(labels)), [f"{s} · {c}" for s, c in labels], fontsize=8)
        ax.set_xlim(-0.02, 1.02)
        ax.set_title(f"{dim} (k = {int(table['k'].max())})", fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
    fig.suptitle("Consistency: the gap between pass@k and pass^k", fontsize=10)
    return fig


@ANALYSES.register("consistency")
def analyze_consistency(data: RunData, out_dir: Path, params: dict[str, Any]) -> AnalysisResult:
    """pass@1, pass@k and pass^k per system and the median pass@k - pass^k gap."""
    config = ConsistencyConfig(**params)
    dims = present(data, config.dimensions)
    if not dims:
        return skipped("consistency", f"no values of {', '.join(config.dimensions)}")
    table = rates(data, dims, config.seed, config.n_bootstrap)
    gaps = gap_summary(table)
    summary = {
        f"{r.condition} · {r.dimension}": {"median_gap": r.median_gap, "n_systems": r.n_systems}
        for r in gaps.itertuples()
    }
    files = save_figure(_consistency_figure(table), out_dir, "consistency")
    return AnalysisResult(
        name="consistency",
        tables={"consistency": table, "consistency_gap": gaps},
        summary=summary,
        figures=files,
    )


def architecture_groups(data: RunData) -> dict[str, str]:
    """System -> its architecture (cascade / hybrid / s2s), from the runs' stored specs."""
    if data.store is None:
        return {}
    from tasks.summary import system_architectures

    groups: dict[str, str] = {}
    for run_id in data.runs:
        for system, arch in system_architectures(data.store, run_id).items():
            groups[system] = arch or "architecture unknown"
    return groups


def _grouped(frame: pd.DataFrame, groups: dict[str, str]) -> pd.DataFrame:
    """Marker and legend group per architecture, so the figure shows what each system is."""
    if not groups or frame.empty:
        return frame
    return frame.assign(group=frame["system"].map(groups).fillna("run"))


@ANALYSES.register("pareto")
def analyze_pareto(data: RunData, out_dir: Path, params: dict[str, Any]) -> AnalysisResult:
    """EVA-A vs EVA-X Pareto fronts for pass@1 and pass^k, one figure per condition."""
    config = ConsistencyConfig(**params)
    if len(present(data, list(DIMENSIONS))) < 2:
        return skipped("pareto", "needs both EVA-A_pass and EVA-X_pass values")
    table = rates(data, list(DIMENSIONS), config.seed, config.n_bootstrap)
    groups = architecture_groups(data)
    frames, files, summary = [], [], {}
    for condition in sorted(table["condition"].unique()):
        panels = {view: _grouped(pareto_points(table, view, condition), groups) for view in VIEWS}
        for view, frame in panels.items():
            frames.append(frame.assign(view=view, condition=condition))
            summary[f"{condition} · {view}"] = frame.loc[frame["on_front"], "system"].tolist()
        figure = plot_pareto(panels, f"EVA-A vs EVA-X Pareto fronts ({condition})")
        files += save_figure(figure, out_dir, f"pareto_{_slug(condition)}")
    return AnalysisResult(
        name="pareto",
        tables={"pareto": pd.concat(frames, ignore_index=True)},
        summary=summary,
        figures=files,
    )


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in text) or "x"


def median_or_nan(values: pd.Series) -> float:
    clean = values.dropna()
    return float(np.median(clean)) if len(clean) else float("nan")
