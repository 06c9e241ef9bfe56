"""The DuckDB-reduced robustness study gives the tables, p-values and figures of the pandas one.

``reference_tables`` is the implementation the reduction replaced (long frame in pandas,
one ``sign_flip_test`` per cell), kept here as the oracle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from analysis.base import present
from analysis.data import RunData, load_run_data, scenario_means
from analysis.reduce import scenario_summary, summary_from_values
from analysis.robustness import (
    POOLED,
    RESULT_COLUMNS,
    RobustnessConfig,
    analyze_robustness,
    robustness_tables,
)
from analysis.stats import (
    bootstrap_ci,
    cell_seed,
    holm_bonferroni,
    sign_flip_test,
    significance_stars,
)
from tasks.store import Store
from tests.analysis.synthetic import RUN, TEXT_RUN

CONFIG = RobustnessConfig(n_permutations=2000, n_bootstrap=300)
CONFIGS = [
    CONFIG,
    CONFIG.model_copy(update={"min_trials": 3, "expected_scenarios": 5}),  # gate drops "mixed"
]
RUN_SETS = [[RUN], [RUN, TEXT_RUN]]  # one run, and two runs pooling their trials


# --------------------------------------------------------------------------- the oracle


def _reference_deltas(data: RunData, config: RobustnessConfig) -> pd.DataFrame:
    metrics = present(data, config.metrics)
    means = scenario_means(data.values[data.values["metric"].isin(metrics)])
    means = means[means["n_trials"] >= config.min_trials]
    clean = means[means["condition"] == config.baseline].drop(columns="condition")
    perturbed = means[means["condition"] != config.baseline]
    paired = perturbed.merge(
        clean, on=["system", "domain", "scenario_id", "metric"], suffixes=("", "_clean")
    )
    paired["delta"] = paired["mean"] - paired["mean_clean"]
    return paired.rename(columns={"mean": "perturbed_mean", "mean_clean": "clean_mean"})


def _reference_completeness(
    data: RunData, deltas: pd.DataFrame, config: RobustnessConfig
) -> pd.DataFrame:
    values = data.values.dropna(subset=["value"])
    base = values.groupby(["system", "domain", "condition"]).agg(
        scenarios=("scenario_id", "nunique"), attempts=("attempt_id", "nunique")
    )
    trials = values.groupby(["system", "domain", "condition", "scenario_id"])["trial"].nunique()
    per = trials.groupby(["system", "domain", "condition"]).agg(["min", "max"])
    per.columns = ["min_trials", "max_trials"]
    matched = deltas.groupby(["system", "domain", "condition"])["scenario_id"].nunique()
    out = base.join(per).join(matched.rename("matched_scenarios")).reset_index()
    out["matched_scenarios"] = out["matched_scenarios"].fillna(0).astype(int)
    out.loc[out["condition"] == config.baseline, "matched_scenarios"] = out["scenarios"]
    out["complete"] = (out["min_trials"] >= config.min_trials) & (
        out["matched_scenarios"] >= (config.expected_scenarios or 0)
    )
    return out


def _reference_cell(group: pd.DataFrame, config: RobustnessConfig, keys: tuple) -> dict:
    seed = cell_seed(config.seed, *keys)
    d = group["delta"].to_numpy(dtype=np.float64)
    test = sign_flip_test(d, config.n_permutations, seed)
    low, high = bootstrap_ci(d.tolist(), seed, n_boot=config.n_bootstrap, alpha=config.alpha)
    return {
        "n": test.n,
        "clean_mean": float(group["clean_mean"].mean()),
        "perturbed_mean": float(group["perturbed_mean"].mean()),
        "observed_mean_delta": test.observed,
        "ci_lower": np.nan if low is None else low,
        "ci_upper": np.nan if high is None else high,
        "raw_p": test.p_value,
        "exact": test.exact,
    }


def _reference_cells(deltas: pd.DataFrame, config: RobustnessConfig) -> pd.DataFrame:
    rows = []
    for family, keys in (("per_domain", ["domain"]), ("pooled", [])):
        for key, group in deltas.groupby(["system", "metric", "condition", *keys], sort=True):
            system, metric, condition, *domain = key
            cell_domain = domain[0] if domain else POOLED
            head = {"system": system, "metric": metric, "domain": cell_domain}
            head |= {"condition": condition, "family": family}
            rows.append(head | _reference_cell(group, config, (*key[:3], cell_domain)))
    cells = pd.DataFrame(rows)
    cells["corrected_p"] = np.nan
    cells["reject"] = False
    for _, fam in cells.groupby(["system", "metric", "family"], sort=False):
        corrected, reject = holm_bonferroni(fam["raw_p"].tolist(), config.alpha)
        cells.loc[fam.index, "corrected_p"] = corrected
        cells.loc[fam.index, "reject"] = reject
    cells["stars"] = [significance_stars(p) for p in cells["corrected_p"]]
    return cells[[*RESULT_COLUMNS, "family"]]


def reference_tables(data: RunData, config: RobustnessConfig) -> dict[str, pd.DataFrame]:
    deltas = _reference_deltas(data, config)
    complete = _reference_completeness(data, deltas, config)
    dropped = (
        sorted(complete.loc[~complete["complete"], "system"].unique())
        if config.expected_scenarios is not None
        else []
    )
    deltas = deltas[~deltas["system"].isin(dropped)]
    cells = _reference_cells(deltas, config)
    return {
        "robustness_scenario_deltas": deltas,
        "robustness_completeness": complete,
        "robustness_per_domain": cells[cells["family"] == "per_domain"].drop(columns="family"),
        "robustness_pooled": cells[cells["family"] == "pooled"].drop(columns="family"),
    }


# --------------------------------------------------------------------------- comparisons


def assert_same_tables(got: dict[str, pd.DataFrame], want: dict[str, pd.DataFrame]) -> None:
    assert list(got) == list(want)
    for name, frame in want.items():
        # Exact, not within 1e-12: CI bounds are rounded to 4 digits, so the means feeding
        # them must be the same bits (and are: analysis.reduce.kahan_means).
        pd.testing.assert_frame_equal(got[name], frame, check_exact=True, obj=name)


@pytest.mark.parametrize("runs", RUN_SETS, ids=["one-run", "two-runs"])
def test_duckdb_summary_is_the_pandas_summary(synth_store: Store, runs: list[str]) -> None:
    data = load_run_data(synth_store, runs)
    reduced = scenario_summary(data)
    assert not data.loaded  # reduced in DuckDB: the long frame was never built
    expected = summary_from_values(data.values)
    for field in ("means", "trials", "cells"):
        pd.testing.assert_frame_equal(
            getattr(reduced, field), getattr(expected, field), check_exact=True, obj=field
        )
    assert reduced.metrics == expected.metrics
    assert reduced.conditions == expected.conditions == data.conditions


@pytest.mark.parametrize("config", CONFIGS, ids=["default", "gated"])
@pytest.mark.parametrize("runs", RUN_SETS, ids=["one-run", "two-runs"])
def test_reduced_robustness_tables_are_the_reference(
    synth_store: Store, runs: list[str], config: RobustnessConfig
) -> None:
    data = load_run_data(synth_store, runs)
    got = robustness_tables(data, config)
    assert not data.loaded
    assert_same_tables(got, reference_tables(data, config))


def test_frames_without_a_store_take_the_pandas_path(synth_store: Store) -> None:
    stored = load_run_data(synth_store, [RUN])
    given = RunData([RUN], values=stored.values, attempts=stored.attempts)
    assert given.store is None
    assert_same_tables(robustness_tables(given, CONFIG), robustness_tables(stored, CONFIG))
    with pytest.raises(ValueError, match="store"):
        RunData([RUN], values=stored.values)


def _figure_bytes(data: RunData, out: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    result = analyze_robustness(data, out, CONFIG.model_dump())
    return result.summary, {Path(f).name: Path(f).read_bytes() for f in result.figures}


def test_figures_and_summary_are_the_same(synth_store: Store, tmp_path: Path) -> None:
    stored = load_run_data(synth_store, [RUN])
    given = RunData([RUN], values=stored.values, attempts=stored.attempts)
    new = _figure_bytes(load_run_data(synth_store, [RUN]), tmp_path / "duckdb")
    old = _figure_bytes(given, tmp_path / "pandas")
    assert new == old and len(new[1]) == 4  # heatmap and bars, PNG and SVG


# --------------------------------------------------------------------------- Monte Carlo cells


@pytest.fixture(scope="module")
def bench_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """The benchmark's generator, small: 213 scenarios, so every cell is Monte Carlo."""
    from benchmarks.synthetic import StoreShape, generate_store

    root = str(tmp_path_factory.mktemp("bench") / "store")
    generate_store(root, StoreShape(attempts=2 * 213 * 2 * 2, systems=2, conditions=2).model_dump())
    return Store(root)


def test_monte_carlo_cells_are_the_reference(bench_store: Store) -> None:
    data = load_run_data(bench_store, bench_store.run_ids())
    got = robustness_tables(data, CONFIG)
    assert not data.loaded
    assert not got["robustness_pooled"]["exact"].any()  # n = 50..213: sampled, not enumerated
    assert_same_tables(got, reference_tables(data, CONFIG))
