"""The noise floor (issue 33, item 4) on planted differences with known answers."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from analysis.data import load_run_data
from analysis.noise_floor import (
    NoiseFloorConfig,
    describe,
    min_detectable_difference,
    noise_floor_tables,
    paired_difference,
    resolve_arms,
    scenarios_needed,
    z_total,
)
from tasks.store import Store
from tests.analysis.planted import planted_values, write_run
from tests.analysis.synthetic import RUN

CONFIG = NoiseFloorConfig()


def _row(table: pd.DataFrame, dimension: str, condition: str = "clean") -> dict[str, object]:
    sel = table[(table["dimension"] == dimension) & (table["condition"] == condition)]
    assert len(sel) == 1, sel
    return dict(sel.iloc[0])


@pytest.fixture(scope="module")
def planted_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """Run 'differ': better = base + 0.2; run 'same': twin drawn like base; N=100, k=3."""
    store = Store(str(tmp_path_factory.mktemp("planted")))
    write_run(store, planted_values({"base": 0.0, "better": 0.2}, 100, 3, seed=1, run="differ"))
    write_run(store, planted_values({"base": 0.0, "twin": 0.0}, 100, 3, seed=2, run="same"))
    write_run(store, planted_values({"solo": 0.2}, 100, 3, seed=3, run="other"))
    return store


def test_a_planted_difference_of_0_2_at_n_100_is_found(planted_store: Store) -> None:
    values = load_run_data(planted_store, ["differ"]).values
    arms = resolve_arms(values, ["differ"], ["better", "base"])
    table = noise_floor_tables(values, CONFIG, arms)["noise_floor"]
    row = _row(table, "EVA-A_pass")
    assert (row["arm_a"], row["arm_b"], row["n"], row["k_a"]) == ("better", "base", 100, 3)
    assert row["ci_lower"] > 0 and row["distinguishable"]
    assert row["ci_lower"] <= 0.2 <= row["ci_upper"]
    assert abs(row["diff"] - 0.2) < 0.08
    assert row["mdd"] < row["diff"] and row["scenarios_needed"] < 100
    assert re.match(
        r"EVA-A \+0\.\d\d \[0\.\d\d, 0\.\d\d\]: distinguishable at N=100, k=3", describe(row)
    )
    # The means carry a planted 0.1 under 0.1-SD noise: found, and close.
    mean = _row(table, "EVA-A_mean")
    assert mean["distinguishable"] and abs(mean["diff"] - 0.1) < 0.03


def test_a_planted_zero_is_not_distinguishable(planted_store: Store) -> None:
    values = load_run_data(planted_store, ["same"]).values
    table = noise_floor_tables(values, CONFIG)["noise_floor"]
    for dim in ("EVA-A_pass", "EVA-X_pass", "EVA-A_mean"):
        row = _row(table, dim)
        assert row["ci_lower"] <= 0 <= row["ci_upper"] and not row["distinguishable"], row
        assert "not distinguishable at N=100, k=3" in describe(row)
        assert abs(row["diff"]) < row["mdd"]


def _deltas(rng: np.random.Generator, shift: float, n: int, k: int) -> np.ndarray:
    p = rng.uniform(0.2, 0.6, size=n)[:, None]
    a = (rng.random((n, k)) < p + shift).mean(axis=1)
    b = (rng.random((n, k)) < p).mean(axis=1)
    return a - b


def test_the_verdict_is_calibrated_over_seeds() -> None:
    """Planted 0: few false alarms; planted 0.2: always found; planted MDD: found ~80%."""
    config = NoiseFloorConfig(n_permutations=200)
    rng = np.random.default_rng(11)
    zero = [paired_difference(_deltas(rng, 0.0, 100, 3), s, config) for s in range(60)]
    found = [paired_difference(_deltas(rng, 0.2, 100, 3), s, config) for s in range(60)]
    assert sum(r.distinguishable for r in zero) / 60 <= 0.12
    assert all(r.distinguishable for r in found)
    # The MDD means what it says: a true difference of that size is seen with power ~0.8.
    mdd = float(np.median([r.mdd for r in zero]))
    at_mdd = [paired_difference(_deltas(rng, mdd, 100, 3), s, config) for s in range(200)]
    assert 0.68 <= sum(r.distinguishable for r in at_mdd) / 200 <= 0.92


def test_the_formulas() -> None:
    assert z_total() == pytest.approx(1.959964 + 0.841621, abs=1e-5)
    sd = float(np.std([0.0, 1.0, 0.0, 1.0], ddof=1))
    assert min_detectable_difference(sd, 4) == pytest.approx(z_total() * sd / 2)
    result = paired_difference(np.array([0.0, 1.0, 0.0, 1.0]), seed=0)
    assert result.mdd == pytest.approx(z_total() * sd / 2) and result.n == 4
    assert scenarios_needed(0.5, 0.1) == math.ceil((z_total() * 5) ** 2) == 197
    assert math.isnan(scenarios_needed(0.5, 0.0))
    assert math.isnan(paired_difference(np.array([0.3]), seed=0).mdd)


def test_the_mdd_shrinks_as_one_over_sqrt_n() -> None:
    mdds = {}
    for n in (25, 100, 400):
        values = planted_values({"a": 0.0, "b": 0.0}, n, 3, seed=5)
        row = _row(noise_floor_tables(values, CONFIG)["noise_floor"], "EVA-A_pass")
        assert row["n"] == n
        mdds[n] = row["mdd"]
    assert mdds[100] / mdds[25] == pytest.approx(0.5, abs=0.08)
    assert mdds[400] / mdds[100] == pytest.approx(0.5, abs=0.08)
    assert min_detectable_difference(0.4, 400) / min_detectable_difference(0.4, 100) == 0.5


def test_flip_rate_counts_the_planted_flips(tmp_path: Path) -> None:
    store = Store(str(tmp_path))
    values = planted_values(
        {"flaky": 0.0, "solid": 0.0}, 50, 3, seed=9, flips={"flaky": 15, "solid": 0}
    )
    write_run(store, values)
    stored = load_run_data(store, ["planted"]).values
    tables = noise_floor_tables(stored, CONFIG)
    flips = tables["noise_floor_flips"].set_index(["arm", "metric"])
    assert flips.loc[("flaky", "EVA-A_pass"), "n_flipped"] == 15
    assert flips.loc[("flaky", "EVA-A_pass"), "flip_rate"] == pytest.approx(0.3)
    assert flips.loc[("solid", "EVA-X_pass"), "flip_rate"] == 0.0
    row = _row(tables["noise_floor"], "EVA-A_pass")
    assert (row["flip_rate_a"], row["flip_rate_b"]) == (pytest.approx(0.3), 0.0)
    assert describe(row).endswith("flip rate 0.30 vs 0.00")
    # A scenario with a single kept trial cannot flip and is not counted.
    single = stored[~((stored["scenario_id"] == "S0") & (stored["trial"] > 0))]
    one = noise_floor_tables(single, CONFIG)["noise_floor_flips"].set_index(["arm", "metric"])
    assert one.loc[("flaky", "EVA-A_pass"), ["n_scenarios", "n_flipped"]].tolist() == [49, 14]


def _compare(store: Store, *args: str) -> tuple[int, list[str]]:
    import flows.compare_cli  # noqa: F401 - registers the command
    from flows.cli import app

    result = CliRunner().invoke(app, ["compare", *args, "--store", store.root])
    return result.exit_code, [line for line in result.output.splitlines() if line.strip()]


def test_cli_prints_one_line_per_dimension(planted_store: Store) -> None:
    code, lines = _compare(planted_store, "differ", "--systems", "better,base")
    assert code == 0, lines
    assert lines[0].startswith("better - base (clean)")
    assert len(lines) == 6
    assert re.match(
        r"EVA-A \+0\.\d\d \[0\.\d\d, 0\.\d\d\]: distinguishable at N=100, k=3", lines[1]
    )
    assert lines[2].startswith("EVA-X ") and lines[3].startswith("EVA-A mean ")
    code, lines = _compare(planted_store, "same")  # exactly two systems: no --systems needed
    assert code == 0 and "not distinguishable at N=100, k=3" in lines[1]


def test_cli_compares_across_runs(planted_store: Store) -> None:
    code, lines = _compare(planted_store, "other", "differ", "--systems", "solo,base")
    assert code == 0, lines
    assert lines[0].startswith("solo - base (clean)")
    code, lines = _compare(planted_store, "differ", "same", "--systems", "base")
    assert code == 0 and lines[0].startswith("base@differ - base@same (clean)"), lines


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope", "--systems", "a,b"], "not found in store"),
        (["differ", "--systems", "better,bogus"], "bogus not in run differ"),
        (["differ", "--systems", "better"], "needs at least two systems"),
        (["differ", "same"], "--systems X,Y is required"),
        (["differ", "--condition", "noise"], "condition(s) noise not in the run(s): clean"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(
    planted_store: Store, args: list[str], message: str
) -> None:
    code, lines = _compare(planted_store, *args)
    assert code == 2 and len(lines) == 1 and message in lines[0], lines


def test_cli_on_the_synthetic_store(synth_store: Store) -> None:
    """synthetic.py's fragile hears badly under noise: steady - fragile EVA-A is real there."""
    code, lines = _compare(synth_store, RUN, "--systems", "steady,fragile", "--condition", "noise")
    assert code == 0 and lines[0].startswith("steady - fragile (noise)")
    assert re.match(r"EVA-A \+0\.\d\d \[0\.\d\d, 0\.\d\d\]: distinguishable at N=10, k=3", lines[1])


