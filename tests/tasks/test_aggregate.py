from __future__ import annotations

import hashlib
import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks.aggregate import (
    aggregate,
    bootstrap_ci,
    bootstrap_ci_batched,
    pass_at_k,
    pass_pow_k,
    pass_pow_k_theoretical,
    seed_from_name,
)

# --------------------------------------------------------------------------- pass@k


def _brute(n: int, c: int, k: int) -> tuple[float, float]:
    trials = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    any_pass = sum(any(trials[i] for i in s) for s in subsets) / len(subsets)
    all_pass = sum(all(trials[i] for i in s) for s in subsets) / len(subsets)
    return any_pass, all_pass


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n)))
)
def test_pass_at_k_and_pass_pow_k_match_enumeration(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    any_pass, all_pass = _brute(n, c, k)
    assert pass_at_k(n, c, k) == pytest.approx(any_pass, abs=1e-12)
    assert pass_pow_k(n, c, k) == pytest.approx(all_pass, abs=1e-12)
    assert pass_pow_k_theoretical(n, c, k) == pytest.approx((c / n) ** k)


def test_pass_at_k_edge_cases() -> None:
    assert pass_at_k(3, 1, 0) == 1.0 and pass_pow_k(3, 0, 0) == 1.0
    assert pass_at_k(3, 0, 3) == 0.0 and pass_pow_k(3, 3, 3) == 1.0
    assert pass_at_k(5, 1, 1) == pytest.approx(0.2)
    for bad in [(3, 4, 1), (3, 1, 4), (-1, 0, 0)]:
        with pytest.raises(ValueError, match="need 0 <= c <= n"):
            pass_at_k(*bad)
    with pytest.raises(ValueError):
        pass_pow_k_theoretical(0, 0, 0)


# --------------------------------------------------------------------------- bootstrap


def test_seed_from_name_is_sha256_prefix() -> None:
    digest = hashlib.sha256(b"run_2026").digest()
    assert seed_from_name("run_2026") == int.from_bytes(digest[:4], "big") % 2**31
    assert 0 <= seed_from_name("x") < 2**31


def test_bootstrap_matches_reference_formulation_and_is_deterministic() -> None:
    values = np.random.default_rng(7).random(25)
    low, high = bootstrap_ci(values, seed=11)
    idx = np.random.default_rng(11).integers(0, 25, size=(2000, 25))
    ref = np.percentile(values[idx].mean(axis=1), [2.5, 97.5])
    assert (low, high) == (round(ref[0], 4), round(ref[1], 4))
    assert bootstrap_ci(values, seed=11) == (low, high)
    assert bootstrap_ci(values, seed=12) != (low, high)
    assert low <= values.mean() <= high


def test_bootstrap_edge_cases() -> None:
    assert bootstrap_ci([], seed=1) == (None, None)
    assert bootstrap_ci([float("nan")], seed=1) == (None, None)
    assert bootstrap_ci([0.5, 0.5, 0.5], seed=1) == (0.5, 0.5)
    narrow = bootstrap_ci([0.0, 1.0] * 50, seed=3, alpha=0.5)
    wide = bootstrap_ci([0.0, 1.0] * 50, seed=3, alpha=0.05)
    assert wide[0] <= narrow[0] <= narrow[1] <= wide[1]  # type: ignore[operator]


def test_batched_equals_one_by_one() -> None:
    rng = np.random.default_rng(5)
    groups = [rng.random(n).tolist() for n in (3, 10, 10, 1, 0, 40)]
    groups[2][4] = float("nan")
    batched = bootstrap_ci_batched(groups, seed=99)
    assert len(batched) == len(groups)
    assert batched == [bootstrap_ci(g, seed=99) for g in groups]
    assert batched[4] == (None, None)


# --------------------------------------------------------------------------- aggregate


def _rows(
    values: dict[str, list[float]], dimension: str = "EVA-A_pass", **fixed: str
) -> list[dict]:
    base = {"system": "s", "domain": "airline", "condition": "clean"} | fixed
    return [
        base | {"scenario_id": sid, "trial": t, "dimension": dimension, "value": v}
        for sid, vals in values.items()
        for t, v in enumerate(vals)
    ]


def test_aggregate_pass_statistics_and_exclusion() -> None:
    nan = float("nan")
    rows = pd.DataFrame(_rows({"a": [1, 1, 0], "b": [0, 0, 0], "c": [nan, nan, nan]}))
    out = aggregate(rows, by=["system", "domain", "condition"], seed="run")
    assert len(out) == 1
    row = out.iloc[0]
    assert row["dimension"] == "EVA-A_pass" and row["k"] == 3
    assert row["n_scenarios"] == 2 and row["excluded_scenarios"] == 1 and row["n_attempts"] == 6
    assert row["pass_at_1"] == round((2 / 3 + 0) / 2, 4)
    assert row["pass_at_k"] == round((pass_at_k(3, 2, 3) + pass_at_k(3, 0, 3)) / 2, 4)
    assert row["pass_pow_k"] == 0.0
    assert row["pass_pow_k_theoretical"] == round(((2 / 3) ** 3) / 2, 4)
    assert row["pass_at_1_ci_lower"] <= row["pass_at_1"] <= row["pass_at_1_ci_upper"]
    again = aggregate(rows, by=["system", "domain", "condition"], seed="run")
    pd.testing.assert_frame_equal(out, again)


def test_scenario_with_a_missing_trial_is_left_out_of_every_pass_statistic() -> None:
    # The reference's own example (k = 3): s1 has an errored trial, so it is left out of
    # pass@1, pass@k and pass^k alike; only s2 (never passes) counts.
    nan = float("nan")
    rows = pd.DataFrame(_rows({"s1": [1, nan, 1], "s2": [0, 0, 0]}))
    row = aggregate(rows, by=["system"], seed="run").iloc[0]
    assert row["k"] == 3 and row["n_scenarios"] == 2 and row["incomplete_scenarios"] == 1
    assert row["pass_at_1"] == 0.0
    assert row["pass_at_k"] == 0.0 and row["pass_pow_k"] == 0.0
    assert row["pass_at_1_ci_lower"] == row["pass_at_1_ci_upper"] == 0.0
    # evaflow's earlier reading, kept under its own name: s1 over its two valid trials.
    assert row["pass_at_1_over_valid_trials"] == 0.5


def test_means_over_trials_and_over_scenarios_are_named_apart() -> None:
    nan = float("nan")
    rows = pd.DataFrame(_rows({"s1": [1, nan, 1], "s2": [0, 0, 0]}))
    row = aggregate(rows, by=["system"]).iloc[0]
    assert row["mean_over_trials"] == 0.4  # (1 + 1 + 0 + 0 + 0) / 5: the reference's mean
    assert row["mean_over_scenarios"] == 0.5  # (1 + 0) / 2
    assert row["mean"] == row["mean_over_scenarios"]
    assert row["n_attempts"] == 5
    # Mean-only dimensions carry both means and no pass figures.
    speed = aggregate(
        pd.DataFrame(_rows({"a": [2.0, 4.0], "b": [9.0]}, "response_speed")), ["system"]
    )
    assert speed.iloc[0]["mean_over_trials"] == 5.0 and speed.iloc[0]["mean_over_scenarios"] == 6.0
    assert math.isnan(speed.iloc[0]["pass_at_1_over_valid_trials"])


def test_metric_dimensions_use_their_threshold() -> None:
    rows = pd.DataFrame(
        _rows({"a": [0.79], "b": [0.8]}, dimension="turn_taking")
        + _rows({"a": [0.6], "b": [0.4]}, dimension="faithfulness")
        + _rows({"a": [2.0], "b": [4.0]}, dimension="response_speed")
    )
    out = aggregate(rows, by=["system", "domain"]).set_index("dimension")
    assert out.loc["turn_taking", "pass_at_1"] == 0.5
    assert out.loc["turn_taking", "threshold"] == 0.8
    assert out.loc["faithfulness", "pass_at_1"] == 0.5
    assert out.loc["response_speed", "mean"] == 3.0
    assert math.isnan(out.loc["response_speed", "pass_at_1"])
    custom = aggregate(rows, by=["system"], thresholds={"turn_taking": 0.5}).set_index("dimension")
    assert custom.loc["turn_taking", "pass_at_1"] == 1.0


def test_grouping_and_pooling() -> None:
    rows = pd.DataFrame(
        _rows({"a": [1, 0]})
        + _rows({"a": [1, 1]}, domain="itsm")
        + _rows({"a": [0, 0]}, system="t")
    )
    per_domain = aggregate(rows, by=["system", "domain"])
    assert list(per_domain[["system", "domain"]].itertuples(index=False, name=None)) == [
        ("s", "airline"),
        ("s", "itsm"),
        ("t", "airline"),
    ]
    pooled = aggregate(rows, by=["system"]).set_index("system")
    # The same scenario id in two domains is two scenarios.
    assert pooled.loc["s", "n_scenarios"] == 2 and pooled.loc["s", "pass_at_1"] == 0.75


def test_aggregate_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="lack column"):
        aggregate(pd.DataFrame({"system": ["s"]}), by=["system"])
    dup = pd.DataFrame(_rows({"a": [1]}) * 2)
    with pytest.raises(ValueError, match="more than one row"):
        aggregate(dup, by=["system"])


