"""The real thing: ``evaflow run`` (Prefect, thread runner) SIGKILLed mid-run, re-run with
the same ``--run-id``, ends with the tables of an uninterrupted run."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.reliability.cli import CliRunner, kill_group, write_config
from tests.reliability.harness import assert_store_sound, drive_run

RUN_ID = "cli-kill"
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
        "scenarios": {"eva_root": str(eva_root), "domains": ["airline"], "limit": 5},
        "mode": "text",
        "conditions": ["clean"],
        "trials": 2,
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


@pytest.mark.slow  # two Prefect processes and a baseline: about 2 minutes here
def test_evaflow_run_sigkilled_and_rerun_stores_every_trial_once(
    cli: CliRunner, eva_root: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    fields = _config_fields(store, eva_root)
    config = write_config(tmp_path / "run.yaml", **fields)
    proc = cli.start(["run", "--config", str(config), "--json"])
    deadline = time.monotonic() + 240
    while _committed(store) < 1:
        assert proc.poll() is None, f"run ended before the kill:\n{proc.communicate()[1][-2000:]}"
        assert time.monotonic() < deadline, "no batch committed within 240 s"
        time.sleep(0.02)
    kill_group(proc)
    proc.communicate()
    before = _committed(store)

    result = cli.run(["run", "--config", str(config), "--json"])
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert summary["run_id"] == RUN_ID

    keys = _uninterrupted(fields, tmp_path / "baseline")
    assert 1 <= before < len(keys), "the kill must land mid-run"
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
