"""A run SIGKILLed while judging resumes by judging, not by simulating again (issue 30).

The real ``evaflow run`` (Prefect, one thread) is killed while the third trial's kept
attempt is being judged: that trial was simulated and validated, nothing of it stored.
Re-run with the same command, it judges that attempt from the validated attempts the
trial left (``tasks.stage_checkpoint``) and never simulates it again; the store ends equal
to an uninterrupted run's (every trial once, the same attempts, verdicts and metric
values), with no checkpoint left behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.reliability.cli import REPO, write_config
from tests.reliability.harness import assert_store_sound, drive_run

RUN_ID = "judge-kill"
TRIAL_COLUMNS = ["attempt_id", "trial_key", "attempt", "final", "status", "valid", "n_turns"]
METRIC_COLUMNS = ["attempt_id", "metric", "score", "normalized_score", "skipped", "error"]


def _fields(store: Path, eva_root: Path) -> dict[str, object]:
    return {
        "run_id": RUN_ID,
        "store": str(store),
        "scenarios": {"eva_root": str(eva_root), "domains": ["airline"], "limit": 4},
        "mode": "text",
        "conditions": ["clean"],
        "trials": 1,
        "batch_size": 1,
        "report": False,
        "runner": {"kind": "threads", "workers": 1},
    }


def _command(argv: list[str], block_at: int | None = None) -> list[str]:
    code = (
        f"from tests.reliability.stage_child import child_main; child_main({argv!r}, {block_at!r})"
    )
    return [sys.executable, "-c", code]


def _start(argv: list[str], env: dict[str, str], block_at: int) -> subprocess.Popen[str]:
    """In its own session: the kill takes the run and its Prefect server."""
    return subprocess.Popen(
        _command(argv, block_at),
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _until_stuck(proc: subprocess.Popen[str], timeout_s: float = 180) -> tuple[str, list[str]]:
    """The attempt the run is stuck judging, and every stage line printed before it."""
    assert proc.stdout is not None
    deadline, lines = time.monotonic() + timeout_s, []
    while time.monotonic() < deadline:
        line = proc.stdout.readline().strip()
        if line.startswith("STUCK "):
            return line.split()[1], lines
        if not line and proc.poll() is not None:
            raise AssertionError(f"run ended before judging 3 trials:\n{proc.stderr.read()}")
        lines.append(line)
    raise AssertionError("the run never reached its third judging")


def _sorted(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    return frame[columns].sort_values(columns[:2]).reset_index(drop=True)


@pytest.mark.timeout(300)
def test_killed_while_judging_resumes_without_simulating_again(
    cli_env: dict[str, str], eva_root: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    fields = _fields(store, eva_root)
    argv = ["run", "--config", str(write_config(tmp_path / "run.yaml", **fields)), "--json"]
    first = _start(argv, cli_env, block_at=3)
    try:
        stuck, before = _until_stuck(first)
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.communicate()
    assert f"SIMULATE {stuck}" in before  # killed after its simulation, while judging
    from tasks.store import Store

    assert stuck not in set(Store(str(store)).read("trials", RUN_ID).get("attempt_id", []))

    again = subprocess.run(
        _command(argv),
        cwd=REPO,
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    lines = again.stdout.splitlines()
    assert f"JUDGING {stuck}" in lines
    assert f"SIMULATE {stuck}" not in lines, "the validated attempt was simulated again"
    assert any(line.startswith("SIMULATE ") for line in lines)  # the trials never started
    summary = json.loads(again.stdout[again.stdout.index("{") :])
    assert summary["run_id"] == RUN_ID

    from tasks.config import parse_config
    from tasks.sources import load_source
    from tasks.trial import run_trial

    baseline = parse_config({**fields, "store": str(tmp_path / "baseline")})
    drive_run(baseline, load_source(baseline.scenarios), run_trial)
    want_trials = pd.read_parquet(tmp_path / "baseline" / "trials" / RUN_ID)
    assert_store_sound(store, RUN_ID, set(want_trials["trial_key"]))
    got_trials = pd.read_parquet(store / "trials" / RUN_ID)
    pd.testing.assert_frame_equal(
        _sorted(got_trials, TRIAL_COLUMNS), _sorted(want_trials, TRIAL_COLUMNS)
    )
    got_m = pd.read_parquet(store / "metrics" / RUN_ID)
    want_m = pd.read_parquet(tmp_path / "baseline" / "metrics" / RUN_ID)
    pd.testing.assert_frame_equal(_sorted(got_m, METRIC_COLUMNS), _sorted(want_m, METRIC_COLUMNS))
    assert not list((store / "_scratch").rglob("*.json")), "a checkpoint outlived its commit"
