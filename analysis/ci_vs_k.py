"""How the CI of pass@1 narrows with the number of trials k (the paper's CI-vs-k study).

Per system x condition x dimension (EVA-A_pass, EVA-X_pass): keep the scenarios with
the full K trials; for k = 1..K draw, many times and seeded, k of each scenario's K
trials without replacement, compute pass@1 and its scenario-bootstrap 95% CI width.
Report the median width per k, the share of draws whose pass@1 is within +-tolerance of
the full-K anchor, and the fit of the k^-1/2 law to the median widths.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from pydantic import BaseModel, ConfigDict, Field

from analysis.base import ANALYSES, AnalysisResult, present, skipped
from analysis.data import RunData
from analysis.plotting import color_for, save_figure
from analysis.stats import bootstrap_ci_batched, cell_seed, fit_inverse_sqrt
from tasks.metrics.base import TOLERANCE


class CiVsKConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    dimensions: list[str] = Field(default_factory=lambda: ["EVA-A_pass", "EVA-X_pass"])
    draws: int = Field(default=200, ge=1, description="Seeded k-subsamples per k")
    n_bootstrap: int = Field(default=1000, ge=100, description="Bootstrap resamples per CI")
    tolerance: float = Field(default=0.02, gt=0, description="Band around the full-K anchor")
    seed: int = Field(default=42, ge=0)
    min_k: int = Field(default=2, ge=2, description="Groups need at least this many trials")
    conditions: list[str] | None = Field(
        default=None, description="Conditions to study; default: 'clean' if present, else all"
    )


def chosen_conditions(data: RunData, config: CiVsKConfig) -> list[str]:
    if config.conditions is not None:
        return config.conditions
    return ["clean"] if "clean" in data.conditions else data.conditions


def trial_matrix(values: pd.DataFrame) -> np.ndarray:
    """Scenarios x trials pass matrix (1/0) of the scenarios that have every trial."""
    table = values.pivot_table(
        index="scenario_id", columns="trial", values="value", aggfunc="first"
    )
    full = table.dropna(axis=0, how="any")
    # A pass is a score at the threshold 1.0 within the spec's comparison tolerance.
    return (full.to_numpy(dtype=np.float64) >= 1.0 - TOLERANCE).astype(np.float64)


def subsample_means(matrix: np.ndarray, k: int, draws: int, seed: int) -> np.ndarray:
    """(draws x scenarios) per-scenario pass@1 over k trials drawn without replacement."""
    n, big_k = matrix.shape
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((draws, n, big_k)), axis=2)[:, :, :k]
    picked = np.take_along_axis(np.broadcast_to(matrix, (draws, n, big_k)), order, axis=2)
    return picked.mean(axis=2)


def curve(matrix: np.ndarray, config: CiVsKConfig, keys: tuple[Any, ...]) -> pd.DataFrame:
    """Median CI width, pass@1 spread and share within tolerance for k = 1..K."""
    n, big_k = matrix.shape
    anchor = float(matrix.mean())
    rows = []
    for k in range(1, big_k + 1):
        seed = cell_seed(config.seed, *keys, k)
        per_draw = subsample_means(matrix, k, config.draws, seed)
        cis = bootstrap_ci_batched(list(per_draw), seed, n_boot=config.n_bootstrap)
        widths = np.array([hi - lo for lo, hi in cis if lo is not None and hi is not None])
        estimates = per_draw.mean(axis=1)
        rows.append(
            {
                "k": k,
                "n_scenarios": n,
                "draws": config.draws,
                "anchor": anchor,
                "median_ci_width": float(np.median(widths)),
                "ci_width_q25": float(np.quantile(widths, 0.25)),
                "ci_width_q75": float(np.quantile(widths, 0.75)),
                "median_pass_at_1": float(np.median(estimates)),
                "share_within_tolerance": float(
                    np.mean(np.abs(estimates - anchor) <= config.tolerance + 1e-12)
                ),
            }
        )
    return pd.DataFrame(rows)


def ci_vs_k_tables(data: RunData, config: CiVsKConfig) -> dict[str, pd.DataFrame]:
    curves, fits = [], []
    dims = present(data, config.dimensions)
    values = data.values[
        data.values["metric"].isin(dims)
        & data.values["condition"].isin(chosen_conditions(data, config))
    ]
    for (system, condition, dim), group in values.groupby(
        ["system", "condition", "metric"], sort=True
    ):
        matrix = trial_matrix(group)
        if matrix.shape[0] == 0 or matrix.shape[1] < config.min_k:
            continue
        ident: dict[str, Any] = {"system": system, "condition": condition, "dimension": dim}
        table = curve(matrix, config, (system, condition, dim))
        curves.append(table.assign(**ident))
        fit = fit_inverse_sqrt(table["k"], table["median_ci_width"])
        fits.append(
            {**ident, "max_k": matrix.shape[1], "n_scenarios": matrix.shape[0], **fit.model_dump()}
        )
    if not curves:
        return {}
    ordered = ["system", "condition", "dimension"]
    merged = pd.concat(curves, ignore_index=True)
    merged = merged[ordered + [c for c in merged.columns if c not in ordered]]
    return {"ci_vs_k": merged, "ci_vs_k_fit": pd.DataFrame(fits)}


def _figure(curves: pd.DataFrame, fits: pd.DataFrame, tolerance: float) -> Figure:
    dims = list(dict.fromkeys(curves["dimension"]))
    fig = Figure(figsize=(5.0 * len(dims), 7.0), layout="constrained")
    axes = fig.subplots(2, len(dims), squeeze=False)
    lines = curves[["system", "condition"]].drop_duplicates().reset_index(drop=True)
    for j, dim in enumerate(dims):
        top, bottom = axes[0, j], axes[1, j]
        for i, line in enumerate(lines.itertuples(index=False)):
            sel = (
                (curves["dimension"] == dim)
                & (curves["system"] == line.system)
                & (curves["condition"] == line.condition)
            )
            sub = curves[sel]
            if sub.empty:
                continue
            label = f"{line.system} · {line.condition}"
            top.plot(sub["k"], sub["median_ci_width"], "o-", color=color_for(i), label=label)
            fit = fits[
                (fits["dimension"] == dim)
                & (fits["system"] == line.system)
                & (fits["condition"] == line.condition)
            ].iloc[0]
            ks = np.linspace(1, sub["k"].max(), 50)
            top.plot(ks, fit["a"] / np.sqrt(ks), "--", color=color_for(i), linewidth=0.9)
            bottom.plot(
                sub["k"], sub["share_within_tolerance"], "o-", color=color_for(i), label=label
            )
        top.set_title(f"{dim}: median 95% CI width of pass@1 (dashed: a·k^-1/2)", fontsize=9)
        ticks = range(1, int(curves["k"].max()) + 1)
        top.set_xticks(ticks)
        bottom.set_xticks(ticks)
        top.set_xlabel("trials per scenario (k)")
        top.set_ylabel("CI width")
        bottom.set_title(
            f"{dim}: share of k-subsamples within ±{tolerance} of the full-K value", fontsize=9
        )
        bottom.set_xlabel("trials per scenario (k)")
        bottom.set_ylim(-0.02, 1.02)
        top.legend(fontsize=7)
    return fig


@ANALYSES.register("ci-vs-k")
def analyze_ci_vs_k(data: RunData, out_dir: Path, params: dict[str, Any]) -> AnalysisResult:
    """CI width of pass@1 against the number of trials, with the k^-1/2 fit."""
    config = CiVsKConfig(**params)
    tables = ci_vs_k_tables(data, config)
    if not tables:
        return skipped(
            "ci-vs-k",
            f"needs scenarios with at least {config.min_k} kept trials "
            f"of {', '.join(config.dimensions)}",
        )
    fits = tables["ci_vs_k_fit"]
    summary = {
        f"{r.system} · {r.condition} · {r.dimension}": {
            "a": r.a,
            "r2": r.r2,
            "exponent": r.exponent,
            "max_k": r.max_k,
        }
        for r in fits.itertuples()
    }
    figure = _figure(tables["ci_vs_k"], fits, config.tolerance)
    return AnalysisResult(
        name="ci-vs-k",
        tables=tables,
        summary=summary,
        figures=save_figure(figure, out_dir, "ci_vs_k"),
    )
