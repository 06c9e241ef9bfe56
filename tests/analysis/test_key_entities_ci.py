"""Key-entity correlation and CI-vs-k stability."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.ci_vs_k import CiVsKConfig, ci_vs_k_tables, curve, subsample_means, trial_matrix
from analysis.data import RunData
from analysis.key_entities import (
    ALL_SYSTEMS,
    POOLED,
    KeyEntityConfig,
    correlation_table,
    paired_values,
    split_stats,
)
from analysis.stats import pearson

# --------------------------------------------------------------------------- key entities


def test_split_on_hand_made_calls() -> None:
    accuracy = np.array([1.0, 0.75, 0.7, 0.5, 0.25, 0.0])
    outcome = np.array([1.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    out = split_stats(accuracy, outcome, 0.7)
    # >= 70%: three calls, two completed; below: three calls, one completed.
    assert (out["n_high"], out["n_low"]) == (3, 3)
    assert out["outcome_high"] == pytest.approx(2 / 3)
    assert out["outcome_low"] == pytest.approx(1 / 3)
    assert out["relative_drop"] == pytest.approx(0.5)
    assert math.isnan(split_stats(accuracy, outcome, 1.5)["outcome_high"])


def test_correlation_table_follows_the_pairs(synth_data: RunData) -> None:
    config = KeyEntityConfig()
    pairs = paired_values(synth_data, config)
    table = correlation_table(pairs, config)
    assert set(table["system"]) == {"steady", "fragile", "mixed", ALL_SYSTEMS}
    for row in table[table["domain"] == POOLED].itertuples():
        sub = pairs if row.system == ALL_SYSTEMS else pairs[pairs["system"] == row.system]
        assert row.n == len(sub)
        assert row.r == pytest.approx(pearson(sub["accuracy"], sub["outcome"]).r)
    per_domain = table[(table["system"] == "fragile") & (table["domain"] != POOLED)]
    assert (
        per_domain["n"].sum()
        == table[(table["system"] == "fragile") & (table["domain"] == POOLED)]["n"].iloc[0]
    )


def test_completion_tracks_entity_accuracy_in_the_generator(synth_data: RunData) -> None:
    # The synthetic caller completes tasks more often the more entities were heard right.
    table = correlation_table(paired_values(synth_data, KeyEntityConfig()), KeyEntityConfig())
    fragile = table[(table["system"] == "fragile") & (table["domain"] == POOLED)].iloc[0]
    assert fragile["r"] > 0 and fragile["p_value"] < 0.05
    assert fragile["outcome_high"] > fragile["outcome_low"]


# --------------------------------------------------------------------------- CI vs k


def test_subsamples_draw_without_replacement() -> None:
    matrix = np.array([[1, 0, 1, 1], [0, 0, 0, 1]], dtype=float)
    full = subsample_means(matrix, 4, draws=5, seed=1)
    assert np.allclose(full, matrix.mean(axis=1))  # k = K uses every trial
    one = subsample_means(matrix, 1, draws=200, seed=1)
    assert set(np.unique(one)) <= {0.0, 1.0}
    assert one[:, 0].mean() == pytest.approx(0.75, abs=0.1)


def test_trial_matrix_drops_incomplete_scenarios() -> None:
    values = pd.DataFrame(
        {
            "scenario_id": ["a", "a", "b", "b", "c"],
            "trial": [0, 1, 0, 1, 0],
            "value": [1.0, 0.0, 1.0, np.nan, 1.0],
        }
    )
    assert trial_matrix(values).tolist() == [[1.0, 0.0]]


def test_ci_narrows_like_inverse_sqrt_on_synthetic_draws() -> None:
    rng = np.random.default_rng(5)
    p = rng.uniform(0.2, 0.8, size=60)  # per-scenario pass probabilities
    matrix = (rng.random((60, 8)) < p[:, None]).astype(float)
    config = CiVsKConfig(draws=60, n_bootstrap=400)
    table = curve(matrix, config, ("synthetic",))
    widths = table["median_ci_width"].to_numpy()
    assert widths[0] > widths[-1]  # more trials, narrower CI
    assert table["share_within_tolerance"].iloc[-1] == 1.0  # k = K is the anchor itself
    assert table["share_within_tolerance"].iloc[0] < 1.0


def test_tables_cover_clean_by_default(synth_data: RunData) -> None:
    tables = ci_vs_k_tables(synth_data, CiVsKConfig(draws=20, n_bootstrap=200))
    curves, fits = tables["ci_vs_k"], tables["ci_vs_k_fit"]
    assert set(curves["condition"]) == {"clean"}
    assert set(curves["k"]) == {1, 2, 3}
    assert set(fits["dimension"]) == {"EVA-A_pass", "EVA-X_pass"}
    assert (fits["max_k"] == 3).all()