def test_stored_aggregates_carry_the_named_figures(tmp_path: Path) -> None:
    # The example above through the store: s1's second trial ended with no valid attempt.
    from tasks.store import Store
    from tasks.summary import summarize_run
    from tasks.tables import to_table

    trials, metrics = [], []
    for sid, values in {"s1": [1.0, None, 1.0], "s2": [0.0, 0.0, 0.0]}.items():
        for t, value in enumerate(values):
            aid = f"r/s/airline/{sid}/clean/t{t}/a1"
            key = {"run_id": "r", "batch": "b0", "attempt_id": aid}
            cell = {"system": "s", "domain": "airline", "condition": "clean", "scenario_id": sid}
            trials.append(key | cell | {"trial": t, "final": True, "valid": value is not None})
            if value is not None:
                metrics.append(
                    key
                    | {"metric": "EVA-A_pass", "score": value, "normalized_score": value}
                    | {"skipped": False}
                )
    store = Store(str(tmp_path / "data"))
    store.write_batch(
        "r", "b0", {"trials": to_table("trials", trials), "metrics": to_table("metrics", metrics)}
    )
    summarize_run(store, "r")
    got = store.read("aggregates", "r").set_index(["domain", "dimension"])
    row = got.loc[("airline", "EVA-A_pass")]
    assert row["pass_at_1"] == 0.0 and row["pass_at_1_over_valid_trials"] == 0.5
    assert row["mean_over_trials"] == 0.4 and row["mean_over_scenarios"] == 0.5
    assert (row["n"], row["incomplete"], row["excluded"], row["k"]) == (2, 1, 0, 3)
