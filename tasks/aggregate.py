"""Aggregation (EVA spec 5): pass@k / pass^k and bootstrap CIs over stored composites.

Pure numpy / pandas over stored values; nothing here reads files or runs metrics. One
attempt's composites are :mod:`tasks.composites`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tasks.composites import PASS_DIMENSIONS
from tasks.metrics.base import METRICS, TOLERANCE

N_BOOT = 2000
ALPHA = 0.05
CI_DIGITS = 4
ROW_COLUMNS = ["system", "domain", "condition", "scenario_id", "trial", "dimension", "value"]
UNIT_COLUMNS = ["system", "domain", "condition", "scenario_id"]


# --------------------------------------------------------------------------- pass@k


def _check_counts(n: int, c: int, k: int) -> None:
    if n < 0 or c < 0 or k < 0 or c > n or k > n:
        raise ValueError(f"need 0 <= c <= n and 0 <= k <= n, got n={n}, c={c}, k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: chance that at least one of k trials drawn from n passes."""
    _check_counts(n, c, k)
    if k == 0 or n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_pow_k(n: int, c: int, k: int) -> float:
    """Observed pass^k: chance that all k trials drawn from n pass."""
    _check_counts(n, c, k)
    if k == 0:
        return 1.0
    if c < k:
        return 0.0
    return math.comb(c, k) / math.comb(n, k)


def pass_pow_k_theoretical(n: int, c: int, k: int) -> float:
    """(c / n) ** k."""
    _check_counts(n, c, k)
    if n == 0:
        raise ValueError("pass^k (theoretical) needs at least one trial (n=0)")
    return (c / n) ** k


# --------------------------------------------------------------------------- bootstrap


