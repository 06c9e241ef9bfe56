"""The same seed gives the same stored rows: one short audio trial, run twice.

Text mode is covered by ``test_one_server`` (a Dask run and a threads run of the same
configuration and seed store the same rows). Columns left out, and why, are in
``test_one_server.WALL_CLOCK``: batch ids are random, ``wall_s`` and
``stage_seconds_json`` are wall-clock seconds of whichever process ran the attempt.

Audio runs on the virtual clock. By default it charges the agent the thread CPU time its
turns took (``virtual_timing: cpu``): a measurement, which varies by some tens of
milliseconds between runs, so turn times, latencies and the timer-driven events would
differ. This test runs the reference cascade with ``virtual_timing: none`` (its compute
costs no call time), so every column the seed decides must repeat exactly, timeline and
timed metrics included. A speed-up that changed what the seed decides fails it. The one
measurement left out is the compute the agent used (``agent_compute_s`` of the
``virtual_clock`` event), which is recorded but, under this timing, charged to nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from flows.benchmark import run_benchmark
from tasks.config import BenchmarkConfig
from tests.flows.test_one_server import stable_rows


def short_audio(store: Path) -> BenchmarkConfig:
    return BenchmarkConfig.model_validate(
        {
            "run_id": "audio-seed",
            "store": str(store),
            "mode": "audio",
            "clock": "virtual",
            "systems": [
                {"name": "reference", "agent": "reference", "params": {"virtual_timing": "none"}}
            ],
            "scenarios": {"domains": ["airline"], "limit": 1},
            "conditions": ["noise"],
            "trials": 1,
            "max_attempts": 1,
            "max_duration_s": 30.0,
            "seed": 7,
            "report": False,
            "runner": {"kind": "threads", "workers": 1},
        }
    )


@pytest.mark.timeout(600)
def test_one_short_audio_trial_stores_the_same_rows_twice(tmp_path: Path) -> None:
    first = rows_after(tmp_path / "first")
    second = rows_after(tmp_path / "second")
    assert len(first["turns"]) > 1, "the call should have a few turns"
    assert first["turns"]["latency_s"].notna().any(), "timed columns are compared too"
    assert first["metrics"]["metric"].str.startswith("response_speed").any()
    for table, frame in first.items():
        pd.testing.assert_frame_equal(second[table], frame, check_dtype=False, obj=table)


def rows_after(store: Path) -> dict[str, pd.DataFrame]:
    summary = run_benchmark(short_audio(store))
    assert summary.simulated_trials == 1
    rows = stable_rows(store, "audio-seed")
    events = rows["events"]
    clock = events["kind"] == "virtual_clock"
    assert clock.sum() == 1
    events.loc[clock, "data_json"] = events.loc[clock, "data_json"].map(without_compute)
    return rows


def without_compute(data_json: str) -> str:
    data = json.loads(data_json)
    assert data["timing"] == "none" and data.pop("agent_compute_s") > 0
    return json.dumps(data, sort_keys=True)
