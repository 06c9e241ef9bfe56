"""The noise floor between two systems: is a difference in pass rate or score real?

For every pair of arms (an arm is a system of a run; the same system in two runs is two
arms, ``system@run``) and every dimension (EVA-A pass, EVA-X pass, the composites' means),
within each condition:

* the **paired difference**: both arms' trials are averaged within each scenario (domain,
  scenario id), the scenarios scored by both give d_i = mean_A,i - mean_B,i, and the
  difference is mean(d); its 95% CI is the percentile scenario bootstrap of
  ``tasks.aggregate`` (EVA spec 5.3, the routine behind the ``aggregates`` CIs), and the
  two-sided sign-flip p-value is spec 8.3's test. *Distinguishable* means the CI excludes 0.
* the **minimum detectable difference** at the run's N scenarios and k trials, by the
  normal approximation of a paired two-sided test (Cohen 1988; any power-analysis text):
  ``MDD = (z_{1-alpha/2} + z_{power}) * SD(d) / sqrt(N)``, with SD(d) the sample SD
  (ddof 1) of the paired differences. k enters through SD(d): each d_i averages k trials,
  so more trials shrink the trial-noise part of SD(d). alpha 0.05, power 0.8: 2.80 SD/sqrt(N).
* the **scenarios needed** to detect the observed difference at that alpha and power, the
  same formula solved for N: ``ceil(((z_{1-alpha/2} + z_{power}) * SD(d) / |mean(d)|)^2)``.
* the **trial flip rate** of each arm (pass dimensions): the share of scenarios with at
  least two kept trials whose pass changes between trials (tau-bench's pass^k argument).

Pure functions over ``analysis.data``'s long frame; ``evaflow compare`` prints
``describe`` lines, ``evaflow analyze noise-floor`` writes the table and the figure.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from pydantic import BaseModel, ConfigDict, Field
from scipy.stats import norm

from analysis.base import ANALYSES, AnalysisResult, present, skipped
from analysis.data import RunData
from analysis.plotting import save_figure
from analysis.stats import bootstrap_ci, cell_seed, sign_flip_test
from tasks.aggregate import N_BOOT
from tasks.metrics.base import TOLERANCE

DIMENSIONS = ("EVA-A_pass", "EVA-X_pass", "EVA-A_mean", "EVA-X_mean", "EVA-overall_mean")
PASS_DIMENSIONS = ("EVA-A_pass", "EVA-X_pass", "EVA-overall_pass")
LABELS = {
    "EVA-A_pass": "EVA-A",
    "EVA-X_pass": "EVA-X",
    "EVA-overall_pass": "EVA-overall",
    "EVA-A_mean": "EVA-A mean",
    "EVA-X_mean": "EVA-X mean",
    "EVA-overall_mean": "EVA-overall mean",
}
SCENARIO = ["domain", "scenario_id"]
Arm = tuple[str, str]
"""(run_id, system)."""


class NoiseFloorConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    dimensions: list[str] = Field(default_factory=lambda: list(DIMENSIONS))
    alpha: float = Field(default=0.05, gt=0, lt=1, description="Two-sided test level")
    power: float = Field(default=0.8, gt=0, lt=1, description="Power the MDD is stated at")
    n_bootstrap: int = Field(default=N_BOOT, ge=100, description="Bootstrap resamples")
    n_permutations: int = Field(default=10_000, ge=100, description="Sign-flip patterns")
    seed: int = Field(default=42, ge=0)
    conditions: list[str] | None = Field(default=None, description="Default: every condition")


class PairedDifference(BaseModel):
    """Paired difference A - B over the scenarios both arms scored."""

    model_config = ConfigDict(frozen=True)
    n: int = Field(description="Paired scenarios N")
    diff: float = Field(description="mean(d_i); NaN without pairs")
    ci_lower: float
    ci_upper: float
    sd: float = Field(description="SD of the paired differences (ddof 1); NaN when N < 2")
    mdd: float = Field(description="Minimum detectable difference at N, alpha, power")
    scenarios_needed: float = Field(description="N to detect |diff|; NaN when diff is 0")
    p_value: float = Field(description="Two-sided sign-flip p-value of mean(d) = 0")
    distinguishable: bool = Field(description="The CI excludes 0")


def z_total(alpha: float = 0.05, power: float = 0.8) -> float:
    """z_{1-alpha/2} + z_{power}: 1.960 + 0.842 = 2.802 at the defaults."""
    return float(norm.ppf(1 - alpha / 2) + norm.ppf(power))


def min_detectable_difference(sd: float, n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """(z_{1-alpha/2} + z_{power}) * sd / sqrt(n): shrinks as 1/sqrt(n)."""
    if n < 1 or not math.isfinite(sd):
        return math.nan
    return z_total(alpha, power) * sd / math.sqrt(n)


def scenarios_needed(sd: float, diff: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Scenarios for a paired test to detect ``diff`` (at least 2; NaN if diff is 0)."""
    if not (math.isfinite(sd) and math.isfinite(diff)) or abs(diff) < TOLERANCE:
        return math.nan
    return float(max(2, math.ceil((z_total(alpha, power) * sd / abs(diff)) ** 2)))


