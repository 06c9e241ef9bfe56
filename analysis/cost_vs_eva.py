"""Cost against quality: per system of a run, dollars per trial beside EVA-A and EVA-X pass@1.

Dollars are ``tasks.costs.summary.system_costs``' (every attempt, regenerated ones included;
None when a used model is unpriced or a paid component reported no usage). Pass rates are the
Pareto figure's (``analysis.consistency.rates``), but pooled over conditions as well as
domains, because a system's cost is pooled over both. A system whose cost is unknown is named
on the figure ("cost unknown: ..."), never drawn at $0; offline systems really cost $0 and are
drawn there on a linear axis (named instead when the axis is logarithmic).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from analysis.base import ANALYSES, AnalysisResult, present, skipped
from analysis.consistency import DIMENSIONS, ConsistencyConfig, architecture_groups, rates
from analysis.data import RunData
from analysis.plotting import GROUP_MARKERS, color_for, save_figure
from analysis.report_html import slug
from tasks.costs.summary import SystemCost, dollars

COST_ANALYSIS = "cost-vs-eva"
POOLED = ("system", "dimension")
"""A system's pass rates over all its conditions and domains, as its cost is."""
LOG_SPREAD = 10.0
"""Known positive costs spanning more than this factor get a logarithmic cost axis."""
PANELS = (("eva_a", "EVA-A pass@1 (accuracy)"), ("eva_x", "EVA-X pass@1 (experience)"))
COST_COLUMNS = ["system", "usd_per_trial", "eva_a", "eva_a_lo", "eva_a_hi",
                "eva_x", "eva_x_lo", "eva_x_hi", "unpriced", "group"]  # fmt: skip


def cost_vs_eva(costs: Sequence[SystemCost], table: pd.DataFrame) -> pd.DataFrame:
    """One row per costed system: ``usd_per_trial`` (NaN: unknown) and EVA-A / EVA-X pass@1
    with CIs (NaN: no value) from a ``rates`` table grouped by system and dimension."""
    frame = pd.DataFrame(
        {
            "system": [c.system for c in costs],
            "usd_per_trial": pd.Series([c.per_trial for c in costs], dtype="float64"),
            "unpriced": [c.unpriced for c in costs],
            "group": "run",
        }
    )
    for dimension, col in zip(DIMENSIONS, ("eva_a", "eva_x"), strict=True):
        sub = _dimension(table, dimension)
        for suffix, source in (("", "pass_at_1"), ("_lo", "pass_at_1_ci_lower"),
                               ("_hi", "pass_at_1_ci_upper")):  # fmt: skip
            frame[col + suffix] = frame["system"].map(sub[source]).astype("float64")
    return frame[COST_COLUMNS]


def _dimension(table: pd.DataFrame, dimension: str) -> pd.DataFrame:
    if table.empty:
        return pd.DataFrame(columns=["pass_at_1", "pass_at_1_ci_lower", "pass_at_1_ci_upper"])
    return table[table["dimension"] == dimension].set_index("system")


def cost_scale(costs: pd.Series) -> str:
    """``log`` when the known positive costs span more than ``LOG_SPREAD``, else ``linear``."""
    positive = costs[costs > 0]
    spread = positive.max() / positive.min() if len(positive) > 1 else 1.0
    return "log" if spread > LOG_SPREAD else "linear"


def figure_notes(frame: pd.DataFrame, scale: str) -> list[str]:
    """What the figure leaves out, and why: unknown costs; $0 systems on a log axis."""
    notes = []
    unknown = frame.loc[frame["usd_per_trial"].isna(), "system"].tolist()
    if unknown:
        notes.append("cost unknown: " + ", ".join(unknown))
    zero = frame.loc[frame["usd_per_trial"] <= 0, "system"].tolist()
    if scale == "log" and zero:
        notes.append("$0 per trial (offline; no place on a log axis): " + ", ".join(zero))
    return notes


def drawn_points(frame: pd.DataFrame, scale: str) -> pd.DataFrame:
    """The systems the figure places: a known cost, and above $0 on a log axis."""
    known = frame[frame["usd_per_trial"].notna()]
    return known[known["usd_per_trial"] > 0] if scale == "log" else known


