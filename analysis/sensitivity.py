"""Threshold sensitivity of EVA-X and the decoupling of faithfulness from task completion.

Threshold sensitivity recomputes every kept attempt's EVA-X pass with the turn-taking
threshold swept (the other components keep theirs), using the composite rule of
``tasks.aggregate`` itself, then pass@1 per system x condition with its CI.
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
from analysis.stats import pearson
from tasks.aggregate import aggregate
from tasks.composites import PASS_COMPONENTS, pass_composite
from tasks.metrics.base import at_least
from tasks.records import MetricScore

X_COMPONENTS = PASS_COMPONENTS["EVA-X_pass"]
A_THRESHOLDS = {name: threshold for name, threshold, _ in PASS_COMPONENTS["EVA-A_pass"]}
ALL_SYSTEMS = "(all systems)"


class ThresholdConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    metric: str = Field(default="turn_taking", description="EVA-X component whose bar is swept")
    thresholds: list[float] = Field(
        default_factory=lambda: [round(t, 2) for t in np.arange(0.5, 1.0001, 0.05)],
        description="Thresholds to try",
    )
    seed: int = Field(default=0, ge=0)
    n_bootstrap: int = Field(default=1000, ge=100)


def _scores(row: dict[str, Any], names: list[str]) -> dict[str, MetricScore]:
    """The attempt's component scores as ``MetricScore`` (absent components left out)."""
    out = {}
    for name in names:
        value = row[f"{name}__value"]
        skipped_flag, errored = bool(row[f"{name}__skipped"]), bool(row[f"{name}__errored"])
        if pd.isna(value) and not skipped_flag and not errored:
            continue  # absent: pass_composite treats it as missing
        number = None if pd.isna(value) else float(value)
        out[name] = MetricScore(
            name=name,
            score=number,
            normalized_score=number,
            skipped=skipped_flag,
            error="errored" if errored else None,
        )
    return out


def component_frame(data: RunData, names: list[str]) -> pd.DataFrame:
    """One row per kept attempt with value/skipped/errored columns per component."""
    keys = ["system", "domain", "condition", "scenario_id", "trial", "attempt_id"]
    sub = data.values[data.values["metric"].isin(names)]
    grouped = sub.groupby([*keys, "metric"], sort=True)[["value", "skipped", "errored"]].first()
    wide = pd.DataFrame(grouped.unstack("metric"))
    pairs: list[tuple[str, str]] = list(wide.columns)  # type: ignore[arg-type]
    wide.columns = pd.Index([f"{metric}__{field}" for field, metric in pairs])
    wide = wide.reindex(
        columns=[f"{n}__{f}" for n in names for f in ("value", "skipped", "errored")]
    )
    for name in names:  # a component never stored for an attempt is neither skipped nor errored
        for flag in ("skipped", "errored"):
            col = f"{name}__{flag}"
            wide[col] = wide[col].astype("boolean").fillna(False).astype(bool)
    return wide.reset_index()


def recomputed_x_pass(data: RunData, config: ThresholdConfig) -> pd.DataFrame:
    """Long frame: EVA-X pass of every kept attempt under each swept threshold."""
    names = [name for name, _, _ in X_COMPONENTS]
    comps = component_frame(data, names)
    score_maps = [
        _scores({str(k): v for k, v in r.items()}, names) for r in comps.to_dict("records")
    ]
    rows = []
    for threshold in config.thresholds:
        rule = tuple(
            (n, threshold if n == config.metric else t, exact) for n, t, exact in X_COMPONENTS
        )
        values = [pass_composite(scores, rule) for scores in score_maps]
        rows.append(
            comps[["system", "domain", "condition", "scenario_id", "trial"]].assign(
                threshold=threshold, value=[np.nan if v is None else v for v in values]
            )
        )
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def threshold_table(data: RunData, config: ThresholdConfig) -> pd.DataFrame:
    passes = recomputed_x_pass(data, config)
    out = []
    for threshold, group in passes.groupby("threshold", sort=True):
        rows = group.drop(columns="threshold").assign(dimension="EVA-X_pass")
        table = aggregate(
            rows,
            by=["system", "condition", "dimension"],
            seed=config.seed,
            n_boot=config.n_bootstrap,
        )
        out.append(table.assign(threshold=threshold))
    merged = pd.concat(out, ignore_index=True)
    cols = [
        "system",
        "condition",
        "threshold",
        "pass_at_1",
        "pass_at_1_ci_lower",
        "pass_at_1_ci_upper",
        "n_scenarios",
        "n_attempts",
    ]
    return merged[cols].assign(metric=config.metric)


def _threshold_figure(table: pd.DataFrame, config: ThresholdConfig, default: float) -> Figure:
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.add_subplot()
    lines = table[["system", "condition"]].drop_duplicates()
    for i, line in enumerate(lines.itertuples(index=False)):
        sub = table[(table["system"] == line.system) & (table["condition"] == line.condition)]
        ax.plot(
            sub["threshold"],
            sub["pass_at_1"],
            "o-",
            color=color_for(i),
            markersize=3,
            label=f"{line.system} · {line.condition}",
        )
        ax.fill_between(
            sub["threshold"],
            sub["pass_at_1_ci_lower"],
            sub["pass_at_1_ci_upper"],
            color=color_for(i),
            alpha=0.12,
        )
    ax.axvline(default, color="#777", linestyle=":", linewidth=1, label=f"default {default}")
    ax.set_xlabel(f"{config.metric} pass threshold")
    ax.set_ylabel("EVA-X pass@1")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=7)
    ax.set_title(f"Sensitivity of EVA-X pass@1 to the {config.metric} threshold", fontsize=10)
    return fig


