"""Runs comparing systems show each with its architecture: summary, report, Pareto figure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.consistency import analyze_pareto
from analysis.data import load_run_data
from analysis.report_index import headline_section, summary_section
from tasks.store import Store
from tasks.summary import summarize_run, system_architectures
from tasks.tables import to_table
from tests.analysis.synthetic import RUN, SYSTEMS, build_rows

# The synthetic run's three systems, stored as the flow stores them (SystemSpec dumps).
SPECS = [
    {"name": SYSTEMS[0], "agent": "pipecat", "params": {"architecture": "s2s", "components": {}}},
    {"name": SYSTEMS[1], "agent": "reference", "params": {}},
    {"name": SYSTEMS[2], "agent": "ws://127.0.0.1:9/ws", "params": {}},
]
EXPECTED = {SYSTEMS[0]: "s2s", SYSTEMS[1]: "cascade", SYSTEMS[2]: None}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = Store(str(tmp_path_factory.mktemp("side-by-side")))
    rows = build_rows(RUN, "audio")
    store.write_batch(RUN, "b0", {k: to_table(k, v) for k, v in rows.items()})
    run_row = {
        "run_id": RUN,
        "batch": "run",
        "created_at": "2026-01-01T00:00:00+00:00",
        "evaflow_version": "0.1.0",
        "config_json": "{}",
        "specs_json": json.dumps({"systems": SPECS}),
    }
    store.write_single("runs", RUN, to_table("runs", [run_row]), name="run")
    return store


def test_architectures_come_from_the_stored_specs(store: Store) -> None:
    assert system_architectures(store, RUN) == EXPECTED


def test_summary_rows_carry_the_architecture(store: Store) -> None:
    rows = summarize_run(store, RUN)
    assert {(r["system"], r["architecture"]) for r in rows} == set(EXPECTED.items())


def test_report_headline_and_summary_name_each_architecture(store: Store) -> None:
    aggregates = store.read("aggregates", RUN)
    if aggregates.empty:
        summarize_run(store, RUN)
        aggregates = store.read("aggregates", RUN)
    html = headline_section(aggregates, EXPECTED)
    assert "<th>system</th><th>architecture</th>" in html
    assert f"<td>{SYSTEMS[0]}</td><td>s2s</td>" in html
    assert f"<td>{SYSTEMS[1]}</td><td>cascade</td>" in html
    trials = store.read("trials", RUN)
    summary = summary_section({"run_id": RUN}, trials, EXPECTED)
    assert f"{SYSTEMS[0]} (s2s)" in summary and f"{SYSTEMS[2]} (architecture unknown)" in summary


def test_pareto_groups_systems_by_architecture(store: Store, tmp_path: Path) -> None:
    result = analyze_pareto(load_run_data(store, [RUN]), tmp_path, {"n_bootstrap": 100})
    table = result.tables["pareto"]
    groups = dict(zip(table["system"], table["group"], strict=False))
    assert groups == {SYSTEMS[0]: "s2s", SYSTEMS[1]: "cascade", SYSTEMS[2]: "architecture unknown"}
    assert result.figures and all(Path(f).exists() for f in result.figures)
