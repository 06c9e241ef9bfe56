"""The analysis flow and the ``evaflow analyze`` command on the synthetic store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tasks.store import Store
from tests.analysis.synthetic import RUN


def test_flow_function_writes_tables_figures_and_summary(
    synth_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import flows.analysis_flow
    from flows.analysis_flow import run_analysis

    def no_task(*args: object) -> None:
        raise AssertionError("outside a flow run the Prefect task must not be used")

    monkeypatch.setattr(flows.analysis_flow, "analysis_step", no_task)
    results = run_analysis.fn(
        store=synth_store.root, runs=[RUN], which="faithfulness-decoupling", out=str(tmp_path)
    )
    assert [r["name"] for r in results] == ["faithfulness-decoupling"]
    assert results[0]["status"] == "ok"
    assert Path(results[0]["table_paths"]["faithfulness_decoupling"]).is_file()
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary[0]["name"] == "faithfulness-decoupling"


def test_published_without_stats_is_a_clear_error(synth_store: Store) -> None:
    from flows.analysis_flow import run_analysis

    with pytest.raises(ValueError, match="needs stats"):
        run_analysis.fn(store=synth_store.root, runs=[], which="published")


def test_cli_rejects_unknown_analysis_and_names_the_choices(synth_store: Store) -> None:
    import flows.analysis_cli  # noqa: F401 - registers the command
    from flows.cli import app

    result = CliRunner().invoke(app, ["analyze", "robustnes", "--store", synth_store.root])
    assert result.exit_code == 2
    assert "robustness" in result.output and "published" in result.output


def test_cli_needs_runs_when_the_store_has_several(synth_store: Store) -> None:
    import flows.analysis_cli  # noqa: F401
    from flows.cli import app

    result = CliRunner().invoke(app, ["analyze", "robustness", "--store", synth_store.root])
    assert result.exit_code == 2 and "--runs is required" in result.output


def test_cli_runs_a_group_and_reports_skips(synth_store: Store, tmp_path: Path) -> None:
    import flows.analysis_cli  # noqa: F401
    from flows.cli import app

    args = ["analyze", "threshold-sensitivity", "--store", synth_store.root, "--runs", RUN,
            "--out", str(tmp_path), "--no-flow", "--json"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload[0]["status"] == "ok"
    assert (tmp_path / "threshold_sensitivity.png").is_file()
    assert (tmp_path / "threshold_sensitivity.svg").is_file()


@pytest.mark.slow
def test_flow_runs_under_prefect(synth_store: Store, tmp_path: Path) -> None:
    from flows.env import configure_prefect

    configure_prefect(str(tmp_path), verbose=False)
    from flows.analysis_flow import run_analysis

    results = run_analysis(
        store=synth_store.root, runs=[RUN], which="consistency", out=str(tmp_path / "out")
    )
    assert {r["name"] for r in results} == {
        "consistency",
        "pareto",
        "threshold-sensitivity",
        "faithfulness-decoupling",
    }
    assert all(r["status"] == "ok" for r in results)
