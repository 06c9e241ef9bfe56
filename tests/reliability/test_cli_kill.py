"""The real thing: ``evaflow run`` (Prefect, thread runner) SIGKILLed at a random point,
re-run with the same ``--run-id``, ends with the tables of an uninterrupted run.

The README's promise is about storage (every trial stored exactly once, whatever the kill
interrupted), so the run is in text mode: the smallest real run that spans several
batches. The kill point is drawn from a seed that the test prints; set
``EVAFLOW_KILL_SEED`` to replay one.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

import pandas as pd

from tests.reliability.cli import CliRunner, kill_group, write_config
from tests.reliability.harness import assert_store_sound, drive_run

RUN_ID = "cli-kill"
SCENARIOS, TRIALS = 5, 4  # 20 trials, one batch each
# Warm text trials commit ~16 ms apart: stopping at most half-way leaves a wide margin.
LAST_KILL_AFTER = SCENARIOS * TRIALS // 2
STABLE_TRIAL_COLUMNS = [
    "attempt_id",
    "trial_key",
    "attempt",
    "final",
    "status",
    "end_reason",
    "valid",
    "validation_reason",
    "n_turns",
    "n_tool_calls",
    "final_db_hash",
]
STABLE_METRIC_COLUMNS = ["attempt_id", "metric", "score", "normalized_score", "skipped"]


def _config_fields(store: Path, eva_root: Path) -> dict[str, object]:
    return {
        "run_id": RUN_ID,
        "store": str(store),
        "scenarios": {"eva_root": str(eva_root), "domains": ["airline"], "limit": SCENARIOS},
        "mode": "text",
        "conditions": ["clean"],
        "trials": TRIALS,
        "batch_size": 1,
        "report": False,
        "runner": {"kind": "threads", "workers": 2},
    }


def _committed(store: Path) -> int:
    return len(list((store / "trials" / RUN_ID).glob("*.parquet")))


def _sorted(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    return frame[columns].sort_values(columns[:3]).reset_index(drop=True)


def _uninterrupted(fields: dict[str, object], store: Path) -> set[str]:
    """The same run without a kill, through the flow's trial function (no Prefect)."""
    from tasks.config import parse_config
    from tasks.sources import load_source
    from tasks.trial import run_trial

    config = parse_config({**fields, "store": str(store)})
    drive_run(config, load_source(config.scenarios), run_trial)
    return set(pd.read_parquet(store / "trials" / RUN_ID)["trial_key"])


def kill_point(seed: int) -> tuple[int, float]:
    """After how many committed batches, and how much later, the kill lands: from just after
    a commit to inside the next batches (mid-trial, mid-write), always with work left."""
    rng = random.Random(seed)
    return rng.randint(1, LAST_KILL_AFTER), rng.uniform(0.0, 0.02)


def _kill_seed() -> int:
    return int(os.environ.get("EVAFLOW_KILL_SEED") or random.SystemRandom().randrange(2**31))


def test_kill_point_is_seeded_and_leaves_work_to_resume() -> None:
    points = [kill_point(seed) for seed in range(200)]
    assert points == [kill_point(seed) for seed in range(200)]
    assert {after for after, _ in points} == set(range(1, LAST_KILL_AFTER + 1))


def test_evaflow_run_sigkilled_and_rerun_stores_every_trial_once(
    cli: CliRunner, eva_root: Path, tmp_path: Path
) -> None:
    seed = _kill_seed()
    after, delay_s = kill_point(seed)
    where = f"kill seed {seed} (EVAFLOW_KILL_SEED={seed}): {after} batches + {delay_s:.3f} s"
    print(where)
    store = tmp_path / "store"
    fields = _config_fields(store, eva_root)
    config = write_config(tmp_path / "run.yaml", **fields)
    proc = cli.start(["run", "--config", str(config), "--json"])
    deadline = time.monotonic() + 240
    while _committed(store) < after:
        assert proc.poll() is None, f"{where}: run ended early:\n{proc.communicate()[1][-2000:]}"
        assert time.monotonic() < deadline, f"{where}: {after} batches not committed in 240 s"
        time.sleep(0.002)
    time.sleep(delay_s)
    kill_group(proc)
    proc.communicate()
    before = _committed(store)
    print(f"{before} of {SCENARIOS * TRIALS} batches stored when the kill landed")

    result = cli.run(["run", "--config", str(config), "--json"])
    assert result.returncode == 0, f"{where}\n{result.stderr[-3000:]}"
    summary = json.loads(result.stdout)
    assert summary["run_id"] == RUN_ID

    keys = _uninterrupted(fields, tmp_path / "baseline")
    assert len(keys) == SCENARIOS * TRIALS
    assert after <= before < len(keys), f"{where}: the kill must land mid-run ({before} stored)"
    assert_store_sound(store, RUN_ID, keys)
    got = pd.read_parquet(store / "trials" / RUN_ID)
    want = pd.read_parquet(tmp_path / "baseline" / "trials" / RUN_ID)
    assert summary["attempts"] == len(want)
    pd.testing.assert_frame_equal(
        _sorted(got, STABLE_TRIAL_COLUMNS), _sorted(want, STABLE_TRIAL_COLUMNS)
    )
    got_m = pd.read_parquet(store / "metrics" / RUN_ID)
    want_m = pd.read_parquet(tmp_path / "baseline" / "metrics" / RUN_ID)
    pd.testing.assert_frame_equal(
        _sorted(got_m, STABLE_METRIC_COLUMNS), _sorted(want_m, STABLE_METRIC_COLUMNS)
    )
    drop = ["run_id", "batch"]
    got_a = pd.read_parquet(store / "aggregates" / RUN_ID).drop(columns=drop)
    want_a = pd.read_parquet(tmp_path / "baseline" / "aggregates" / RUN_ID).drop(columns=drop)
    keys_a = ["system", "domain", "condition", "dimension"]
    pd.testing.assert_frame_equal(
        got_a.sort_values(keys_a).reset_index(drop=True),
        want_a.sort_values(keys_a).reset_index(drop=True),
    )
