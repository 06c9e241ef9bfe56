"""Costs of a real offline run: `evaflow query "SELECT * FROM costs"` returns one row per
attempt, every side zero (the reference agent, the scripted caller and the offline judges
call no provider), and the run row stores the price table it was costed with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import flows.commands  # noqa: F401 - registers `evaflow query`
from flows.benchmark import run_benchmark
from flows.cli import app
from tasks.config import BenchmarkConfig
from tasks.costs.prices import load_prices
from tasks.store import Store


@pytest.mark.timeout(300)
def test_an_offline_run_costs_zero_per_attempt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVAFLOW_PRICES", raising=False)
    store = tmp_path / "store"
    config = BenchmarkConfig.model_validate(
        {
            "store": str(store),
            "run_id": "offline",
            "mode": "text",
            "scenarios": {"domains": ["airline"], "limit": 1},
            "conditions": ["clean"],
            "trials": 2,
            "report": False,
            "runner": {"kind": "threads", "workers": 1},
        }
    )
    run_benchmark(config)
    query = ["query", "--store", str(store), "--format", "json", "SELECT * FROM costs"]
    result = CliRunner().invoke(app, query)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    attempts = Store(str(store)).query("SELECT attempt_id FROM trials")["attempt_id"]
    assert sorted(r["attempt_id"] for r in rows) == sorted(attempts) and len(rows) == 2
    for row in rows:
        costs = [row[f"{side}_cost"] for side in ("agent", "simulator", "judge", "total")]
        assert costs == [0, 0, 0, 0] and row["unpriced"] is None, row
        assert row["price_table"] == load_prices().version_id
    stored = Store(str(store)).read("runs", "offline").iloc[0]
    assert stored["price_table_version"] == load_prices().version_id
    assert json.loads(stored["price_table_json"])[0]["source"].startswith("https://")
