"""The published per-system statistics: redraw Figure 2 and check the headline claims.

Reads a leaderboard statistics file (``systems[]`` with ``clean`` pass rates and CIs and
``perturbation_delta`` blocks), draws the pass@1 and pass^k Pareto fronts of EVA-A vs
EVA-X and the perturbation-delta heatmaps, and recomputes each claim from the numbers.
A run's own systems can be placed on the same axes (``overlay``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from analysis.base import AnalysisResult
from analysis.data import RunData
from analysis.plotting import PARETO_COLUMNS, plot_heatmap, plot_pareto, save_figure
from analysis.stats import holm_bonferroni, pareto_front, significance_stars

VIEW_KEYS = {
    "pass@1": ("EVA-A_pass", "EVA-X_pass"),
    "pass^k": ("EVA-A_pass_power_k", "EVA-X_pass_power_k"),
}
GAP_KEYS = {
    "EVA-A": ("EVA-A_pass_at_k", "EVA-A_pass_power_k"),
    "EVA-X": ("EVA-X_pass_at_k", "EVA-X_pass_power_k"),
}


class PublishedStat(BaseModel):
    model_config = ConfigDict(extra="allow")
    point: float | None = Field(default=None, description="Point estimate")
    ci_lower: float | None = None
    ci_upper: float | None = None
    n: int | None = Field(default=None, description="Scenarios behind the estimate")


class PublishedDeltaStat(PublishedStat):
    raw_p: float | None = None
    corrected_p: float | None = Field(default=None, description="Holm-corrected p-value")
    reject: bool | None = None


class PublishedBlock(BaseModel):
    pooled: PublishedStat
    per_domain: dict[str, PublishedStat] = Field(default_factory=dict)


class PublishedDeltaBlock(BaseModel):
    pooled: PublishedDeltaStat
    per_domain: dict[str, PublishedDeltaStat] = Field(default_factory=dict)


class PublishedSystem(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    name: str = ""
    type: str = Field(default="", description="cascade, s2s or 2-part")
    clean: dict[str, PublishedBlock] = Field(default_factory=dict)
    perturbation_delta: dict[str, dict[str, PublishedDeltaBlock]] = Field(default_factory=dict)

    def point(self, key: str) -> float:
        block = self.clean.get(key)
        value = block.pooled.point if block else None
        return math.nan if value is None else float(value)

    def ci(self, key: str) -> tuple[float, float]:
        block = self.clean.get(key)
        if block is None:
            return math.nan, math.nan
        lo, hi = block.pooled.ci_lower, block.pooled.ci_upper
        return (math.nan if lo is None else lo), (math.nan if hi is None else hi)


class PublishedStats(BaseModel):
    systems: list[PublishedSystem] = Field(min_length=1)


class Claim(BaseModel):
    """One headline claim recomputed from the numbers."""

    id: str
    statement: str = Field(description="The claim, as the paper states it")
    holds: bool | None = Field(description="True/False, or None for a reported quantity")
    value: str = Field(description="What the numbers give, in words")
    details: dict[str, Any] = Field(default_factory=dict)


def load_published(path: Path, systems: list[str] | None = None) -> PublishedStats:
    """Parse the statistics file; errors name the file and the offending field."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: statistics file not found") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from exc
    try:
        stats = PublishedStats.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"{path}: field '{loc}': {first['msg']}") from None
    if systems:
        unknown = sorted(set(systems) - {s.id for s in stats.systems})
        if unknown:
            valid = ", ".join(s.id for s in stats.systems)
            raise ValueError(f"{path}: unknown system id(s) {unknown}; valid: {valid}")
        stats = PublishedStats(systems=[s for s in stats.systems if s.id in systems])
    return stats


def published_points(stats: PublishedStats, view: str) -> pd.DataFrame:
    """EVA-A vs EVA-X points of one view (pass@1 or pass^k) with CIs and the front flag."""
    a_key, x_key = VIEW_KEYS[view]
    rows = []
    for s in stats.systems:
        (a_lo, a_hi), (x_lo, x_hi) = s.ci(a_key), s.ci(x_key)
        rows.append(
            {
                "system": s.id,
                "eva_a": s.point(a_key),
                "eva_x": s.point(x_key),
                "eva_a_lo": a_lo,
                "eva_a_hi": a_hi,
                "eva_x_lo": x_lo,
                "eva_x_hi": x_hi,
                "group": s.type or "system",
            }
        )
    frame = pd.DataFrame(rows)
    frame["on_front"] = pareto_front(frame["eva_a"], frame["eva_x"])
    return frame[PARETO_COLUMNS]