def paired_difference(
    deltas: np.ndarray, seed: int, config: NoiseFloorConfig | None = None
) -> PairedDifference:
    """Difference, scenario-bootstrap CI, MDD and scenarios needed of paired deltas."""
    cfg = config or NoiseFloorConfig()
    d = np.asarray(deltas, dtype=np.float64)
    d = d[~np.isnan(d)]
    n = int(d.size)
    lo, hi = bootstrap_ci(d.tolist(), seed, cfg.n_bootstrap, cfg.alpha)
    # Rounded so that a difference that is 0 up to float error prints as +0.00, not -0.00.
    diff = round(float(d.mean()), 12) + 0.0 if n else math.nan
    sd = float(d.std(ddof=1)) if n >= 2 else math.nan
    lower, upper = (math.nan if lo is None else lo), (math.nan if hi is None else hi)
    return PairedDifference(
        n=n,
        diff=diff,
        ci_lower=lower,
        ci_upper=upper,
        sd=sd,
        # No spread (every d_i equal): the normal approximation has nothing to scale, so
        # the MDD and the scenarios needed are undefined rather than 0.
        mdd=min_detectable_difference(sd, n, cfg.alpha, cfg.power) if sd > 0 else math.nan,
        scenarios_needed=scenarios_needed(sd, diff, cfg.alpha, cfg.power) if sd > 0 else math.nan,
        p_value=sign_flip_test(d, cfg.n_permutations, seed).p_value,
        distinguishable=bool(n >= 2 and (lower > 0 or upper < 0)),
    )


def arm_labels(arms: list[Arm]) -> dict[Arm, str]:
    """``system``, or ``system@run`` for a system that is an arm in more than one run."""
    names = [system for _, system in arms]
    return {(run, s): s if names.count(s) == 1 else f"{s}@{run}" for run, s in arms}


def all_arms(values: pd.DataFrame) -> list[Arm]:
    pairs = values[["run_id", "system"]].drop_duplicates().sort_values(["run_id", "system"])
    return [(str(r), str(s)) for r, s in pairs.itertuples(index=False)]


