"""One Prefect API server per ``evaflow run``, and the local Dask runner stores the rows the
threads runner does.

The Dask run is a real ``evaflow run --runner dask`` in its own process (a local cluster of
two worker processes); its process tree is sampled while it runs, and every Prefect server
process seen in it is counted. Before the fix each worker started a temporary server.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest

from flows.benchmark import run_benchmark
from tasks.config import BenchmarkConfig
from tasks.store import Store

SERVER_MARK = "prefect.server.api.server:create_app"
# Columns that differ between two runs of the same configuration and seed, and why:
# ``batch`` is a random id per committed batch; ``wall_s`` and ``stage_seconds_json`` are
# wall-clock seconds the attempt took on whichever worker ran it.
WALL_CLOCK = {"batch", "wall_s", "stage_seconds_json"}
TABLES = ("trials", "turns", "tool_calls", "entities", "metrics", "events")
RUN = ["--mode", "text", "--domains", "airline", "--limit", "2", "--trials", "2"]
RUN += ["--conditions", "clean", "--no-report", "--run-id", "same", "--json"]


def stable_rows(store: Path, run_id: str) -> dict[str, pd.DataFrame]:
    """Every attempt table of a run without its wall-clock columns, in a canonical order."""
    out = {}
    for table in TABLES:
        frame = Store(str(store)).read(table, run_id)
        frame = frame[[c for c in frame.columns if c not in WALL_CLOCK]]
        keys = [repr(tuple(row)) for row in frame.itertuples(index=False)]
        order = sorted(range(len(keys)), key=keys.__getitem__)
        out[table] = frame.iloc[order].reset_index(drop=True)
    return out


def servers_during(cmd: list[str], env: dict[str, str]) -> tuple[int, set[int], str]:
    """Run ``cmd``; the PIDs of Prefect server processes seen among its descendants."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    root = psutil.Process(proc.pid)
    seen: set[int] = set()
    while proc.poll() is None:
        try:
            children = root.children(recursive=True)
        except psutil.Error:
            break
        for child in children:
            try:
                if SERVER_MARK in " ".join(child.cmdline()):
                    seen.add(child.pid)
            except psutil.Error:
                continue
        time.sleep(0.05)
    _, err = proc.communicate()
    return proc.returncode, seen, err.decode(errors="replace")[-2000:]


@pytest.mark.timeout(600)
def test_a_dask_run_starts_one_prefect_server_and_stores_the_threads_rows(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = str(tmp_path / "prefect")
    dask_store = tmp_path / "dask"
    cmd = [sys.executable, "-m", "flows", "run", *RUN, "--store", str(dask_store)]
    code, servers, err = servers_during([*cmd, "--runner", "dask", "--workers", "2"], env)
    assert code == 0, err
    assert len(servers) == 1, f"Prefect servers started by one run: {sorted(servers)}"

    config = BenchmarkConfig.model_validate(
        {
            "run_id": "same",
            "store": str(tmp_path / "threads"),
            "mode": "text",
            "scenarios": {"domains": ["airline"], "limit": 2},
            "conditions": ["clean"],
            "trials": 2,
            "report": False,
            "runner": {"kind": "threads", "workers": 2},
        }
    )
    run_benchmark(config)
    dask_rows = stable_rows(dask_store, "same")
    threads_rows = stable_rows(tmp_path / "threads", "same")
    assert len(dask_rows["trials"]) >= 4 and len(dask_rows["turns"]) > 0
    for table, frame in threads_rows.items():
        pd.testing.assert_frame_equal(dask_rows[table], frame, check_dtype=False, obj=table)