def delta_table(stats: PublishedStats) -> pd.DataFrame:
    """Every published perturbation delta (pooled and per domain) as rows."""
    rows = []
    for s in stats.systems:
        for metric, conditions in s.perturbation_delta.items():
            for condition, block in conditions.items():
                cells = [("pooled", block.pooled), *block.per_domain.items()]
                for domain, cell in cells:
                    rows.append(
                        {
                            "system": s.id,
                            "metric": metric,
                            "condition": condition,
                            "domain": domain,
                            "point": cell.point,
                            "ci_lower": cell.ci_lower,
                            "ci_upper": cell.ci_upper,
                            "raw_p": cell.raw_p,
                            "corrected_p": cell.corrected_p,
                            "reject": cell.reject,
                            "stars": significance_stars(cell.corrected_p),
                        }
                    )
    return pd.DataFrame(rows)


def holm_agreement(deltas: pd.DataFrame, alpha: float = 0.05, tol: float = 2e-4) -> pd.DataFrame:
    """Per family (system, metric, pooled / per-domain): does Holm on raw_p give corrected_p?"""
    rows = []
    families = deltas.assign(family=np.where(deltas["domain"] == "pooled", "pooled", "per_domain"))
    for (system, metric, family), group in families.groupby(["system", "metric", "family"]):
        raw = group["raw_p"].astype(float).to_numpy()
        published = group["corrected_p"].astype(float).to_numpy()
        holm, _ = holm_bonferroni(raw.tolist(), alpha)
        rows.append(
            {
                "system": system,
                "metric": metric,
                "family": family,
                "tests": len(group),
                "reproduced": bool(np.allclose(holm, published, atol=tol, equal_nan=True)),
                "corrected_below_raw": bool(np.any(published < raw - tol)),
            }
        )
    return pd.DataFrame(rows)


def check_claims(stats: PublishedStats) -> list[Claim]:
    """The paper's headline claims, each recomputed from the statistics."""
    claims = _pass_claims(stats)
    deltas = delta_table(stats)
    if not deltas.empty:
        claims.append(_holm_claim(holm_agreement(deltas)))
    return claims


def _holm_claim(check: pd.DataFrame) -> Claim:
    failed = check[~check["reproduced"]]
    impossible = check[check["corrected_below_raw"]]
    value = f"{int(check['reproduced'].sum())} of {len(check)} families reproduced"
    if len(failed):
        systems = sorted(failed["system"].unique())
        value += f"; not reproduced: {len(failed)} families of {', '.join(systems)}"
    if len(impossible):
        value += f" ({len(impossible)} with a corrected p below its raw p)"
    return Claim(
        id="holm_reproduced",
        statement="Published corrected p-values follow Holm-Bonferroni within each family "
        "(per domain: system x metric over conditions x domains; pooled: over conditions)",
        holds=failed.empty,
        value=value,
        details={
            "families": len(check),
            "reproduced": int(check["reproduced"].sum()),
            "not_reproduced": [f"{r.system}/{r.metric}/{r.family}" for r in failed.itertuples()],
        },
    )


def _pass_claims(stats: PublishedStats) -> list[Claim]:
    p1 = published_points(stats, "pass@1")
    both = p1[(p1["eva_a"] > 0.5) & (p1["eva_x"] > 0.5)]
    best = p1.assign(low=p1[["eva_a", "eva_x"]].min(axis=1)).sort_values("low").iloc[-1]
    claims = [
        Claim(
            id="no_system_above_half_on_both",
            statement="No system exceeds 0.5 on both EVA-A and EVA-X pass@1",
            holds=both.empty,
            value=(
                f"{len(both)} of {len(p1)} systems above 0.5 on both"
                + (f" ({', '.join(both['system'])})" if len(both) else "")
                + f"; best min(EVA-A, EVA-X) = {best['low']:.3f} ({best['system']})"
            ),
            details={
                "above_both": both["system"].tolist(),
                "best_system": best["system"],
                "best_min": float(best["low"]),
                "n_systems": len(p1),
            },
        )
    ]
    for view in VIEW_KEYS:
        frame = published_points(stats, view)
        front = frame[frame["on_front"]].sort_values("eva_a")
        claims.append(
            Claim(
                id=f"frontier_{'pass_at_1' if view == 'pass@1' else 'pass_pow_k'}",
                statement=f"Systems on the EVA-A vs EVA-X {view} Pareto front",
                holds=None,
                value=", ".join(
                    f"{r.system} ({r.eva_a:.3f}, {r.eva_x:.3f})" for r in front.itertuples()
                ),
                details={"front": front["system"].tolist()},
            )
        )
    for dim, (at_k, pow_k) in GAP_KEYS.items():
        gaps = np.array([s.point(at_k) - s.point(pow_k) for s in stats.systems])
        gaps = gaps[~np.isnan(gaps)]
        claims.append(
            Claim(
                id=f"median_gap_{dim}",
                statement=f"Median pass@k - pass^k gap for {dim}",
                holds=None,
                value=f"{float(np.median(gaps)):.3f} over {gaps.size} systems "
                f"(range {gaps.min():.3f} to {gaps.max():.3f})",
                details={"median": float(np.median(gaps)), "n_systems": int(gaps.size)},
            )
        )
    return claims