@ANALYSES.register("threshold-sensitivity")
def analyze_threshold(data: RunData, out_dir: Path, params: dict[str, Any]) -> AnalysisResult:
    """EVA-X pass@1 as the turn-taking threshold moves."""
    config = ThresholdConfig(**params)
    defaults = {n: t for n, t, _ in X_COMPONENTS}
    if config.metric not in defaults:
        raise ValueError(
            f"threshold-sensitivity: metric {config.metric!r} is not an EVA-X "
            f"component; valid: {', '.join(defaults)}"
        )
    if not present(data, [config.metric]):
        return skipped("threshold-sensitivity", f"no {config.metric} values")
    table = threshold_table(data, config)
    at_default = table[np.isclose(table["threshold"], defaults[config.metric])]
    summary = {
        f"{r.system} · {r.condition}": {
            "at_default": r.pass_at_1,
            "range": [
                float(
                    table[(table["system"] == r.system) & (table["condition"] == r.condition)][
                        "pass_at_1"
                    ].min()
                ),
                float(
                    table[(table["system"] == r.system) & (table["condition"] == r.condition)][
                        "pass_at_1"
                    ].max()
                ),
            ],
        }
        for r in at_default.itertuples()
    }
    fig = _threshold_figure(table, config, defaults[config.metric])
    return AnalysisResult(
        name="threshold-sensitivity",
        tables={"threshold_sensitivity": table},
        summary=summary,
        figures=save_figure(fig, out_dir, "threshold_sensitivity"),
    )


def decoupling_row(scope: str, frame: pd.DataFrame) -> dict[str, Any]:
    """2x2 counts of task completed x faithful, both conditional shares and phi."""
    completed = np.array(
        [at_least(v, A_THRESHOLDS["task_completion"]) for v in frame["task_completion"]], dtype=bool
    )
    faithful = np.array(
        [at_least(v, A_THRESHOLDS["faithfulness"]) for v in frame["faithfulness"]], dtype=bool
    )
    n_completed, n_faithful = int(completed.sum()), int(faithful.sum())
    deviation_when_completed = int((completed & ~faithful).sum())
    failed_when_faithful = int((faithful & ~completed).sum())
    return {
        "system": scope,
        "n": int(len(frame)),
        "completed": n_completed,
        "faithful": n_faithful,
        "completed_and_faithful": int((completed & faithful).sum()),
        "completed_with_deviation": deviation_when_completed,
        "faithful_but_failed": failed_when_faithful,
        "neither": int((~completed & ~faithful).sum()),
        "share_completed_with_deviation": deviation_when_completed / n_completed
        if n_completed
        else np.nan,
        "share_faithful_but_failed": failed_when_faithful / n_faithful if n_faithful else np.nan,
        "phi": pearson(completed.astype(float), faithful.astype(float)).r,
    }


def _decoupling_figure(table: pd.DataFrame) -> Figure:
    cells = [
        ("completed_and_faithful", "completed, faithful"),
        ("completed_with_deviation", "completed, faithfulness deviation"),
        ("faithful_but_failed", "faithful, task failed"),
        ("neither", "neither"),
    ]
    fig = Figure(figsize=(6.8, 1.9 + 0.45 * len(table)), layout="constrained")
    ax = fig.add_subplot()
    left = np.zeros(len(table))
    for i, (col, label) in enumerate(cells):
        share = table[col].to_numpy(dtype=float) / table["n"].clip(lower=1).to_numpy()
        ax.barh(table["system"], share, left=left, color=color_for(i), label=label)
        left += share
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of kept conversations")
    fig.legend(fontsize=7, loc="outside lower center", ncols=2)
    ax.set_title("Faithfulness vs task completion", fontsize=10)
    return fig


@ANALYSES.register("faithfulness-decoupling")
def analyze_decoupling(data: RunData, out_dir: Path, params: dict[str, Any]) -> AnalysisResult:
    """Share of completed tasks with a faithfulness deviation, and the converse."""
    if len(present(data, ["task_completion", "faithfulness"])) < 2:
        return skipped("faithfulness-decoupling", "needs task_completion and faithfulness values")
    wide = data.wide(["task_completion", "faithfulness"]).dropna(
        subset=["task_completion", "faithfulness"]
    )
    rows = [
        decoupling_row(str(system), group) for system, group in wide.groupby("system", sort=True)
    ]
    if len(rows) > 1:
        rows.append(decoupling_row(ALL_SYSTEMS, wide))
    table = pd.DataFrame(rows)
    summary: dict[str, Any] = {
        str(r.system): {
            "share_completed_with_deviation": r.share_completed_with_deviation,
            "share_faithful_but_failed": r.share_faithful_but_failed,
        }
        for r in table.itertuples()
    }
    return AnalysisResult(
        name="faithfulness-decoupling",
        tables={"faithfulness_decoupling": table},
        summary=summary,
        figures=save_figure(_decoupling_figure(table), out_dir, "faithfulness_decoupling"),
    )