def seed_from_name(name: str) -> int:
    """First 4 bytes (big-endian) of SHA-256 of ``name``, modulo 2**31 (spec 5.3)."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "big") % 2**31


def _counts_matrix(n: int, seed: int, n_boot: int) -> np.ndarray:
    """How often each of n items is drawn in each resample: one (n_boot x n) index draw."""
    idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    flat = (np.arange(n_boot)[:, None] * n + idx).ravel()
    return np.bincount(flat, minlength=n_boot * n).reshape(n_boot, n).astype(np.float64)


def _cis(means: np.ndarray, alpha: float) -> list[tuple[float, float]]:
    """Percentile bounds of each row of resampled means."""
    bounds = np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=1)
    return [(round(float(lo), CI_DIGITS), round(float(hi), CI_DIGITS)) for lo, hi in bounds.T]


def bootstrap_ci_batched(
    groups: Sequence[Sequence[float]],
    seed: int,
    n_boot: int = N_BOOT,
    alpha: float = ALPHA,
) -> list[tuple[float | None, float | None]]:
    """Percentile CIs of the mean for many samples at once (NaNs dropped).

    Every sample uses a generator seeded with ``seed``, as the reference does for each
    metric, so a group's CI does not depend on which other groups are in the batch. Groups
    of the same size share one index draw and are resampled with one matrix product.
    """
    clean = [np.asarray(g, dtype=np.float64) for g in groups]
    clean = [g[~np.isnan(g)] for g in clean]
    out: list[tuple[float | None, float | None]] = [(None, None)] * len(clean)
    by_size: dict[int, list[int]] = {}
    for i, values in enumerate(clean):
        if values.size:
            by_size.setdefault(values.size, []).append(i)
    for size, members in by_size.items():
        counts = _counts_matrix(size, seed, n_boot)
        stacked = np.stack([clean[i] for i in members])  # (groups, size)
        means = stacked @ counts.T / size  # (groups, n_boot)
        for i, ci in zip(members, _cis(means, alpha), strict=True):
            out[i] = ci
    return out


def bootstrap_ci(
    values: Sequence[float], seed: int, n_boot: int = N_BOOT, alpha: float = ALPHA
) -> tuple[float | None, float | None]:
    """Percentile bootstrap CI of the mean; (None, None) for an empty sample."""
    return bootstrap_ci_batched([values], seed, n_boot, alpha)[0]


# --------------------------------------------------------------------------- aggregate


def dimension_threshold(dimension: str, overrides: Mapping[str, float] | None = None) -> float:
    """Pass threshold of a dimension: composites pass at 1.0, metrics at their own."""
    if overrides and dimension in overrides:
        return overrides[dimension]
    if dimension in PASS_DIMENSIONS:
        return 1.0
    if dimension in METRICS:
        return METRICS.get(dimension).info.threshold
    return 0.5


def counts_pass_at_k(dimension: str) -> bool:
    """pass@k is reported for composites and for metrics not excluded from it."""
    if dimension in METRICS:
        return not METRICS.get(dimension).info.exclude_from_pass_at_k
    return not dimension.endswith("_mean")


def _check_rows(rows: pd.DataFrame) -> None:
    missing = [c for c in ROW_COLUMNS if c not in rows.columns]
    if missing:
        raise ValueError(f"aggregate: rows lack column(s) {missing}; expected {ROW_COLUMNS}")
    dupes = rows.duplicated(subset=[*UNIT_COLUMNS, "trial", "dimension"])
    if dupes.any():
        first = rows[dupes].iloc[0][[*UNIT_COLUMNS, "trial", "dimension"]].to_dict()
        raise ValueError(f"aggregate: more than one row per trial and dimension, e.g. {first}")


STAT_COLUMNS = ("mean", "pass_at_1", "pass_at_k", "pass_pow_k", "pass_pow_k_theoretical")
PASS_K_COLUMNS = ("pass_at_k", "pass_pow_k", "pass_pow_k_theoretical")
# Figures stored without CIs, each named for what it averages over (see ``aggregate``).
NAMED_COLUMNS = ("mean_over_trials", "mean_over_scenarios", "pass_at_1_over_valid_trials")


def _passed(values: pd.Series, thresholds: pd.Series) -> pd.Series:
    """1.0 / 0.0 per value at its threshold (tolerance 1e-9); NaN stays NaN."""
    ok = (values > thresholds) | np.isclose(values, thresholds, rtol=0.0, atol=TOLERANCE)
    return ok.astype(np.float64).where(values.notna())


def unit_table(
    rows: pd.DataFrame,
    keys: list[str],
    k: int | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """One row per scenario (and group): trials, n valid values, c passes, mean, pass stats.

    ``k`` defaults to the largest number of trials of a scenario in its group. A scenario
    with fewer than k valid values (a missing, errored or skipped trial) gets NaN pass@1,
    pass@k and pass^k alike, as the reference excludes it (spec 5.4: "if fewer than k valid
    trials remain the record is excluded for that metric"); ``pass_at_1_over_valid_trials``
    keeps evaflow's earlier reading, c / n over whatever trials are valid.
    """
    dims = rows["dimension"].astype(str)
    limits = {d: dimension_threshold(d, thresholds) for d in dims.unique()}
    values = pd.to_numeric(rows["value"], errors="coerce").astype(np.float64)
    limit = dims.map(limits).astype(np.float64)
    frame = rows.assign(_v=values, _p=_passed(values, limit), _thr=limit)
    unit_keys = list(dict.fromkeys([*keys, *UNIT_COLUMNS]))
    units = (
        frame.groupby(unit_keys, sort=True, dropna=False)
        .agg(
            trials=("_v", "size"),
            n=("_v", "count"),
            c=("_p", "sum"),
            mean=("_v", "mean"),
            total=("_v", "sum"),
            threshold=("_thr", "first"),
        )
        .reset_index()
    )
    units["k"] = k if k else units.groupby(keys, dropna=False)["trials"].transform("max")
    units["pass_at_1_over_valid_trials"] = units["c"] / units["n"].where(units["n"] > 0)
    complete = (units["n"] > 0) & (units["n"] >= units["k"])
    units["pass_at_1"] = units["pass_at_1_over_valid_trials"].where(complete)
    stats = [
        _pass_k_stats(int(n), int(c), int(kk))
        for n, c, kk in zip(units["n"], units["c"], units["k"], strict=True)
    ]
    for i, col in enumerate(PASS_K_COLUMNS):
        units[col] = [s[i] for s in stats]
    return units


def _pass_k_stats(n: int, c: int, k: int) -> tuple[float, float, float]:
    if n == 0 or n < k:
        return (math.nan, math.nan, math.nan)
    return pass_at_k(n, c, k), pass_pow_k(n, c, k), pass_pow_k_theoretical(n, c, k)


def _group_summary(
    units: dict[str, np.ndarray], rows: np.ndarray, dimension: str
) -> tuple[dict[str, Any], dict[str, list[float]]]:
    """Summary of one group from the unit table's columns (``rows`` = its unit positions)."""
    n = units["n"][rows]
    present = rows[n > 0]
    passes = counts_pass_at_k(dimension)
    columns = STAT_COLUMNS if passes else ("mean",)
    samples = {}
    for col in columns:
        values = units[col][present]
        samples[col] = values[~np.isnan(values)].tolist()
    n_attempts = int(n.sum())
    summary: dict[str, Any] = {
        "k": int(units["k"][rows].max()),
        "threshold": float(units["threshold"][rows[0]]),
        "n_scenarios": int(present.size),
        "n_attempts": n_attempts,
        "excluded_scenarios": int(rows.size - present.size),
        "incomplete_scenarios": int(np.isnan(units["pass_at_1"][present]).sum()),
    }
    for col in STAT_COLUMNS:
        values = samples.get(col, [])
        summary[col] = round(float(np.mean(values)), 4) if values else float("nan")
    summary["mean_over_scenarios"] = summary["mean"]
    total = float(units["total"][present].sum())
    summary["mean_over_trials"] = round(total / n_attempts, 4) if n_attempts else float("nan")
    loose = units["pass_at_1_over_valid_trials"][present]
    summary["pass_at_1_over_valid_trials"] = (
        round(float(np.mean(loose)), 4) if passes and present.size else float("nan")
    )
    return summary, samples


def _group_positions(units: pd.DataFrame, keys: list[str]) -> tuple[pd.DataFrame, list[np.ndarray]]:
    """Group identities (sorted) and the unit-table positions of each group."""
    gid = units.groupby(keys, sort=True, dropna=False).ngroup().to_numpy()
    order = np.argsort(gid, kind="stable")
    _, first, counts = np.unique(gid[order], return_index=True, return_counts=True)
    positions = np.split(order, np.cumsum(counts)[:-1])
    idents = units.iloc[order[first]][keys].reset_index(drop=True)
    return idents, positions


def aggregate(
    rows: pd.DataFrame,
    by: list[str],
    *,
    seed: int | str = 0,
    k: int | None = None,
    thresholds: Mapping[str, float] | None = None,
    n_boot: int = N_BOOT,
    alpha: float = ALPHA,
) -> pd.DataFrame:
    """Per-group pass@1 / pass@k / pass^k (observed and theoretical) and mean, with CIs.

    ``rows``: one row per (system, domain, condition, scenario_id, trial, dimension) with
    ``value`` in [0, 1] or NaN (missing, errored, skipped or invalid). The resampling unit
    is the scenario (system, domain, condition, scenario_id): its trial values are reduced
    to per-scenario statistics first. ``k`` defaults to the largest number of trials of a
    scenario in the group. Scenarios with no value are excluded and counted
    (``excluded_scenarios``). Scenarios with fewer than k values (``incomplete_scenarios``)
    are left out of pass@1, pass@k and pass^k alike, as in the reference (spec 5.4), and
    still count for the means. Dimensions excluded from pass@k report only the means.

    The figures, by what they average over:

    * ``pass_at_1``, ``pass_at_k``, ``pass_pow_k``, ``pass_pow_k_theoretical``: mean over
      the complete scenarios (>= k valid trials) of the per-scenario statistic (spec 5.4);
    * ``pass_at_1_over_valid_trials``: mean over every scenario with a value of its c / n
      over its valid trials (evaflow's earlier pass@1; not a reference figure);
    * ``mean_over_trials``: mean over every valid trial value, what the reference's
      ``per_metric.mean`` and composite ``mean`` average (spec 5.2);
    * ``mean_over_scenarios`` (= ``mean``, whose CI it carries): mean of per-scenario means,
      the quantity whose bootstrap CI the reference reports (spec 5.3). The two means
      differ when scenarios have unequal numbers of valid trials.

    ``dimension`` is always part of the grouping. To pool over domains, leave ``domain``
    out of ``by`` (do not relabel it: the domain is part of a scenario's identity).
    """
    _check_rows(rows)
    keys = list(by) if "dimension" in by else [*by, "dimension"]
    if rows.empty:
        return pd.DataFrame(columns=_output_columns(keys))
    seed_value = seed_from_name(seed) if isinstance(seed, str) else int(seed)
    units = unit_table(rows, keys, k, thresholds)
    summaries: list[dict[str, Any]] = []
    samples: list[dict[str, list[float]]] = []
    idents, positions = _group_positions(units, keys)
    columns = {
        c: units[c].to_numpy(dtype=np.float64)
        for c in (*STAT_COLUMNS, "pass_at_1_over_valid_trials", "total", "n", "k", "threshold")
    }
    for ident, rows_at in zip(idents.to_dict("records"), positions, strict=True):
        summary, sample = _group_summary(columns, rows_at, str(ident["dimension"]))
        summaries.append({str(key): value for key, value in ident.items()} | summary)
        samples.append(sample)
    _attach_cis(summaries, samples, seed_value, n_boot, alpha)
    return pd.DataFrame(summaries, columns=_output_columns(keys))


def _attach_cis(
    summaries: list[dict[str, Any]],
    samples: list[dict[str, list[float]]],
    seed: int,
    n_boot: int,
    alpha: float,
) -> None:
    flat = [(i, col) for i, s in enumerate(samples) for col in STAT_COLUMNS]
    cis = bootstrap_ci_batched([samples[i].get(col, []) for i, col in flat], seed, n_boot, alpha)
    for (i, col), (low, high) in zip(flat, cis, strict=True):
        summaries[i][f"{col}_ci_lower"] = float("nan") if low is None else low
        summaries[i][f"{col}_ci_upper"] = float("nan") if high is None else high


def _output_columns(keys: list[str]) -> list[str]:
    stats = [c for col in STAT_COLUMNS for c in (col, f"{col}_ci_lower", f"{col}_ci_upper")]
    counts = [
        "k",
        "threshold",
        "n_scenarios",
        "n_attempts",
        "excluded_scenarios",
        "incomplete_scenarios",
    ]
    return [*keys, *stats, *NAMED_COLUMNS, *counts]
