"""Loading the stored tables: kept attempts only, key-entity accuracy, pooled runs."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.data import KEY_ENTITY_METRIC, RunData, load_run_data, pool_trials
from tasks.store import Store
from tests.analysis.synthetic import INVALID_KEY, RETRY_KEY, RUN, TEXT_RUN


def test_only_final_valid_attempts_are_kept(synth_store: Store, synth_data: RunData) -> None:
    trials = synth_store.read("trials", RUN)
    kept = trials[trials["final"] & trials["valid"]]["attempt_id"]
    assert set(synth_data.values["attempt_id"]) == set(kept)
    system, domain, scenario, condition, trial = INVALID_KEY
    invalid = synth_data.values[
        (synth_data.values["system"] == system)
        & (synth_data.values["scenario_id"] == scenario)
        & (synth_data.values["condition"] == condition)
        & (synth_data.values["domain"] == domain)
        & (synth_data.values["trial"] == trial)
    ]
    assert invalid.empty
    retried = synth_data.values[synth_data.values["attempt_id"].str.endswith("/a2")]
    assert set(retried["scenario_id"]) == {RETRY_KEY[2]}


def test_key_entity_accuracy_is_the_share_heard_right(
    synth_store: Store, synth_data: RunData
) -> None:
    entities = synth_store.read("entities", RUN)
    expected = entities.groupby("attempt_id")["correct"].mean()
    got = synth_data.metric(KEY_ENTITY_METRIC).set_index("attempt_id")["value"]
    assert got.round(12).equals(expected.reindex(got.index).astype(float).round(12))


def test_skipped_and_errored_flags_and_sub_metrics(synth_data: RunData) -> None:
    assert not synth_data.values["metric"].str.contains(r"\.").any()  # parents only
    assert {"skipped", "errored"} <= set(synth_data.values.columns)
    assert "EVA-A_pass" in synth_data.metrics and "turn_taking" in synth_data.metrics


def test_wide_has_one_row_per_kept_attempt(synth_data: RunData) -> None:
    wide = synth_data.wide(["task_completion", "faithfulness", "no_such_metric"])
    assert len(wide) == synth_data.values["attempt_id"].nunique()
    assert wide["no_such_metric"].isna().all()


def test_runs_sharing_a_system_pool_their_trials(synth_store: Store) -> None:
    both = load_run_data(synth_store, [RUN, TEXT_RUN])
    cell = both.values[
        (both.values["system"] == "steady")
        & (both.values["condition"] == "clean")
        & (both.values["scenario_id"] == "S0")
        & (both.values["domain"] == "airline")
        & (both.values["metric"] == "task_completion")
    ]
    single = [load_run_data(synth_store, [r]) for r in (RUN, TEXT_RUN)]
    expected = sum(
        len(
            d.values[
                (d.values["system"] == "steady")
                & (d.values["condition"] == "clean")
                & (d.values["scenario_id"] == "S0")
                & (d.values["domain"] == "airline")
                & (d.values["metric"] == "task_completion")
            ]
        )
        for d in single
    )
    assert len(cell) == expected
    assert sorted(cell["trial"]) == list(range(expected))


def test_pool_trials_keeps_a_single_run_untouched() -> None:
    frame = pd.DataFrame(
        {
            "run_id": ["r"] * 2,
            "system": ["s"] * 2,
            "domain": ["d"] * 2,
            "condition": ["clean"] * 2,
            "scenario_id": ["x"] * 2,
            "trial": [4, 7],
            "attempt_id": ["a", "b"],
            "metric": ["m"] * 2,
            "value": [1.0, 0.0],
            "skipped": [False] * 2,
            "errored": [False] * 2,
        }
    )
    assert pool_trials(frame)["trial"].tolist() == [4, 7]


def test_unknown_run_is_named(synth_store: Store) -> None:
    with pytest.raises(ValueError, match="nope"):
        load_run_data(synth_store, ["nope"])
