"""Robustness deltas on the synthetic store (rules, not numbers)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.data import KEY_ENTITY_METRIC, RunData
from analysis.robustness import (
    RobustnessConfig,
    analyze_robustness,
    robustness_tables,
    scenario_deltas,
)
from analysis.stats import holm_bonferroni, sign_flip_test

CONFIG = RobustnessConfig(n_permutations=2000, n_bootstrap=300)


@pytest.fixture(scope="module")
def tables(synth_data: RunData) -> dict[str, pd.DataFrame]:
    return robustness_tables(synth_data, CONFIG)


def test_deltas_are_perturbed_minus_clean_scenario_means(synth_data: RunData) -> None:
    deltas = scenario_deltas(synth_data, CONFIG)
    row = deltas[(deltas["metric"] == "task_completion")].iloc[0]
    values = synth_data.metric("task_completion")
    cell = values[
        (values["system"] == row["system"])
        & (values["domain"] == row["domain"])
        & (values["scenario_id"] == row["scenario_id"])
    ]
    clean = cell[cell["condition"] == "clean"]["value"].mean()
    perturbed = cell[cell["condition"] == row["condition"]]["value"].mean()
    assert row["delta"] == pytest.approx(perturbed - clean)
    assert set(deltas["condition"]) == {"noise", "accent"}


def test_a_condition_blind_system_has_zero_deltas_and_p_one(
    tables: dict[str, pd.DataFrame],
) -> None:
    steady = tables["robustness_pooled"][tables["robustness_pooled"]["system"] == "steady"]
    assert not steady.empty
    assert np.allclose(steady["observed_mean_delta"], 0.0)
    assert (steady["raw_p"] == 1.0).all() and (steady["stars"] == "").all()
    assert not steady["reject"].any()


def test_entity_drop_under_noise_is_detected(tables: dict[str, pd.DataFrame]) -> None:
    pooled = tables["robustness_pooled"]
    cell = pooled[
        (pooled["system"] == "fragile")
        & (pooled["condition"] == "noise")
        & (pooled["metric"] == KEY_ENTITY_METRIC)
    ].iloc[0]
    assert cell["observed_mean_delta"] < 0
    assert cell["ci_upper"] < 0
    assert cell["reject"] and cell["stars"]


def test_cells_reproduce_the_test_and_holm_families(
    synth_data: RunData, tables: dict[str, pd.DataFrame]
) -> None:
    deltas = scenario_deltas(synth_data, CONFIG)
    per_domain = tables["robustness_per_domain"]
    family = per_domain[(per_domain["system"] == "mixed") & (per_domain["metric"] == "turn_taking")]
    assert len(family) == 2 * 2  # conditions x domains
    corrected, _ = holm_bonferroni(family["raw_p"].tolist())
    assert family["corrected_p"].tolist() == pytest.approx(corrected)
    one = family.iloc[0]
    sub = deltas[
        (deltas["system"] == "mixed")
        & (deltas["metric"] == "turn_taking")
        & (deltas["condition"] == one["condition"])
        & (deltas["domain"] == one["domain"])
    ]
    assert one["n"] == len(sub)
    assert one["exact"]  # five scenarios per domain: enumerated exactly
    assert one["raw_p"] == pytest.approx(sign_flip_test(sub["delta"]).p_value)


def test_pooled_cells_concatenate_domains(tables: dict[str, pd.DataFrame]) -> None:
    pooled = tables["robustness_pooled"]
    per_domain = tables["robustness_per_domain"]
    for keys, group in per_domain.groupby(["system", "metric", "condition"]):
        cell = pooled.set_index(["system", "metric", "condition"]).loc[keys]  # type: ignore[index]
        assert cell["n"] == group["n"].sum()
        weighted = (group["observed_mean_delta"] * group["n"]).sum() / group["n"].sum()
        assert cell["observed_mean_delta"] == pytest.approx(weighted)


def test_completeness_counts_matched_scenarios(tables: dict[str, pd.DataFrame]) -> None:
    comp = tables["robustness_completeness"]
    mixed_noise = comp[
        (comp["system"] == "mixed") & (comp["condition"] == "noise") & (comp["domain"] == "itsm")
    ].iloc[0]
    assert mixed_noise["scenarios"] == 5 and mixed_noise["matched_scenarios"] == 5
    assert mixed_noise["min_trials"] == 2  # one trial's final attempt was invalid


def test_without_a_baseline_it_is_skipped(synth_data: RunData, tmp_path: Path) -> None:
    result = analyze_robustness(synth_data, tmp_path, {"baseline": "quiet"})
    assert result.status == "skipped" and "quiet" in (result.message or "")


def test_completeness_gate_leaves_out_incomplete_systems(synth_data: RunData) -> None:
    # Every system has 5 matched scenarios per domain; "mixed" has a scenario with only two
    # kept trials (its third trial's final attempt was invalid).
    gated = robustness_tables(
        synth_data, CONFIG.model_copy(update={"expected_scenarios": 5, "min_trials": 3})
    )
    assert "mixed" not in set(gated["robustness_pooled"]["system"])
    assert {"steady", "fragile"} <= set(gated["robustness_pooled"]["system"])
    too_many = robustness_tables(synth_data, CONFIG.model_copy(update={"expected_scenarios": 6}))
    assert too_many["robustness_pooled"].empty
    assert not too_many["robustness_completeness"]["complete"].any()
