"""The store: atomic batches, recovery of killed writes, corrupt parts, SQL views."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tasks.store import Store, StoreError
from tasks.tables import to_table


def _batch(run: str, batch: str, keys: list[str]) -> dict:
    trials = [
        {
            "run_id": run,
            "batch": batch,
            "attempt_id": f"{run}/{k}/a1",
            "trial_key": k,
            "system": "s",
            "domain": "airline",
            "scenario_id": k,
            "condition": "clean",
            "trial": 0,
            "attempt": 1,
            "final": True,
            "valid": True,
            "status": "ok",
        }
        for k in keys
    ]
    metrics = [
        {
            "run_id": run,
            "batch": batch,
            "attempt_id": f"{run}/{k}/a1",
            "metric": "task_completion",
            "score": 1.0,
            "normalized_score": 1.0,
            "skipped": False,
        }
        for k in keys
    ]
    return {"trials": to_table("trials", trials), "metrics": to_table("metrics", metrics)}


def test_committed_batches_are_visible_in_sql(tmp_path: Path) -> None:
    store = Store(str(tmp_path))
    store.write_batch("r1", "b1", _batch("r1", "b1", ["x", "y"]))
    store.write_batch("r1", "b2", _batch("r1", "b2", ["z"]))
    assert store.completed_trial_keys("r1") == {"x", "y", "z"}
    frame = store.query("SELECT count(*) AS n FROM metrics")
    assert int(frame["n"][0]) == 3
    assert store.run_ids() == ["r1"]


def test_uncommitted_batch_is_invisible_and_removed_on_recover(tmp_path: Path) -> None:
    store = Store(str(tmp_path))
    store.write_batch("r1", "b1", _batch("r1", "b1", ["x"]))
    # A killed writer: the metrics part of b2 landed, its trials part (the commit) did not.
    orphan = _batch("r1", "b2", ["y"])["metrics"]
    store._write_atomic(store._part("metrics", "r1", "b2"), orphan)
    (tmp_path / "trials" / "r1" / "b3.abc123.parquet.tmp").write_bytes(b"half a file")
    assert int(store.query("SELECT count(*) AS n FROM metrics")["n"][0]) == 1
    report = store.recover("r1")
    assert len(report.removed_orphans) == 1 and len(report.removed_temp) == 1
    assert store.completed_trial_keys("r1") == {"x"}


def test_corrupt_part_is_named_and_quarantined_with_its_batch(tmp_path: Path) -> None:
    store = Store(str(tmp_path))
    store.write_batch("r1", "good", _batch("r1", "good", ["x"]))
    store.write_batch("r1", "bad", _batch("r1", "bad", ["y"]))
    bad = tmp_path / "metrics" / "r1" / "bad.parquet"
    bad.write_bytes(bad.read_bytes()[:20])  # truncated copy
    with pytest.raises(StoreError, match="bad.parquet"):
        store.query("SELECT * FROM metrics")
    report = store.recover("r1")
    assert any("bad.parquet" in p for p in report.quarantined)
    # the whole batch moved aside: its trial is simulated again, nothing duplicated
    assert store.completed_trial_keys("r1") == {"x"}
    assert (tmp_path / "_quarantine" / "r1" / "metrics" / "bad.parquet").exists()
    assert int(store.query("SELECT count(*) AS n FROM metrics")["n"][0]) == 1


def test_paths_from_ids_cannot_escape_the_store(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "store"))
    for bad in ("../evil", "a/b", "..", ""):
        with pytest.raises(StoreError, match="invalid run id"):
            store.write_batch(bad, "b1", _batch("r", "b1", ["x"]))
    assert not (tmp_path / "evil").exists()


def test_fsspec_memory_store_round_trip() -> None:
    store = Store(f"memory://evaflow-test-{os.getpid()}")
    store.write_batch("r1", "b1", _batch("r1", "b1", ["x"]))
    assert store.completed_trial_keys("r1") == {"x"}
    assert int(store.query("SELECT count(*) AS n FROM trials")["n"][0]) == 1
