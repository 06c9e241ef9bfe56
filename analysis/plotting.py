"""Figure helpers shared by the analyses and the published-results redraw.

Figures are built on ``matplotlib.figure.Figure`` directly (no pyplot state, so they are
safe in worker threads and never leak) and saved as PNG and SVG with fixed metadata,
so the same data gives byte-stable SVGs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.colors import TwoSlopeNorm  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

matplotlib.rcParams["svg.hashsalt"] = "evaflow"
# Text stays <text> in the SVGs (the viewer draws it with the named font, DejaVu Sans or its
# fallbacks) rather than every glyph as a path: an SVG took 4-5x its time as paths (420 vs
# 89 ms for a seven-line chart, measured 2026-12-07), most of a report's figure time.
matplotlib.rcParams["svg.fonttype"] = "none"
PALETTE = [
    "#4C72B0",
    "#DD8452",
    "#55A868",
    "#C44E52",
    "#8172B3",
    "#937860",
    "#DA8BC3",
    "#8C8C8C",
    "#CCB974",
    "#64B5CD",
]
GROUP_MARKERS = {"cascade": "o", "s2s": "s", "2-part": "D", "hybrid": "D", "run": "*"}
PARETO_COLUMNS = [
    "system",
    "eva_a",
    "eva_x",
    "eva_a_lo",
    "eva_a_hi",
    "eva_x_lo",
    "eva_x_hi",
    "group",
    "on_front",
]


def save_figure(fig: Figure, out_dir: Path, stem: str) -> list[str]:
    """Write ``<stem>.png`` and ``<stem>.svg``; returns both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    png, svg = out_dir / f"{stem}.png", out_dir / f"{stem}.svg"
    # Every figure here uses constrained layout, so no (costly) bbox_inches="tight" pass.
    fig.savefig(png, dpi=110, metadata={"Software": None})
    # The layout is in figure fractions, the same at any dpi: the SVG keeps the one just
    # computed rather than solving it again (a third of a report's figure time).
    fig.set_layout_engine("none")
    fig.savefig(svg, metadata={"Date": None, "Creator": None})
    return [str(png), str(svg)]


