"""An external agent process benchmarked through ``run_benchmark`` under the Dask runners.

Dask worker processes are daemonic, and a daemonic process may not start multiprocessing
children: before the speech-worker pool ran its workers as plain subprocesses, every such
attempt was an ``infra_error`` (``daemonic processes are not allowed to have children``)
stored with ``clock=virtual``. The agent is ``evaflow serve-agent llm`` in its own process,
its model a local fake that gives up at once, so the scripted caller closes the call
politely after one exchange: a short, valid conversation on the real-time clock.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flows.benchmark import run_benchmark
from tasks.config import BenchmarkConfig
from tasks.store import Store
from tests.fake_llm import FakeChatServer, text_reply
from tests.fakes.served import served_agent

GIVE_UP = "Sorry, I'm unable to help with that."


@pytest.fixture(scope="module")
def served_llm_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``evaflow serve-agent llm`` in its own process, its model a fake that gives up."""
    cache = tmp_path_factory.mktemp("served-cache")
    with FakeChatServer(fallback=text_reply(GIVE_UP)) as model:
        params = {"base_url": model.base_url, "model": "fake", "cache_dir": str(cache)}
        with served_agent("llm", params) as url:
            yield url


def external_config(store: Path, url: str, runner: dict[str, object]) -> BenchmarkConfig:
    return BenchmarkConfig.model_validate(
        {
            "store": str(store),
            "run_id": "external",
            "scenarios": {"domains": ["itsm"], "records": ["itsm-001"]},  # a short first line
            "systems": [{"name": "mine", "agent": url, "params": {"share_scenario": True}}],
            "conditions": ["clean"],
            "trials": 1,
            "max_attempts": 1,
            "max_duration_s": 60,
            "metrics": ["task_completion"],
            "report": False,
            "runner": runner,
        }
    )


def check_one_ok_realtime_attempt(store: Path) -> None:
    trials = Store(str(store)).read("trials", "external")
    assert len(trials) == 1, trials
    row = trials.iloc[0]
    assert (row["status"], row["end_reason"]) == ("ok", "goodbye"), row["error"]
    assert row["clock"] == "realtime"


@pytest.mark.timeout(240)
def test_external_agent_under_the_default_local_dask_runner(
    served_llm_agent: str, tmp_path: Path
) -> None:
    started = time.perf_counter()
    config = external_config(tmp_path, served_llm_agent, {"workers": 1})
    assert config.runner.kind == "dask" and config.runner.dask_address is None  # the default
    run_benchmark(config)
    check_one_ok_realtime_attempt(tmp_path)
    print(f"default dask runner: {time.perf_counter() - started:.1f} s")


@pytest.mark.timeout(240)
def test_external_agent_on_an_existing_dask_cluster(served_llm_agent: str, tmp_path: Path) -> None:
    from distributed import LocalCluster

    started = time.perf_counter()
    # A cluster we did not configure: its workers are daemonic processes (Dask's default).
    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        runner = {"kind": "dask", "dask_address": cluster.scheduler_address}
        run_benchmark(external_config(tmp_path, served_llm_agent, runner))
    check_one_ok_realtime_attempt(tmp_path)
    print(f"existing dask cluster: {time.perf_counter() - started:.1f} s")
