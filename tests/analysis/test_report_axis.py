"""The report's robustness table shows which axis each condition perturbs."""

from __future__ import annotations

import pandas as pd

from analysis.base import AnalysisResult
from analysis.data import RunData
from analysis.report_index import condition_section


def _pooled(with_axis: bool) -> pd.DataFrame:
    rows = [
        ("ref", "noise", "acoustic", "EVA-A_pass", 3, -0.2),
        ("ref", "elderly_slow", "behavior", "EVA-A_pass", 3, -0.1),
        ("ref", "barge-in+noise", "both", "EVA-A_pass", 3, -0.3),
    ]
    frame = pd.DataFrame(
        rows, columns=["system", "condition", "axis", "metric", "n", "observed_mean_delta"]
    )
    for column in ("ci_lower", "ci_upper", "raw_p", "corrected_p"):
        frame[column] = 0.5
    frame["stars"] = ""
    return frame if with_axis else frame.drop(columns="axis")


def _section(with_axis: bool) -> str:
    values = pd.DataFrame(
        {"system": ["ref"], "condition": ["noise"], "metric": ["EVA-A_pass"], "value": [1.0]}
    )
    data = RunData(["r"], values=values, attempts=pd.DataFrame())
    result = AnalysisResult(name="robustness", tables={"robustness_pooled": _pooled(with_axis)})
    return condition_section(data, [result])


def test_the_pooled_robustness_table_has_the_axis_after_the_condition() -> None:
    html = _section(with_axis=True)
    table = html[html.index("Robustness: delta vs clean") :]
    header = table[: table.index("</tr>")]
    assert header.index(">condition<") < header.index(">axis<") < header.index(">metric<")
    for condition, axis in (("elderly_slow", "behavior"), ("barge-in+noise", "both")):
        row = table[table.index(f">{condition}<") :]
        assert row[: row.index("</tr>")].count(f">{axis}<") == 1


def test_results_stored_without_an_axis_still_render() -> None:
    html = _section(with_axis=False)
    table = html[html.index("Robustness: delta vs clean") :]
    assert ">axis<" not in table and ">elderly_slow<" in table