def color_for(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def empty_axes_note(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#777")
    ax.set_xticks([])
    ax.set_yticks([])


def plot_heatmap(
    values: pd.DataFrame,
    labels: pd.DataFrame,
    title: str,
    colorbar_label: str,
) -> Figure:
    """A diverging heatmap centred on 0 with a text label per cell (e.g. delta + stars)."""
    rows, cols = values.shape
    fig = Figure(
        figsize=(max(6.0, 1.05 * cols + 3.0), max(2.6, 0.42 * rows + 1.8)), layout="constrained"
    )
    ax = fig.add_subplot()
    data = values.to_numpy(dtype=np.float64)
    finite = data[np.isfinite(data)]
    bound = max(float(np.abs(finite).max()) if finite.size else 0.0, 1e-3)
    image = ax.imshow(
        data, cmap="RdBu", norm=TwoSlopeNorm(vcenter=0.0, vmin=-bound, vmax=bound), aspect="auto"
    )
    for i in range(rows):
        for j in range(cols):
            text = str(labels.iat[i, j])
            if text:
                dark = np.isfinite(data[i, j]) and abs(data[i, j]) > 0.6 * bound
                ax.text(
                    j,
                    i,
                    text,
                    ha="center",
                    va="center",
                    fontsize=7.5,
                    color="white" if dark else "black",
                )
    ax.set_xticks(
        range(cols), [str(c) for c in values.columns], rotation=35, ha="right", fontsize=8
    )
    ax.set_yticks(range(rows), [str(r) for r in values.index], fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.colorbar(image, ax=ax, label=colorbar_label, shrink=0.85)
    return fig


def plot_grouped_bars(
    frame: pd.DataFrame,
    panel_col: str,
    category_col: str,
    hue_col: str,
    value_col: str,
    ci_cols: tuple[str, str],
    title: str,
) -> Figure:
    """One panel per ``panel_col`` value; bars per category, coloured by hue, CI whiskers."""
    panels = list(dict.fromkeys(frame[panel_col]))
    ncols = min(3, max(1, len(panels)))
    nrows = max(1, math.ceil(len(panels) / ncols))
    fig = Figure(figsize=(4.6 * ncols, 3.3 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    hues = list(dict.fromkeys(frame[hue_col]))
    for ax, panel in zip(axes, panels, strict=False):
        sub = frame[frame[panel_col] == panel]
        cats = list(dict.fromkeys(sub[category_col]))
        width = 0.8 / max(1, len(hues))
        for h, hue in enumerate(hues):
            part = sub[sub[hue_col] == hue].set_index(category_col).reindex(cats)
            x = np.arange(len(cats)) + (h - (len(hues) - 1) / 2) * width
            vals = part[value_col].to_numpy(dtype=np.float64)
            low = vals - part[ci_cols[0]].to_numpy(dtype=np.float64)
            high = part[ci_cols[1]].to_numpy(dtype=np.float64) - vals
            err = np.nan_to_num(np.vstack([low, high]).clip(min=0))
            ax.bar(
                x,
                np.nan_to_num(vals),
                width,
                yerr=err,
                capsize=2,
                color=color_for(h),
                label=str(hue),
            )
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_xticks(range(len(cats)), [str(c) for c in cats], rotation=25, ha="right", fontsize=8)
        ax.set_title(str(panel), fontsize=9)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    if hues:
        axes[0].legend(fontsize=7, loc="best")
    fig.suptitle(title, fontsize=10)
    return fig


def _draw_front(ax: Axes, frame: pd.DataFrame, color: str, label: str) -> None:
    front = frame[frame["on_front"]].sort_values(["eva_a", "eva_x"], ascending=[True, False])
    if front.empty:
        return
    # The staircase bounds the region no system reaches: it is the front, not a trend line.
    ax.step(
        front["eva_a"],
        front["eva_x"],
        where="pre",
        color=color,
        linestyle="--",
        linewidth=1.1,
        label=label,
    )


def _points(ax: Axes, frame: pd.DataFrame, numbered: bool) -> None:
    """One marker style per group, CI whiskers, and a label (bold on the front) per point."""
    for g, group in enumerate(dict.fromkeys(frame["group"])):
        sub = frame[frame["group"] == group]
        ax.errorbar(sub["eva_a"], sub["eva_x"], xerr=_errors(sub, "eva_a"),
                    yerr=_errors(sub, "eva_x"), fmt=GROUP_MARKERS.get(str(group), "o"),
                    color=color_for(g), ecolor="#bbbbbb", elinewidth=0.8, markersize=6,
                    label=str(group), linestyle="none")  # fmt: skip
    for i, row in enumerate(frame.itertuples(index=False)):
        ax.annotate(str(i + 1) if numbered else str(row.system), (row.eva_a, row.eva_x),
                    xytext=(4, 3), textcoords="offset points", fontsize=7,
                    fontweight="bold" if row.on_front else "normal")  # fmt: skip


def _overlay(ax: Axes, overlay: pd.DataFrame) -> None:
    """A run's own systems: red stars labelled with their names."""
    ax.errorbar(overlay["eva_a"], overlay["eva_x"], xerr=_errors(overlay, "eva_a"),
                yerr=_errors(overlay, "eva_x"), fmt="*", color="#C44E52", markersize=12,
                ecolor="#e6a1a3", linestyle="none", label="your run")  # fmt: skip
    for row in overlay.itertuples(index=False):
        ax.annotate(str(row.system), (row.eva_a, row.eva_x), xytext=(5, -9),
                    textcoords="offset points", fontsize=7, color="#C44E52")  # fmt: skip


def pareto_axes(
    ax: Axes,
    frame: pd.DataFrame,
    title: str,
    overlay: pd.DataFrame | None = None,
    numbered: bool = False,
) -> None:
    """EVA-A (x) vs EVA-X (y) with CI whiskers, the Pareto front, and optional extra points."""
    _points(ax, frame, numbered)
    _draw_front(ax, frame, "#333333", "Pareto front")
    if overlay is not None and not overlay.empty:
        _overlay(ax, overlay)
    ax.axvline(0.5, color="#999999", linewidth=0.6, linestyle=":")
    ax.axhline(0.5, color="#999999", linewidth=0.6, linestyle=":")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("EVA-A (accuracy)")
    ax.set_ylabel("EVA-X (experience)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="upper right")


def _errors(frame: pd.DataFrame, col: str) -> np.ndarray | None:
    lo, hi = f"{col}_lo", f"{col}_hi"
    if lo not in frame or hi not in frame:
        return None
    vals = frame[col].to_numpy(dtype=np.float64)
    low = vals - frame[lo].to_numpy(dtype=np.float64)
    high = frame[hi].to_numpy(dtype=np.float64) - vals
    return np.nan_to_num(np.vstack([low, high]).clip(min=0))


def plot_pareto(
    panels: dict[str, pd.DataFrame],
    title: str,
    overlays: dict[str, pd.DataFrame] | None = None,
    legend_names: Sequence[str] | None = None,
) -> Figure:
    """Side-by-side Pareto panels (e.g. pass@1 and pass^k); numbered labels if many systems."""
    n = max(1, len(panels))
    numbered = legend_names is not None
    ratios = [1.0] * n + ([0.62] if numbered else [])
    fig = Figure(figsize=(5.4 * n + (3.4 if numbered else 0), 5.2), layout="constrained")
    axes = fig.subplots(1, len(ratios), squeeze=False, width_ratios=ratios).ravel()
    for ax, (name, frame) in zip(axes, panels.items(), strict=False):
        if frame.empty:
            empty_axes_note(ax, "no data")
            ax.set_title(name)
            continue
        pareto_axes(ax, frame, name, (overlays or {}).get(name), numbered=numbered)
    if numbered:
        key = "\n".join(f"{i + 1:>2}  {label}" for i, label in enumerate(legend_names or []))
        axes[-1].axis("off")
        axes[-1].text(
            0.0,
            0.5,
            key,
            fontsize=7,
            family="monospace",
            va="center",
            ha="left",
            transform=axes[-1].transAxes,
        )
    fig.suptitle(title, fontsize=11)
    return fig
