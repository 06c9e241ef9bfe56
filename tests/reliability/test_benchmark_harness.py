"""The benchmark harness measures what it claims: the synthetic store is a valid store, the
pass@k SQL agrees with ``tasks.aggregate``, child processes report memory and failures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks.common import (
    BenchOptions,
    Figure,
    carried_over,
    figures_from_json,
    format_table,
    write_results,
)
from benchmarks.memory import run_child
from benchmarks.stamps import GROUP_SOURCES
from benchmarks.store_scale import PASS_AT_K_SQL, PASS_K
from benchmarks.synthetic import METRICS, StoreShape, generate_store
from tasks.aggregate import pass_at_k, pass_pow_k
from tasks.store import Store

SMALL = StoreShape(attempts=3000, systems=2, conditions=2, batch_attempts=700)


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, dict]:
    root = tmp_path_factory.mktemp("synthetic") / "store"
    counts = generate_store(str(root), SMALL.model_dump())
    return Store(str(root)), counts


def test_synthetic_store_is_a_valid_store(small_store: tuple[Store, dict]) -> None:
    store, counts = small_store
    assert store.verify() == []
    assert store.run_ids() == ["bench-00", "bench-01"]
    trials = store.query("SELECT * FROM trials")
    assert len(trials) == counts["trials"] == SMALL.attempts
    assert trials["attempt_id"].is_unique
    assert (trials.groupby("trial_key")["final"].sum() == 1).all()
    assert (trials.groupby("trial_key")["batch"].nunique() == 1).all(), "a trial was split"
    metrics = store.query("SELECT * FROM metrics")
    assert len(metrics) == len(METRICS) * len(trials)
    per_attempt = store.query("SELECT count(*) AS n FROM turns GROUP BY attempt_id")["n"]
    assert abs(per_attempt.mean() - SMALL.turns_mean) < 1.0


def test_synthetic_composites_follow_the_eva_rules(small_store: tuple[Store, dict]) -> None:
    store, _ = small_store
    wide = store.query(
        "PIVOT (SELECT attempt_id, metric, score FROM metrics) ON metric USING first(score)"
    )
    a_pass = (
        (wide["task_completion"] == 1)
        & (wide["faithfulness"] >= 0.5)
        & (wide["agent_speech_fidelity"] >= 0.95)
    )
    x_pass = (
        (wide["conversation_progression"] >= 0.5)
        & (wide["turn_taking"] >= 0.8)
        & (wide["conciseness"] >= 0.5)
    )
    assert (wide["EVA-A_pass"] == a_pass.astype(float)).all()
    assert (wide["EVA-X_pass"] == x_pass.astype(float)).all()
    assert (wide["EVA-overall_pass"] == (a_pass & x_pass).astype(float)).all()
    assert 0.05 < wide["EVA-A_pass"].mean() < 0.95, "pass rates should be informative"


def test_pass_at_k_sql_matches_tasks_aggregate(small_store: tuple[Store, dict]) -> None:
    store, _ = small_store
    got = store.query(PASS_AT_K_SQL).set_index(["system", "domain"]).sort_index()
    cells = store.query(
        """SELECT t.system, t.domain, t.condition, t.scenario_id, count(*)::INT AS n,
                  sum(CASE WHEN m.score >= 1 THEN 1 ELSE 0 END)::INT AS c
           FROM trials t JOIN metrics m USING (run_id, attempt_id)
           WHERE t.final AND t.valid AND m.metric = 'EVA-A_pass' GROUP BY ALL"""
    )
    cells = cells[cells["n"] >= PASS_K]
    cells["pass_at_k"] = [pass_at_k(n, c, PASS_K) for n, c in zip(cells.n, cells.c, strict=True)]
    cells["pass_pow_k"] = [pass_pow_k(n, c, PASS_K) for n, c in zip(cells.n, cells.c, strict=True)]
    want = cells.groupby(["system", "domain"])[["pass_at_k", "pass_pow_k"]].mean().sort_index()
    assert len(got) == SMALL.systems * 3
    np.testing.assert_allclose(got["pass_at_k"], want["pass_at_k"], atol=1e-9)
    np.testing.assert_allclose(got["pass_pow_k"], want["pass_pow_k"], atol=1e-9)


def allocate(megabytes: int) -> int:
    """Child target: touch ``megabytes`` of memory (so the peak RSS must show it)."""
    block = np.ones(megabytes * 1024 * 1024 // 8)
    return int(block.size)


def fail_loudly() -> None:
    raise ValueError("this benchmark broke")


def test_child_reports_peak_memory_and_result() -> None:
    result = run_child(f"{__name__}:allocate", {"megabytes": 300}, sample_tree=True)
    assert result.ok and result.value == 300 * 1024 * 1024 // 8
    assert result.peak_rss_mb is not None and result.import_rss_mb is not None
    assert result.peak_rss_mb >= result.import_rss_mb + 290
    # Sampled every 0.25 s: the block is held long enough only if the sampler saw it.
    assert result.tree_peak_pss_mb is not None and result.tree_peak_rss_mb is not None
    assert result.tree_peak_pss_mb <= result.tree_peak_rss_mb + 1


def test_child_failure_is_data() -> None:
    result = run_child(f"{__name__}:fail_loudly")
    assert not result.ok and "ValueError: this benchmark broke" in (result.error or "")


def test_figures_table_and_results_file(tmp_path: Path) -> None:
    figures = [
        Figure(group="store", name="query", value=1.5, unit="s", target=2.0, op="<"),
        Figure(group="store", name="analysis", value=75.0, unit="s", target=60.0, op="<"),
        Figure(group="run", name="startup", value=None, note="not available: no EVA"),
    ]
    assert [f.passed for f in figures] == [True, False, None]
    table = format_table(figures)
    assert "PASS" in table and "FAIL" in table and "not available: no EVA" in table
    path = write_results(figures, BenchOptions(quick=True), tmp_path / "results.json")
    data = json.loads(path.read_text())
    assert data["not_met"] == ["analysis"]
    assert [f.name for f in figures_from_json("x", data)] == ["query", "analysis", "startup"]
    assert figures_from_json("x", {"no": "figures"}) == []


def test_only_keeps_the_other_groups_figures(tmp_path: Path) -> None:
    figures = [
        Figure(group="store", name="query", value=1.5, unit="s"),
        Figure(group="run", name="startup", value=4.0, unit="s", target=5.0, op="<"),
    ]
    stamp = {"commit": "a" * 40, "dirty": False, "paths": list(GROUP_SOURCES["run"])}
    path = write_results(
        figures,
        BenchOptions(),
        tmp_path / "results.json",
        benchmark_seconds={"run": 9.0},
        stamps={"run": stamp},
    )
    # Carried over only while its code is unchanged since its stamp (tests/benchmarks).
    kept, extras = carried_over(path, {"store"}, lambda commit, paths: False)
    assert [(f.group, f.name, f.passed) for f in kept] == [("run", "startup", True)]
    assert extras["benchmark_seconds"] == {"run": 9.0}
    assert extras["carried_over"] == {"run": json.loads(path.read_text())["generated_at"]}
    assert carried_over(tmp_path / "missing.json", {"store"}) == ([], {})