def scenario_table(values: pd.DataFrame, arms: list[Arm], dimensions: list[str]) -> pd.DataFrame:
    """Per (arm, condition, scenario, dimension): trial mean, trials, and whether pass flipped."""
    labels = arm_labels(arms)
    names = pd.DataFrame(
        [(run, system, label) for (run, system), label in labels.items()],
        columns=["run_id", "system", "arm"],
    )
    sub = values[values["metric"].isin(dimensions)].dropna(subset=["value"])
    sub = sub.merge(names, on=["run_id", "system"], how="inner")
    # A pass composite passes at 1.0, within the spec's comparison tolerance.
    sub = sub.assign(passed=(sub["value"] >= 1.0 - TOLERANCE).astype(np.float64))
    grouped = sub.groupby(["arm", "condition", *SCENARIO, "metric"], sort=True)
    out = grouped.agg(
        mean=("value", "mean"), trials=("value", "size"), lo=("passed", "min"), hi=("passed", "max")
    ).reset_index()
    out["flipped"] = out["lo"] != out["hi"]
    return out.drop(columns=["lo", "hi"])


def flip_rates(scenarios: pd.DataFrame) -> pd.DataFrame:
    """Per arm, condition and pass dimension: share of multi-trial scenarios that flipped."""
    multi = scenarios[scenarios["metric"].isin(PASS_DIMENSIONS) & (scenarios["trials"] >= 2)]
    columns = ["arm", "condition", "metric", "n_scenarios", "n_flipped", "flip_rate"]
    if multi.empty:
        return pd.DataFrame(columns=columns)
    out = (
        multi.groupby(["arm", "condition", "metric"], sort=True)
        .agg(n_scenarios=("flipped", "size"), n_flipped=("flipped", "sum"))
        .reset_index()
    )
    out["n_flipped"] = out["n_flipped"].astype(np.int64)
    out["flip_rate"] = out["n_flipped"] / out["n_scenarios"]
    return out[columns]


def _pair_row(
    a: pd.DataFrame, b: pd.DataFrame, ident: dict[str, Any], config: NoiseFloorConfig
) -> dict[str, Any]:
    both = a.merge(b, on=SCENARIO, suffixes=("_a", "_b"))
    deltas = (both["mean_a"] - both["mean_b"]).to_numpy(dtype=np.float64)
    seed = cell_seed(config.seed, *ident.values())
    result = paired_difference(deltas, seed, config)
    # k: the most trials a scenario has, per arm (aggregate's default k).
    k_a = int(both["trials_a"].max()) if len(both) else 0
    k_b = int(both["trials_b"].max()) if len(both) else 0
    return {**ident, **result.model_dump(), "k_a": k_a, "k_b": k_b}


def pair_table(scenarios: pd.DataFrame, config: NoiseFloorConfig) -> pd.DataFrame:
    """One row per (condition, arm pair, dimension), pairs in the arms' first-seen order."""
    rows = []
    flips = flip_rates(scenarios).set_index(["arm", "condition", "metric"])["flip_rate"]
    order = list(dict.fromkeys(scenarios["arm"]))
    by_cell = {key: frame for key, frame in scenarios.groupby(["arm", "condition", "metric"])}
    for condition in sorted(scenarios["condition"].unique()):
        for arm_a, arm_b in itertools.combinations(order, 2):
            for dim in config.dimensions:
                a, b = by_cell.get((arm_a, condition, dim)), by_cell.get((arm_b, condition, dim))
                if a is None or b is None:
                    continue
                ident = {"condition": condition, "arm_a": arm_a, "arm_b": arm_b, "dimension": dim}
                row = _pair_row(a, b, ident, config)
                row["flip_rate_a"] = flips.get((arm_a, condition, dim), math.nan)
                row["flip_rate_b"] = flips.get((arm_b, condition, dim), math.nan)
                rows.append(row)
    return pd.DataFrame(rows)


