"""Consistency, Pareto fronts, threshold sensitivity and faithfulness decoupling."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.consistency import DIMENSIONS, gap_summary, pareto_points, rates
from analysis.data import RunData
from analysis.sensitivity import (
    ThresholdConfig,
    decoupling_row,
    recomputed_x_pass,
    threshold_table,
)
from analysis.stats import pareto_front
from tasks.store import Store
from tests.analysis.synthetic import RUN


@pytest.fixture(scope="module")
def rate_table(synth_data: RunData) -> pd.DataFrame:
    return rates(synth_data, list(DIMENSIONS), seed=0, n_boot=300)


def test_rates_match_the_stored_run_aggregates(
    synth_store: Store, rate_table: pd.DataFrame
) -> None:
    stored = synth_store.read("aggregates", RUN)
    stored = stored[stored["domain"] == "all"].set_index(["system", "condition", "dimension"])
    mine = rate_table.set_index(["system", "condition", "dimension"])
    for key, row in mine.iterrows():
        for col in ("pass_at_1", "pass_at_k", "pass_pow_k"):
            assert row[col] == pytest.approx(stored.loc[key, col], abs=1e-4)  # type: ignore[index]


def test_gap_is_pass_at_k_minus_pass_pow_k(rate_table: pd.DataFrame) -> None:
    assert (rate_table["gap"] >= -1e-12).all()
    gaps = gap_summary(rate_table)
    clean_a = rate_table[
        (rate_table["condition"] == "clean") & (rate_table["dimension"] == "EVA-A_pass")
    ]
    row = gaps[(gaps["condition"] == "clean") & (gaps["dimension"] == "EVA-A_pass")].iloc[0]
    assert row["median_gap"] == pytest.approx(np.median(clean_a["gap"]))
    assert row["n_systems"] == 3


def test_pareto_points_flag_the_non_dominated(rate_table: pd.DataFrame) -> None:
    for view in ("pass@1", "pass^k"):
        frame = pareto_points(rate_table, view, "clean")
        assert len(frame) == 3
        for i, row in frame.iterrows():
            others = frame.drop(index=i)
            dominated = (
                (others["eva_a"] >= row["eva_a"])
                & (others["eva_x"] >= row["eva_x"])
                & ((others["eva_a"] > row["eva_a"]) | (others["eva_x"] > row["eva_x"]))
            ).any()
            assert row["on_front"] == (not dominated)
        assert frame["on_front"].tolist() == pareto_front(frame["eva_a"], frame["eva_x"])


def test_threshold_sweep_reproduces_the_stored_composite_at_the_default(
    synth_data: RunData,
) -> None:
    config = ThresholdConfig(thresholds=[0.8])
    swept = recomputed_x_pass(synth_data, config).set_index(
        ["system", "domain", "condition", "scenario_id", "trial"]
    )["value"]
    stored = synth_data.metric("EVA-X_pass").set_index(
        ["system", "domain", "condition", "scenario_id", "trial"]
    )["value"]
    assert swept.sort_index().equals(stored.sort_index())


def test_raising_the_threshold_never_raises_pass_at_1(synth_data: RunData) -> None:
    table = threshold_table(synth_data, ThresholdConfig(n_bootstrap=200))
    for _, line in table.groupby(["system", "condition"]):
        values = line.sort_values("threshold")["pass_at_1"].to_numpy()
        assert np.all(np.diff(values) <= 1e-12)
    assert table["threshold"].min() == 0.5 and table["threshold"].max() == 1.0


def test_decoupling_two_by_two() -> None:
    frame = pd.DataFrame(
        {
            "task_completion": [1.0, 1.0, 1.0, 0.0, 0.0, 1.0],
            "faithfulness": [1.0, 0.0, 0.5, 1.0, 0.0, 0.0],
        }
    )
    row = decoupling_row("x", frame)
    # completed: 4 (two with a deviation: faithfulness 0.0); faithful (>= 0.5): 3, one failed.
    assert (row["completed"], row["faithful"]) == (4, 3)
    assert row["completed_with_deviation"] == 2 and row["faithful_but_failed"] == 1
    assert row["share_completed_with_deviation"] == pytest.approx(0.5)
    assert row["share_faithful_but_failed"] == pytest.approx(1 / 3)
    cells = ("completed_and_faithful", "completed_with_deviation", "faithful_but_failed", "neither")
    assert sum(row[c] for c in cells) == row["n"]