def _delta_figures(deltas: pd.DataFrame, out_dir: Path) -> list[str]:
    pooled = deltas[deltas["domain"] == "pooled"]
    files: list[str] = []
    for condition in sorted(pooled["condition"].unique()):
        sub = pooled[pooled["condition"] == condition]
        metrics = list(dict.fromkeys(sub["metric"]))
        values = (
            sub.pivot(index="system", columns="metric", values="point")
            .reindex(columns=metrics)
            .astype(float)
        )
        labels = sub.assign(
            label=[
                f"{p:+.2f}{s}" if p is not None and np.isfinite(p) else ""
                for p, s in zip(sub["point"], sub["stars"], strict=True)
            ]
        )
        labels = (
            labels.pivot(index="system", columns="metric", values="label")
            .reindex_like(values)
            .fillna("")
        )
        fig = plot_heatmap(
            values,
            labels,
            f"Published perturbation deltas vs clean: {condition} (pooled; Holm-corrected stars)",
            "perturbed - clean",
        )
        files += save_figure(fig, out_dir, f"published_deltas_{condition}")
    return files


def overlay_points(data: RunData, view: str, condition: str = "clean") -> pd.DataFrame:
    """A run's systems as points for the published axes (pooled over domains)."""
    from analysis.consistency import DIMENSIONS, pareto_points, rates

    table = rates(data, list(DIMENSIONS), seed=0, n_boot=2000)
    if table.empty or condition not in set(table["condition"]):
        return pd.DataFrame(columns=PARETO_COLUMNS)
    return pareto_points(table, view, condition).assign(group="run")


def analyze_published(
    stats_path: Path,
    out_dir: Path,
    overlay: RunData | None = None,
    systems: list[str] | None = None,
    condition: str = "clean",
) -> AnalysisResult:
    """Figure 2, the delta heatmaps, the claims, and (optionally) a run on the front."""
    stats = load_published(stats_path, systems)
    claims = check_claims(stats)
    panels = {view: published_points(stats, view) for view in VIEW_KEYS}
    overlays, placed = {}, []
    if overlay is not None:
        for view, frame in panels.items():
            mine = overlay_points(overlay, view, condition)
            both = pd.concat([frame, mine], ignore_index=True)
            mine = mine.assign(on_front=pareto_front(both["eva_a"], both["eva_x"])[len(frame) :])
            overlays[view] = mine
            placed.append(mine.assign(view=view))
    names = [f"{s.id} [{s.type}]" for s in stats.systems]
    figure = plot_pareto(
        panels,
        f"EVA-A vs EVA-X: pass@1 and pass^k Pareto fronts ({len(stats.systems)} published systems)",
        overlays,
        names,
    )
    files = save_figure(figure, out_dir, "published_pareto")
    deltas = delta_table(stats)
    tables = {
        "published_points": pd.concat(
            [f.assign(view=v) for v, f in panels.items()], ignore_index=True
        ),
        "published_claims": pd.DataFrame([c.model_dump(exclude={"details"}) for c in claims]),
    }
    if not deltas.empty:
        files += _delta_figures(deltas, out_dir)
        tables["published_deltas"] = deltas
        tables["published_holm_check"] = holm_agreement(deltas)
    if placed:
        tables["published_overlay"] = pd.concat(placed, ignore_index=True)
    summary = {"systems": len(stats.systems), "claims": [c.model_dump() for c in claims]}
    return AnalysisResult(name="published", tables=tables, figures=files, summary=summary)
