"""The ``evaflow`` command line as a user runs it: a quick offline run, then SQL on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EVAFLOW = [sys.executable, "-m", "flows"]


def evaflow(*args: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [*EVAFLOW, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    work = tmp_path_factory.mktemp("cli")
    done = evaflow("run", "--quick", "--json", "--store", str(work / "data"), cwd=work)
    assert done.returncode == 0, done.stderr[-3000:]
    return work, json.loads(done.stdout)


def test_quick_run_prints_the_summary_json(quick_run: tuple[Path, dict]) -> None:
    _, summary = quick_run
    assert set(summary) == {
        "run_id", "store", "attempts", "valid", "aggregates", "rehearsal", "costs"
    }  # fmt: skip
    assert summary["rehearsal"] is False
    # The offline reference cascade, scripted caller and offline judges cost nothing.
    (cost,) = summary["costs"]
    assert (cost["system"], cost["attempts"], cost["total"]) == (
        "reference",
        summary["attempts"],
        0,
    )
    assert cost["unpriced"] is None and cost["per_trial"] == 0
    assert summary["attempts"] >= 6 and 0 < summary["valid"] <= summary["attempts"]
    dims = {(a["domain"], a["condition"], a["dimension"]) for a in summary["aggregates"]}
    assert ("all", "clean", "EVA-A_pass") in dims and ("all", "noise", "EVA-X_pass") in dims
    for row in summary["aggregates"]:
        assert set(row) >= {
            "system",
            "domain",
            "condition",
            "dimension",
            "pass_at_1",
            "pass_at_k",
            "pass_pow_k",
            "k",
            "n",
        }


def test_quick_run_tables_answer_sql(quick_run: tuple[Path, dict]) -> None:
    work, summary = quick_run
    store = str(work / "data")
    done = evaflow(
        "query",
        "SELECT t.condition, count(*) AS attempts, count(DISTINCT a.track) AS tracks "
        "FROM trials t LEFT JOIN audio a USING (attempt_id) GROUP BY ALL ORDER BY 1",
        "--store",
        store,
        "--format",
        "json",
        cwd=work,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["condition"] for r in rows] == ["clean", "noise"]
    assert all(r["tracks"] >= 3 for r in rows)  # caller, agent and mixed audio stored
    done = evaflow(
        "query",
        "SELECT count(*) AS n FROM turns WHERE role = 'assistant' AND latency_s IS NOT NULL",
        "--store",
        store,
        "--format",
        "csv",
        cwd=work,
    )
    assert done.returncode == 0 and int(done.stdout.splitlines()[1]) > 0
    listing = evaflow("runs", "list", "--store", store, "--format", "json", cwd=work)
    assert json.loads(listing.stdout)[0]["run_id"] == summary["run_id"]


def test_bad_config_names_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "run.yaml"
    bad.write_text("trials: -1\nconditions: []\n")
    done = evaflow("run", "--config", str(bad), "--store", str(tmp_path / "d"), cwd=tmp_path)
    assert done.returncode == 2
    assert "run.yaml" in done.stderr and "trials" in done.stderr and "conditions" in done.stderr
    assert not (tmp_path / "d" / "trials").exists()


def test_query_on_a_corrupt_store_names_the_file(tmp_path: Path) -> None:
    part = tmp_path / "d" / "trials" / "r1" / "b1.parquet"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"PAR1 not really parquet")
    done = evaflow("query", "SELECT * FROM trials", "--store", str(tmp_path / "d"), cwd=tmp_path)
    assert done.returncode == 2 and "b1.parquet" in done.stderr
    assert part.exists()  # a query never deletes data
