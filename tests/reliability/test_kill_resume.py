"""Kill the run at seeded points (including mid-write), resume, and find the store whole.

Every case checks: every trial stored exactly once, no duplicate ``attempt_id``, every
Parquet file readable, no debris, and every table (aggregates included) equal to an
uninterrupted run. Crashes are injected in-process at 12 seeded points, the process is
SIGKILLed for real in a child (mid-write and at random times), and once through the real
``evaflow run`` CLI (Prefect, threads) killed with SIGKILL and re-run with the same run id.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.reliability.fakes import fake_trial, tiny_scenarios
from tests.reliability.harness import (
    CRASH_TARGETS,
    SimulatedCrash,
    assert_same_contents,
    assert_store_sound,
    base_config,
    count_calls,
    crash_at,
    crashing_trials,
    drive_run,
    table_contents,
)

REPO = Path(__file__).resolve().parents[2]
RUN_ID = "kill-run"
KILL_SEEDS = range(12)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An uninterrupted run: its tables, trial keys, and how often each crash point is hit."""
    root = tmp_path_factory.mktemp("baseline") / "store"
    calls = count_calls(base_config(root), tiny_scenarios())
    keys = set(pd.read_parquet(root / "trials" / RUN_ID)["trial_key"])
    return {"contents": table_contents(root, RUN_ID), "keys": keys, "calls": calls}


def kill_plan(seed: int, calls: dict[str, int]) -> list[tuple[str, int]]:
    """Seeds 0-6 die once at each kind of point; later seeds die twice before finishing."""
    rng = random.Random(seed)
    first = CRASH_TARGETS[seed % len(CRASH_TARGETS)]
    plan = [(first, rng.randint(1, calls[first]))]
    if seed >= len(CRASH_TARGETS):
        second = rng.choice(CRASH_TARGETS)
        plan.append((second, rng.randint(1, calls[second])))
    return plan


def _run_with_crash(config: Any, target: str, nth: int) -> bool:
    """One invocation that dies at (target, nth); False if it finished before reaching it."""
    trial_fn = crashing_trials(nth) if target == "trial" else fake_trial
    with crash_at(target, nth):
        try:
            drive_run(config, tiny_scenarios(), trial_fn)
        except SimulatedCrash:
            return True
    return False


def test_baseline_reaches_every_crash_point(baseline: dict[str, Any]) -> None:
    assert all(baseline["calls"][t] >= 1 for t in CRASH_TARGETS), baseline["calls"]
    assert len(baseline["keys"]) == 16
    assert baseline["calls"]["committed"] >= 5, "the run must span several batches"


@pytest.mark.parametrize("seed", KILL_SEEDS)
def test_crash_and_resume_stores_every_trial_once(
    seed: int, tmp_path: Path, baseline: dict[str, Any]
) -> None:
    config = base_config(tmp_path / "store")
    plan = kill_plan(seed, baseline["calls"])
    died = [_run_with_crash(config, target, nth) for target, nth in plan]
    assert died[0], f"the first kill point {plan[0]} was never reached"
    resumed = drive_run(config, tiny_scenarios(), fake_trial)
    assert resumed <= len(baseline["keys"])
    assert_store_sound(tmp_path / "store", RUN_ID, baseline["keys"])
    assert_same_contents(table_contents(tmp_path / "store", RUN_ID), baseline["contents"])


def test_resuming_a_finished_run_changes_nothing(tmp_path: Path, baseline: dict) -> None:
    config = base_config(tmp_path / "store")
    assert drive_run(config, tiny_scenarios(), fake_trial) == len(baseline["keys"])
    files = {p: p.read_bytes() for p in (tmp_path / "store").rglob("*.parquet")}
    assert drive_run(config, tiny_scenarios(), fake_trial) == 0
    after = {p: p.read_bytes() for p in (tmp_path / "store").rglob("*.parquet")}
    changed = [p for p in after if files.get(p) != after[p]]
    assert set(after) == set(files)
    # Only the aggregates are recomputed (same content, rewritten atomically).
    assert all(p.parent.parent.name == "aggregates" for p in changed), changed
    assert_same_contents(table_contents(tmp_path / "store", RUN_ID), baseline["contents"])


def _child(store: Path, mode: str, nth: int) -> subprocess.Popen[str]:
    code = (
        "from tests.reliability.harness import child_main; "
        f"child_main({str(store)!r}, {mode!r}, {nth})"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )


def _wait_for(proc: subprocess.Popen[str], marker: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.strip() == marker:
            return
        if not line and proc.poll() is not None:
            raise AssertionError(f"child exited ({proc.returncode}) before {marker}")
    raise AssertionError(f"child never printed {marker}")


@pytest.mark.parametrize("seed", [101, 202])
def test_sigkill_mid_write_then_resume(seed: int, tmp_path: Path, baseline: dict) -> None:
    nth = random.Random(seed).randint(1, baseline["calls"]["part"] - 1)
    proc = _child(tmp_path / "store", "mid_write", nth)
    _wait_for(proc, "CRASH-POINT")
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL
    assert list((tmp_path / "store").rglob("*.parquet.tmp")), "the kill left no torn file"
    drive_run(base_config(tmp_path / "store"), tiny_scenarios(), fake_trial)
    assert_store_sound(tmp_path / "store", RUN_ID, baseline["keys"])
    assert_same_contents(table_contents(tmp_path / "store", RUN_ID), baseline["contents"])


def test_sigkill_at_a_random_time_then_resume(tmp_path: Path, baseline: dict) -> None:
    proc = _child(tmp_path / "store", "anytime", 0)
    _wait_for(proc, "STARTED")
    time.sleep(random.Random(7).uniform(0.05, 0.6))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    drive_run(base_config(tmp_path / "store"), tiny_scenarios(), fake_trial)
    assert_store_sound(tmp_path / "store", RUN_ID, baseline["keys"])
    assert_same_contents(table_contents(tmp_path / "store", RUN_ID), baseline["contents"])
