"""The cost against EVA-A / EVA-X figure (issue 33) on the run with planted costs
(tests/tasks/costs/planted.py) plus planted EVA-X verdicts, and on hand-made frames."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from analysis.base import AnalysisResult
from analysis.cost_vs_eva import COST_ANALYSIS, cost_scale, plot_cost_vs_eva
from analysis.data import load_run_data
from analysis.report_costs import cost_figure, costs_section
from analysis.report_index import figures_section
from analysis.runner import run_one
from tasks.records import AttemptRecord, MetricScore
from tasks.store import Store
from tasks.tables import metric_rows, to_table
from tests.tasks.costs.planted import RUN, S2S_RESPONSES, attempts, write_costed_run
from tests.tasks.costs.test_costs import CALLER, JUDGE, realtime_cost

EVA_X_PASSING = {"s2s", "silent"}  # final attempts passing EVA-X (EVA-A: planted.PASSING)
FAST = {"n_bootstrap": 100}  # one trial per system: the CIs are not what is tested here


def eva_x_rows() -> pa.Table:
    """EVA-X verdicts of the planted run's final attempts."""
    rows = []
    for system, attempt, final in attempts():
        if final:
            record = AttemptRecord(attempt_id=f"{RUN}/{system}/airline/S0/clean/t0/a{attempt}",
                                   run_id=RUN, system=system, scenario_id="S0",
                                   domain="airline", attempt=attempt)  # fmt: skip
            verdict = MetricScore(name="EVA-X_pass", score=float(system in EVA_X_PASSING))
            rows += metric_rows(record, "b0", [verdict])
    return to_table("metrics", rows)


def write_run_with_eva_x(store: Store, mp: pytest.MonkeyPatch) -> None:
    """The planted costed run, its batch's metrics extended with EVA-X verdicts (a batch
    is committed with its trials, so the verdicts go in the same one)."""
    write = store.write_batch

    def with_eva_x(run_id: str, batch: str, tables: dict[str, pa.Table]) -> None:
        write(run_id, batch, {**tables, "metrics": pa.concat_tables([tables["metrics"],
                                                                     eva_x_rows()])})  # fmt: skip

    mp.setattr(store, "write_batch", with_eva_x)
    write_costed_run(store)


@pytest.fixture(scope="module")
def costed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, AnalysisResult, Path]:
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("EVAFLOW_PRICES", raising=False)
        root = tmp_path_factory.mktemp("costed")
        store = Store(str(root / "store"))
        write_run_with_eva_x(store, mp)
        result = run_one(COST_ANALYSIS, load_run_data(store, [RUN]), root / "analysis", FAST)
    return store, result, root


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


def plotted(fig: Figure) -> list[list[tuple[float, float]]]:
    """Per panel, the (cost, pass rate) of every drawn marker."""
    return [
        sorted(xy for line in ax.get_lines() for xy in zip(*line.get_data(), strict=True))
        for ax in fig.axes
    ]


def test_the_figure_data_has_the_planted_dollars_and_pass_rates(
    costed: tuple[Store, AnalysisResult, Path],
) -> None:
    _, result, _ = costed
    assert result.status == "ok", result.message
    frame = result.tables["cost_vs_eva"].set_index("system")
    s2s = sum(realtime_cost(r) for r in S2S_RESPONSES.values()) + 2 * (CALLER + JUDGE)
    # Regenerated attempt included; the reference agent is free but its caller and judge are not.
    assert frame.at["s2s", "usd_per_trial"] == pytest.approx(s2s)
    assert frame.at["reference", "usd_per_trial"] == pytest.approx(CALLER + JUDGE)
    assert frame[["eva_a", "eva_x"]].to_dict("index") == {
        "cascade": {"eva_a": 1.0, "eva_x": 0.0},
        "reference": {"eva_a": 1.0, "eva_x": 0.0},
        "s2s": {"eva_a": 1.0, "eva_x": 1.0},
        "silent": {"eva_a": 0.0, "eva_x": 1.0},
    }
    assert frame.loc[["cascade", "silent"], "usd_per_trial"].isna().all()
    assert result.summary[RUN]["s2s"]["usd_per_trial"] == pytest.approx(s2s)