def noise_floor_tables(
    values: pd.DataFrame, config: NoiseFloorConfig, arms: list[Arm] | None = None
) -> dict[str, pd.DataFrame]:
    """``noise_floor`` (one row per pair and dimension) and ``noise_floor_flips`` (per arm)."""
    chosen = arms if arms is not None else all_arms(values)
    if config.conditions is not None:
        values = values[values["condition"].isin(config.conditions)]
    scenarios = scenario_table(values, chosen, config.dimensions)
    if scenarios.empty or len(chosen) < 2:
        return {}
    # Arms in the order they were asked for, so "A - B" reads as the caller named them.
    labels = arm_labels(chosen)
    rank = {label: i for i, label in enumerate(labels[a] for a in chosen)}
    scenarios = scenarios.sort_values("arm", key=lambda s: s.map(rank), kind="stable")
    table = pair_table(scenarios, config)
    if table.empty:
        return {}
    return {"noise_floor": table, "noise_floor_flips": flip_rates(scenarios)}


def records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """The table's rows as ``describe`` takes them."""
    return [{str(key): value for key, value in row.items()} for row in table.to_dict("records")]


def describe(row: dict[str, Any]) -> str:
    """One line, e.g. 'EVA-A +0.07 [-0.02, 0.15]: not distinguishable at N=30, k=3; ...'."""
    label = LABELS.get(str(row["dimension"]), str(row["dimension"]))
    n, k_a, k_b = int(row["n"]), int(row["k_a"]), int(row["k_b"])
    k = f"{k_a}" if k_a == k_b else f"{k_a} vs {k_b}"
    if n < 2:
        return f"{label}: {n} scenario(s) scored by both, too few to compare"
    verdict = "distinguishable" if row["distinguishable"] else "not distinguishable"
    d = _decimals(row)
    line = (
        f"{label} {row['diff']:+.{d}f} [{row['ci_lower']:.{d}f}, {row['ci_upper']:.{d}f}]: "
        f"{verdict} at N={n}, k={k}{_power_text(row, d)}"
    )
    flips = [row.get("flip_rate_a", math.nan), row.get("flip_rate_b", math.nan)]
    if not any(math.isnan(f) for f in flips):
        line += f"; flip rate {flips[0]:.2f} vs {flips[1]:.2f}"
    return line


def _decimals(row: dict[str, Any]) -> int:
    """2 decimals, or 3 when the line's figures are all below 0.05 but not all 0."""
    figures = [abs(row[c]) for c in ("diff", "ci_lower", "ci_upper", "mdd")]
    figures = [f for f in figures if math.isfinite(f)]
    return 3 if any(figures) and max(figures) < 0.05 else 2


def _power_text(row: dict[str, Any], d: int) -> str:
    if math.isnan(row["mdd"]):
        same = "the same" if row["diff"] == 0 else f"{row['diff']:+.{d}f}"
        return f"; {same} on every scenario, no spread to size an MDD from"
    text = f" (MDD {row['mdd']:.{d}f})"
    needed = row["scenarios_needed"]
    if math.isnan(needed):
        return text + "; no difference observed"
    return text + f"; about {_two_figures(int(needed))} scenarios needed"


def _two_figures(n: int) -> int:
    """``n`` to two significant figures ("about 120", not "about 118")."""
    return n if n < 100 else int(round(n, 1 - len(str(n)) + 1))


def _figure(table: pd.DataFrame, alpha: float, power: float) -> Figure:
    dims = list(dict.fromkeys(table["dimension"]))
    rows = table[["condition", "arm_a", "arm_b"]].drop_duplicates().reset_index(drop=True)
    height = 1.6 + 0.35 * len(rows)
    fig = Figure(figsize=(3.6 * len(dims), height), layout="constrained")
    axes = fig.subplots(1, len(dims), squeeze=False, sharey=True)[0]
    names = [f"{r.arm_a} − {r.arm_b} · {r.condition}" for r in rows.itertuples()]
    for ax, dim in zip(axes, dims, strict=True):
        sub = table[table["dimension"] == dim].merge(rows.reset_index(), on=list(rows.columns))
        y = sub["index"].to_numpy()
        # The band is each pair's own MDD: a difference inside it is below what N can show.
        ax.barh(y, 2 * sub["mdd"], left=-sub["mdd"], height=0.6, color="#ddd", label="±MDD")
        for seen, color in ((True, "#c0392b"), (False, "#34495e")):
            pick = sub["distinguishable"].to_numpy() == seen
            part = sub[pick]
            err = np.vstack([part["diff"] - part["ci_lower"], part["ci_upper"] - part["diff"]])
            ax.errorbar(
                part["diff"], y[pick], xerr=np.abs(err), fmt="o", color=color, ms=4, capsize=3
            )
        ax.axvline(0.0, color="#888", linewidth=0.8)
        ax.set_title(LABELS.get(dim, dim), fontsize=9)
        ax.set_xlabel("paired difference A − B")
    axes[0].set_yticks(range(len(rows)), names, fontsize=7)
    axes[0].invert_yaxis()
    axes[0].legend(fontsize=7, loc="lower right")
    fig.suptitle(
        f"Paired differences, 95% scenario-bootstrap CIs (red: CI excludes 0); "
        f"grey: MDD at alpha {alpha}, power {power}",
        fontsize=9,
    )
    return fig


