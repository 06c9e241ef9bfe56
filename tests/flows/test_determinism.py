"""The same seed gives the same stored rows: one short audio trial, run twice.

Text mode is covered by ``test_one_server`` (a Dask run and a threads run of the same
configuration and seed store the same rows). Columns left out, and why, are in
``test_one_server.WALL_CLOCK``: batch ids are random, ``wall_s`` and
``stage_seconds_json`` are wall-clock seconds of whichever process ran the attempt.

Audio runs on the virtual clock, which charges the agent the thread CPU time its turns
took (``virtual_timing: cpu``, the default: a measurement, so it varies by some tens of
milliseconds between runs). What repeats exactly is everything the seed decides: the
trial rows, who said what and what was heard, the tool calls and their results, the
entities, and every metric not computed from those measured times. Left out here
(measured, shown to differ between two runs on this machine): turn ``start_s``, ``end_s``,
``latency_s``, ``segments_json``; tool call ``t_call_s``, ``t_response_s``; the events
table (its timer-driven events, e.g. nudges and interruptions, vary in number); the
metrics in ``TIMED_METRICS`` (latency, turn taking, and agent
speech fidelity, whose judge hears the agent's audio as it overlapped the caller's).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from flows.benchmark import run_benchmark
from tasks.config import BenchmarkConfig
from tests.flows.test_one_server import stable_rows

MEASURED = {"start_s", "end_s", "latency_s", "segments_json", "t_call_s", "t_response_s"}
TIMED_METRICS = ("response_speed", "turn_taking", "agent_speech_fidelity")


def short_audio(store: Path) -> BenchmarkConfig:
    return BenchmarkConfig.model_validate(
        {
            "run_id": "audio-seed",
            "store": str(store),
            "mode": "audio",
            "clock": "virtual",
            "scenarios": {"domains": ["airline"], "limit": 1},
            "conditions": ["noise"],
            "trials": 1,
            "max_attempts": 1,
            "max_duration_s": 40.0,
            "seed": 7,
            "report": False,
            "runner": {"kind": "threads", "workers": 1},
        }
    )


# Slow: about 55 s for the two calls on this machine, and of six runs after the events table
# was left out one failed on a difference whose output was not kept (timing-driven, like
# the events', is the likely cause); it stays out of the default run until that is known.
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_one_short_audio_trial_stores_the_same_rows_twice(tmp_path: Path) -> None:
    first = stable_rows_after(tmp_path / "first")
    second = stable_rows_after(tmp_path / "second")
    assert len(first["turns"]) > 1, "the call should have a few turns"
    for table, frame in first.items():
        pd.testing.assert_frame_equal(second[table], frame, check_dtype=False, obj=table)


def stable_rows_after(store: Path) -> dict[str, pd.DataFrame]:
    """The rows the seed decides: measured-time columns and timed metrics left out."""
    summary = run_benchmark(short_audio(store))
    assert summary.simulated_trials == 1
    rows = stable_rows(store, "audio-seed")
    metrics = rows["metrics"]
    timed = metrics["metric"].str.startswith(TIMED_METRICS)
    rows["metrics"] = metrics[~timed].reset_index(drop=True)
    assert timed.any() and len(rows["metrics"]) > 20
    return {
        table: frame[[c for c in frame.columns if c not in MEASURED]]
        for table, frame in rows.items()
        if table != "events"
    }