def test_unknown_costs_are_named_and_not_plotted(
    costed: tuple[Store, AnalysisResult, Path],
) -> None:
    frame = costed[1].tables["cost_vs_eva"]
    fig = plot_cost_vs_eva(frame, "planted")
    labels = texts(fig)
    assert "cost unknown: cascade, silent" in labels
    annotations = [t for ax in fig.axes for t in ax.texts]
    assert sorted(a.get_text() for a in annotations) == ["reference", "reference", "s2s", "s2s"]
    known = frame.set_index("system").loc[["reference", "s2s"]]
    # s2s costs 10.4x the reference (both priced): past the 10x spread, a log cost axis.
    assert all(ax.get_xscale() == "log" for ax in fig.axes)
    assert plotted(fig) == [
        sorted(zip(known["usd_per_trial"], known[col], strict=True)) for col in ("eva_a", "eva_x")
    ]


def test_offline_systems_sit_at_zero_on_a_linear_axis_and_are_named_on_a_log_one() -> None:
    def frame(costs: dict[str, float | None]) -> pd.DataFrame:
        n = len(costs)
        return pd.DataFrame({"system": list(costs), "usd_per_trial": pd.Series(
            list(costs.values()), dtype="float64"), "eva_a": [0.5] * n, "eva_a_lo": [0.4] * n,
            "eva_a_hi": [0.6] * n, "eva_x": [0.25] * n, "eva_x_lo": [0.2] * n,
            "eva_x_hi": [0.3] * n, "unpriced": None, "group": "run"})  # fmt: skip

    linear = plot_cost_vs_eva(frame({"offline": 0.0, "paid": 0.05, "dear": 0.4}), "t")
    assert [ax.get_xscale() for ax in linear.axes] == ["linear", "linear"]
    assert plotted(linear)[0] == [(0.0, 0.5), (0.05, 0.5), (0.4, 0.5)]
    assert linear.axes[0].get_xlim()[0] < 0.0  # $0 in view
    assert not any(t.startswith(("cost unknown", "$0")) for t in texts(linear))
    log = plot_cost_vs_eva(frame({"offline": 0.0, "paid": 0.01, "dear": 0.5, "x": None}), "t")
    assert [ax.get_xscale() for ax in log.axes] == ["log", "log"]
    assert plotted(log)[1] == [(0.01, 0.25), (0.5, 0.25)]
    note = next(t for t in texts(log) if t.startswith("cost unknown"))
    assert note == "cost unknown: x\n$0 per trial (offline; no place on a log axis): offline"
    assert cost_scale(pd.Series([0.0, 0.1, 1.0])) == "linear"  # exactly 10x: linear
    assert cost_scale(pd.Series([0.0, 0.1, 1.01])) == "log"


def test_the_figure_is_written_as_png_and_svg_and_shown_in_the_costs_section(
    costed: tuple[Store, AnalysisResult, Path],
) -> None:
    store, result, root = costed
    png, svg = (root / "analysis" / f"cost_vs_eva.{ext}" for ext in ("png", "svg"))
    assert sorted(result.figures) == [str(png), str(svg)]
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert ET.parse(svg).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    html = costs_section(load_run_data(store, [RUN]), RUN, cost_figure([result], root))
    table_end = html.index("</table>")
    assert re.search(r'<img src="analysis/cost_vs_eva\.png"', html[table_end:])
    assert 'href="analysis/cost_vs_eva.svg"' in html
    # Shown once: in the Costs section, not again among the other analyses' figures.
    assert "cost_vs_eva" not in figures_section([result], root)
    skipped = result.model_copy(update={"status": "skipped", "message": "no values"})
    assert "no values" in cost_figure([skipped], root) and cost_figure([], root) == ""
