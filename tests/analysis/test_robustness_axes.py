"""The robustness study says which axis each condition perturbs: EVA's behaviour personas
get their delta rows with axis 'behavior', apart from the acoustic conditions."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.data import RunData
from analysis.reduce import summary_from_values
from analysis.robustness import (
    RobustnessConfig,
    analyze_robustness,
    condition_axes,
    summary_tables,
    with_axes,
)

CONFIG = RobustnessConfig(n_permutations=200, n_bootstrap=100, metrics=["task_completion"])
CONDITIONS = ("clean", "noise", "elderly_slow", "forgetful_disorganized+eva-cafe", "mine")


def values() -> pd.DataFrame:
    """Four scenarios x two trials; a persona loses a quarter of the task completion."""
    rows = []
    drop = {"clean": 0.0, "noise": 0.0, "elderly_slow": 0.25}
    for condition in CONDITIONS:
        for scenario in range(4):
            for trial in range(2):
                value = 1.0 if (scenario + trial) / 8 >= drop.get(condition, 0.1) else 0.0
                rows.append(
                    {
                        "run_id": "r",
                        "system": "s",
                        "domain": "airline",
                        "condition": condition,
                        "scenario_id": f"S{scenario}",
                        "trial": trial,
                        "attempt_id": f"{condition}/{scenario}/{trial}",
                        "metric": "task_completion",
                        "value": value,
                    }
                )
    return pd.DataFrame(rows)


def test_axis_comes_from_the_condition_spec(tmp_path: Path) -> None:
    custom = tmp_path / "conditions.yaml"
    custom.write_text(
        "conditions:\n  - name: mine\n    persona:\n      behavior: x\n"
        "      persona_text: A caller.\n      repeat_rate: 0.5\n"
    )
    axes = condition_axes(list(CONDITIONS), custom)
    assert axes == {
        "clean": "none",
        "noise": "acoustic",
        "elderly_slow": "behavior",
        "forgetful_disorganized+eva-cafe": "both",
        "mine": "behavior",
    }
    assert condition_axes(["mine", "barge-in"])["mine"] == "unknown"
    assert condition_axes(["barge-in"])["barge-in"] == "behavior"


def test_a_persona_condition_gets_its_delta_row_with_axis_behavior() -> None:
    tables = summary_tables(summary_from_values(values()), CONFIG)
    plain = {name: frame.copy() for name, frame in tables.items()}
    out = with_axes(tables, condition_axes(list(CONDITIONS)))
    pooled = out["robustness_pooled"].set_index("condition")
    row = pooled.loc["elderly_slow"]
    assert row["axis"] == "behavior" and row["observed_mean_delta"] < 0
    assert pooled.loc["noise", "axis"] == "acoustic"
    assert pooled.loc["forgetful_disorganized+eva-cafe", "axis"] == "both"
    assert set(out["robustness_scenario_deltas"]["axis"]) >= {"behavior", "acoustic"}
    # Only the column is added: every other cell is what the study computed.
    for name, frame in plain.items():
        pd.testing.assert_frame_equal(out[name].drop(columns="axis", errors="ignore"), frame)
    columns = list(out["robustness_per_domain"].columns)
    assert columns[columns.index("condition") + 1] == "axis"


def test_the_analysis_reports_the_axis(tmp_path: Path) -> None:
    frame = values()
    attempts = frame.drop(columns=["metric", "value"]).drop_duplicates()
    data = RunData(["r"], values=frame, attempts=attempts)
    result = analyze_robustness(data, tmp_path, CONFIG.model_dump())
    pooled = result.tables["robustness_pooled"]
    assert pooled.loc[pooled["condition"] == "elderly_slow", "axis"].tolist() == ["behavior"]
    assert result.summary["axes"]["elderly_slow"] == "behavior"
