"""What a local Dask worker is before its first trial: forked, warmed (flows.runners)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest


def _run_python(code: str, *args: str, timeout: float = 300) -> Any:
    """Run ``code`` in a new interpreter; the JSON it prints last."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


SCRIPT = """
import gc, json, sys
from flows.runners import warm_worker
warm_worker({audio})
print(json.dumps({{"frozen": gc.get_freeze_count(), "trial_code": "tasks.simulate" in sys.modules,
                   "dsp": "scipy.signal" in sys.modules}}))
"""


@pytest.mark.parametrize("audio", [False, True])
def test_a_warmed_worker_has_the_trial_code_loaded_and_out_of_the_collectors_reach(
    audio: bool,
) -> None:
    seen = _run_python(SCRIPT.format(audio=audio))
    assert seen["trial_code"] is True
    assert seen["dsp"] is audio  # audio trials resample; text trials never load scipy.signal
    # The imported modules' objects are frozen: the worker's collections (and its exit)
    # no longer walk them.
    assert seen["frozen"] > 50_000


CLUSTER_SCRIPT = """
import json, os, sys
os.environ["PREFECT_HOME"] = sys.argv[1]
from flows.env import configure_prefect
configure_prefect(sys.argv[1])
from flows.runners import RunnerLifetime
from tasks.config import BenchmarkConfig

def worker_origin():
    import os, sys, psutil
    return {"parent": os.getppid(), "parent_cmd": " ".join(psutil.Process(os.getppid()).cmdline()),
            "dsp": "scipy.signal" in sys.modules, "probe": os.environ.get("EVAFLOW_TEST_PROBE")}

runs = []
for probe in ("first", "second"):  # two runs in one process, the environment changed between
    os.environ["EVAFLOW_TEST_PROBE"] = probe
    config = BenchmarkConfig.model_validate({"mode": "audio", "runner": {"kind": "dask", "workers": 2}})
    with RunnerLifetime(config) as lifetime:
        runs.append(list(lifetime.ready().client.run(worker_origin).values()))
print(json.dumps({"flow_pid": os.getpid(), "runs": runs}))
"""


def test_local_workers_fork_from_one_process_that_imported_the_trial_code(tmp_path) -> None:
    seen = _run_python(CLUSTER_SCRIPT, str(tmp_path / "prefect"))
    first, second = seen["runs"]
    for workers in (first, second):
        assert len(workers) == 2
        # Both workers are children of one forkserver, not of the flow's process (spawn),
        # and that server was asked to import the trial code, the task engine and the DSP.
        assert len({w["parent"] for w in workers}) == 1
        assert workers[0]["parent"] != seen["flow_pid"]
        command = workers[0]["parent_cmd"]
        assert "multiprocessing.forkserver" in command
        for module in ("prefect.task_engine", "tasks.simulate", "scipy.signal"):
            assert repr(module) in command
        assert all(w["dsp"] for w in workers)
    # Each run has its own server, started with the environment of its time, as spawned
    # workers would see it: a run never inherits the previous run's environment.
    assert first[0]["parent"] != second[0]["parent"]
    assert {w["probe"] for w in first} == {"first"}
    assert {w["probe"] for w in second} == {"second"}


OVERLAP_SCRIPT = """
import json, os, sys, time
os.environ["PREFECT_HOME"] = sys.argv[1]
from flows.env import configure_prefect
configure_prefect(sys.argv[1])
from flows.runners import RunnerLifetime
from tasks.config import BenchmarkConfig

config = BenchmarkConfig.model_validate({"mode": "text", "runner": {"kind": "dask", "workers": 1}})
first, second = RunnerLifetime(config), RunnerLifetime(config)
first.__enter__()
first.ready()
second.__enter__()
pool = second.ready()
before = sorted(pool.client.run(os.getpid).values())
first.__exit__(None, None, None)
time.sleep(2)  # a worker wrongly seen as dead is restarted by its nanny meanwhile
after = sorted(pool.client.run(os.getpid).values())
second.__exit__(None, None, None)
print(json.dumps({"before": before, "after": after}))
"""


def test_a_run_closing_leaves_the_workers_of_a_run_still_going_alone(tmp_path) -> None:
    seen = _run_python(OVERLAP_SCRIPT, str(tmp_path / "prefect"), timeout=120)
    # Both runs' workers fork from one forkserver, which reports their exit codes: it is
    # stopped with the last of them, so the second run keeps the very same worker.
    assert seen["before"] == seen["after"]
    assert len(seen["after"]) == 1


STORE_CODE = "print(sorted({'pandas', 'pyarrow', 'duckdb'} & set(sys.modules)))"


def test_the_flow_module_workers_unpickle_with_every_task_leaves_the_store_code_out() -> None:
    # Each trial's task context carries the benchmark flow, so a worker imports its module
    # with its first trial; the store code (pandas, pyarrow, DuckDB) only the flow uses.
    assert _run_python(f"import sys, flows.benchmark; {STORE_CODE}", timeout=120) == []


def test_scoring_an_attempt_leaves_the_store_code_out() -> None:
    # Workers score every attempt, composites included: none of it needs pandas.
    probe = (
        "import sys; from flows.runners import warm_worker; warm_worker(False); "
        f"from tasks.scoring import composite_scores; composite_scores([]); {STORE_CODE}"
    )
    assert _run_python(probe, timeout=120) == []