def _panel(ax: Axes, points: pd.DataFrame, col: str, label: str, scale: str) -> None:
    points = points[points[col].notna()]
    for g, group in enumerate(dict.fromkeys(points["group"])):
        sub = points[points["group"] == group]
        errors = [(sub[col] - sub[f"{col}_lo"]).clip(lower=0).fillna(0),
                  (sub[f"{col}_hi"] - sub[col]).clip(lower=0).fillna(0)]  # fmt: skip
        ax.errorbar(sub["usd_per_trial"], sub[col], yerr=errors, fmt=GROUP_MARKERS.get(
            str(group), "o"), color=color_for(g), ecolor="#bbbbbb", elinewidth=0.8,
            markersize=6, linestyle="none", label=str(group))  # fmt: skip
    for row in points.itertuples(index=False):
        ax.annotate(str(row.system), (row.usd_per_trial, getattr(row, col)), xytext=(4, 3),
                    textcoords="offset points", fontsize=7)  # fmt: skip
    ax.set_xscale(scale)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: dollars(v)))
    ax.xaxis.set_minor_formatter(NullFormatter())
    if scale == "log":
        # 1-2-5 ticks: a spread of one or two decades would otherwise show one labelled tick.
        ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.margins(x=0.12)  # room for the labels of the dearest and cheapest points
    else:
        # $0 (offline) must stay in view: the left edge is just below it, the right leaves
        # room for the labels.
        right = 1.2 * float(points["usd_per_trial"].max()) if len(points) else 0.0
        right = right if right > 0 else 0.01
        ax.set_xlim(-0.05 * right, right)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("USD per trial (every attempt, regenerated ones included)")
    ax.set_ylabel(label)
    ax.tick_params(axis="x", labelsize=7)
    if len(points):
        ax.legend(fontsize=7, loc="best")
    else:
        ax.text(0.5, 0.5, "no system with a known cost and a value", ha="center",
                va="center", transform=ax.transAxes, color="#777")  # fmt: skip


def plot_cost_vs_eva(frame: pd.DataFrame, title: str) -> Figure:
    """Two panels, cost per trial (x) against EVA-A and EVA-X pass@1; notes under them."""
    scale = cost_scale(frame["usd_per_trial"].dropna())
    points = drawn_points(frame, scale)
    fig = Figure(figsize=(10.8, 4.8), layout="constrained")
    for ax, (col, label) in zip(fig.subplots(1, 2).ravel(), PANELS, strict=True):
        _panel(ax, points, col, label, scale)
    notes = figure_notes(frame, scale)
    if notes:
        # A figure-level x label is in the constrained layout, so the notes never overlap.
        fig.supxlabel("\n".join(notes), fontsize=8, color="#8a4b00")
    fig.suptitle(title, fontsize=11)
    return fig


def run_cost_vs_eva(data: RunData, run_id: str, config: ConsistencyConfig) -> pd.DataFrame:
    """``cost_vs_eva`` of one run of ``data`` (which must hold its store)."""
    if data.store is None:
        raise ValueError("cost-vs-eva reads the costs view: it needs the runs' store")
    values = data.values[data.values["run_id"] == run_id]
    table = rates(values, list(DIMENSIONS), config.seed, config.n_bootstrap, by=POOLED)
    return cost_vs_eva(data.costs(run_id), table)


@ANALYSES.register(COST_ANALYSIS)
def analyze_cost_vs_eva(data: RunData, out_dir: Path, params: dict[str, Any]) -> AnalysisResult:
    """Dollars per trial against EVA-A and EVA-X pass@1, one figure per run."""
    config = ConsistencyConfig(**params)
    if data.store is None:
        return skipped(COST_ANALYSIS, "needs a store: costs are read from its costs view")
    if not present(data, list(DIMENSIONS)):
        return skipped(COST_ANALYSIS, "no EVA-A_pass or EVA-X_pass values")
    groups = architecture_groups(data)
    frames, files, summary = [], [], {}
    for run_id in data.runs:
        frame = run_cost_vs_eva(data, run_id, config)
        frame["group"] = frame["system"].map(groups).fillna("run")
        frames.append(frame.assign(run_id=run_id))
        stem = "cost_vs_eva" if len(data.runs) == 1 else f"cost_vs_eva_{slug(run_id)}"
        figure = plot_cost_vs_eva(frame, f"Cost against EVA-A / EVA-X pass@1 ({run_id})")
        files += save_figure(figure, out_dir, stem)
        summary[run_id] = {
            r.system: {"usd_per_trial": r.usd_per_trial, "eva_a": r.eva_a, "eva_x": r.eva_x}
            for r in frame.itertuples(index=False)
        }
    return AnalysisResult(
        name=COST_ANALYSIS,
        tables={"cost_vs_eva": pd.concat(frames, ignore_index=True)},
        summary=summary,
        figures=files,
    )
