"""The benchmark flow end to end (text mode over EVA records): store, SQL, resume,
determinism, and the Dask runner against a real local cluster."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from flows.benchmark import run_benchmark
from tasks.config import BenchmarkConfig
from tasks.store import Store

# Columns that legitimately differ between runs (ids, batches, wall-clock time).
VOLATILE = {"run_id", "batch", "attempt_id", "wall_s", "stage_seconds_json", "details_json"}


def text_config(eva_root: Path, store: Path, **update: object) -> BenchmarkConfig:
    base = {
        "store": str(store),
        "mode": "text",
        "scenarios": {"eva_root": str(eva_root), "domains": ["airline", "itsm"], "limit": 2},
        "conditions": ["clean"],
        "trials": 2,
        "report": False,
        "batch_size": 2,
        "runner": {"kind": "threads"},
    }
    return BenchmarkConfig.model_validate({**base, **update})


def stable_metrics(store: Store, run_id: str) -> pd.DataFrame:
    frame = store.read("metrics", run_id)
    frame["key"] = frame["attempt_id"].str.split("/", n=1).str[1]
    keep = [c for c in frame.columns if c not in VOLATILE]
    return frame[keep].sort_values(["key", "metric"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def first_run(eva_root: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, str]:
    store_dir = tmp_path_factory.mktemp("store")
    summary = run_benchmark(text_config(eva_root, store_dir, run_id="r1"))
    assert summary.simulated_trials == 8 and summary.skipped_trials == 0
    return Store(str(store_dir)), summary.run_id


def test_text_run_completes_every_task_and_is_queryable(first_run: tuple[Store, str]) -> None:
    store, run_id = first_run
    trials = store.query("SELECT * FROM trials WHERE final")
    assert len(trials) == 8 and trials["trial_key"].is_unique
    assert (trials["final_db_hash"] == trials["expected_db_hash"]).all()
    tc = store.query(
        "SELECT avg(normalized_score) AS tc FROM metrics m JOIN trials t USING (attempt_id) "
        "WHERE t.final AND m.metric = 'task_completion'"
    )
    assert tc["tc"][0] == pytest.approx(1.0)
    agg = store.query("SELECT * FROM aggregates WHERE dimension = 'EVA-A_pass'")
    assert set(agg["domain"]) == {"airline", "itsm", "all"}
    assert agg["k"].max() == 2


def test_resume_skips_committed_trials_and_stores_each_once(eva_root: Path, tmp_path: Path) -> None:
    config = text_config(eva_root, tmp_path, run_id="resume", batch_size=1)
    run_benchmark(config)
    store = Store(str(tmp_path))
    parts = sorted(store.parts("trials", "resume"))
    # A run killed before its last two commits: drop those commit markers.
    lost = {Path(p).stem for p in parts[-2:]}
    for path in parts[-2:]:
        Path(path).unlink()
    again = run_benchmark(config)
    assert again.simulated_trials == 2 and again.skipped_trials == 6
    trials = store.read("trials", "resume")
    assert trials["attempt_id"].is_unique
    assert trials[trials["final"]]["trial_key"].nunique() == 8 == int(trials["final"].sum())
    assert not lost & set(trials["batch"])  # debris of the killed batches was removed


def test_same_seed_gives_identical_metric_tables(
    first_run: tuple[Store, str], eva_root: Path, tmp_path: Path
) -> None:
    store, run_id = first_run
    run_benchmark(text_config(eva_root, tmp_path, run_id="r2"))
    pd.testing.assert_frame_equal(
        stable_metrics(store, run_id), stable_metrics(Store(str(tmp_path)), "r2")
    )