@ANALYSES.register("noise-floor")
def analyze_noise_floor(data: RunData, out_dir: Path, params: dict[str, Any]) -> AnalysisResult:
    """Paired differences, MDD and flip rates for every pair of arms of the runs."""
    config = NoiseFloorConfig(**params)
    dims = present(data, config.dimensions)
    tables = noise_floor_tables(data.values, config.model_copy(update={"dimensions": dims}))
    if not tables:
        return skipped("noise-floor", "needs two systems (or runs) scoring the same scenarios")
    table = tables["noise_floor"]
    summary: dict[str, dict[str, str]] = {}
    for r in records(table):
        pair = f"{r['arm_a']} − {r['arm_b']} · {r['condition']}"
        summary.setdefault(pair, {})[str(r["dimension"])] = describe(r)
    return AnalysisResult(
        name="noise-floor",
        tables=tables,
        summary=summary,
        figures=save_figure(_figure(table, config.alpha, config.power), out_dir, "noise_floor"),
    )


def resolve_arms(values: pd.DataFrame, runs: list[str], systems: list[str] | None) -> list[Arm]:
    """The arms ``evaflow compare RUN_A [RUN_B] --systems X,Y`` means; ``ValueError`` if none.

    One run: the named systems (default: all, when there are exactly two), every pair
    compared. Two runs: X from RUN_A and Y from RUN_B; a single name compares that system
    with itself across the runs (run-to-run noise); no name needs one system per run.
    """
    present_in = {
        run: sorted(values.loc[values["run_id"] == run, "system"].dropna().unique()) for run in runs
    }
    if len(runs) == 1 or runs[0] == runs[1]:
        run = runs[0]
        names = systems or present_in[run]
        _known(names, run, present_in[run])
        if len(set(names)) < 2:
            raise ValueError(
                f"compare needs at least two systems; run {run} has: "
                f"{', '.join(present_in[run]) or 'none with kept attempts'}"
            )
        return [(run, name) for name in dict.fromkeys(names)]
    if not systems:
        if all(len(found) == 1 for found in present_in.values()):
            return [(run, present_in[run][0]) for run in runs]
        raise ValueError(
            "--systems X,Y is required (X from the first run, Y from the second): "
            + "; ".join(
                f"{run} has {', '.join(found) or 'none'}" for run, found in present_in.items()
            )
        )
    if len(systems) > 2:
        raise ValueError(f"with two runs give one or two systems, got {len(systems)}")
    pair = systems if len(systems) == 2 else [systems[0], systems[0]]
    for run, name in zip(runs, pair, strict=True):
        _known([name], run, present_in[run])
    return list(zip(runs, pair, strict=True))


def _known(names: list[str], run: str, known: list[str]) -> None:
    missing = [n for n in names if n not in known]
    if missing:
        raise ValueError(
            f"system(s) {', '.join(missing)} not in run {run}; systems: {', '.join(known) or 'none'}"
        )