def test_analyze_noise_floor_writes_the_table_and_figure(
    planted_store: Store, tmp_path: Path
) -> None:
    import flows.analysis_cli  # noqa: F401
    from flows.cli import app

    args = ["analyze", "noise-floor", "--runs", "differ", "--store", planted_store.root]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path), "--no-flow"])
    assert result.exit_code == 0, result.output
    table = pd.read_parquet(tmp_path / "noise_floor.parquet")
    assert set(table["dimension"]) == {
        "EVA-A_pass",
        "EVA-X_pass",
        "EVA-A_mean",
        "EVA-X_mean",
        "EVA-overall_mean",
    }
    assert {"diff", "ci_lower", "ci_upper", "mdd", "scenarios_needed", "flip_rate_a"} <= set(
        table.columns
    )
    assert (tmp_path / "noise_floor_flips.parquet").is_file()
    assert (tmp_path / "noise_floor.png").stat().st_size > 10_000


def test_no_spread_between_scenarios_sizes_no_mdd() -> None:
    """Systems that score the same on every scenario: no 0.00 MDD passed off as a floor."""
    values = planted_values({"a": 0.0, "b": 0.0}, 12, 3, seed=4)
    values = values.assign(value=1.0)
    row = _row(noise_floor_tables(values, CONFIG)["noise_floor"], "EVA-A_pass")
    assert not row["distinguishable"] and math.isnan(row["mdd"]) and row["diff"] == 0
    assert "the same on every scenario, no spread to size an MDD" in describe(row)
    ahead = paired_difference(np.ones(12), seed=0)
    assert ahead.distinguishable and math.isnan(ahead.mdd) and math.isnan(ahead.scenarios_needed)


def test_small_differences_keep_three_decimals() -> None:
    row = {"dimension": "EVA-X_mean", "n": 6, "k_a": 3, "k_b": 3, "diff": -0.006}
    row |= {"ci_lower": -0.011, "ci_upper": -0.001, "mdd": 0.008, "scenarios_needed": 11.0}
    row |= {"distinguishable": True}
    assert describe(row) == (
        "EVA-X mean -0.006 [-0.011, -0.001]: distinguishable at N=6, k=3 (MDD 0.008); "
        "about 11 scenarios needed"
    )
