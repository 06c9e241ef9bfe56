"""The benchmark's stages, limits and artifacts as Prefect's API shows them (issue 30).

A real text-mode run (built-in pack); afterwards the test reads back, through Prefect's
client, the flow run's task runs (one ``run-trial`` per trial with nested
``simulate-attempt`` / ``validate-attempt`` / ``judge-kept`` stage runs, tagged), its
headline table artifact (equal to the stored aggregates) and its report link, and with
the LLM judge the ``judge:<provider>`` global concurrency limit the run set.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from flows.benchmark import run_benchmark
from flows.operations import HEADLINE_KEY, REPORT_KEY
from tasks.config import BenchmarkConfig
from tasks.store import Store
from tests.fake_llm import FakeChatServer, text_reply

STAGES = ("simulate-attempt", "validate-attempt", "judge-kept")


def quick_text(store: Path, **update: Any) -> BenchmarkConfig:
    base = {
        "store": str(store),
        "mode": "text",
        "scenarios": {"domains": ["airline"], "limit": 2},
        "conditions": ["clean"],
        "trials": 1,
        "report": False,
        "runner": {"kind": "threads"},
    }
    return BenchmarkConfig.model_validate({**base, **update})


def run(config: BenchmarkConfig) -> tuple[UUID, str]:
    """Run the flow; its flow run id and run id."""
    state = run_benchmark(config, return_state=True)
    summary = state.result()
    flow_run_id = state.state_details.flow_run_id
    assert flow_run_id is not None
    return flow_run_id, summary.run_id


def task_runs(flow_run_id: UUID, expected: int) -> list[Any]:
    """The flow run's task runs once ``expected`` of them are recorded (the server writes
    them in batches, within seconds of the run)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import TaskRunFilter, TaskRunFilterFlowRunId

    wanted = TaskRunFilter(flow_run_id=TaskRunFilterFlowRunId(any_=[flow_run_id]))
    deadline = time.monotonic() + 20
    with get_client(sync_client=True) as client:
        while True:
            found = client.read_task_runs(task_run_filter=wanted)
            if len(found) >= expected or time.monotonic() > deadline:
                return found
            time.sleep(0.25)


def artifacts(flow_run_id: UUID) -> dict[str, Any]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    wanted = ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]))
    with get_client(sync_client=True) as client:
        return {a.key: a for a in client.read_artifacts(artifact_filter=wanted)}


def expected_counts(store: Store, run_id: str) -> Counter[str]:
    trials = store.read("trials", run_id)
    return Counter(
        {
            "run-trial": trials["trial_key"].nunique(),
            "simulate-attempt": len(trials),  # every attempt, regenerated ones included
            "validate-attempt": len(trials),
            # the kept attempt only, once per judged trial
            "judge-kept": int((trials["final"] & trials["valid"]).sum()),
            "aggregate-run": 1,  # after the trials, once (and write-report, with a report)
        }
    )


def stage(run: Any) -> str:
    return run.name.rsplit("-", 1)[0]


@pytest.mark.timeout(60)
def test_stages_tags_and_headline_artifact(tmp_path: Path) -> None:
    systems = [{"name": "reference", "agent": "reference"}, {"name": "echo", "agent": "echo"}]
    flow_run_id, run_id = run(quick_text(tmp_path, systems=systems, report=True))
    store = Store(str(tmp_path))
    expected = expected_counts(store, run_id)
    expected["write-report"] = 1
    runs = task_runs(flow_run_id, sum(expected.values()))
    assert Counter(stage(r) for r in runs) == expected
    parents = {r.id for r in runs if stage(r) == "run-trial"}
    for task_run in runs:
        if stage(task_run) in STAGES:
            assert task_run.tags == [f"stage:{stage(task_run)}"]  # offline: no provider
            assert {p.id for p in task_run.task_inputs["__parents__"]} <= parents
            assert task_run.state_name == "Completed"
        elif stage(task_run) in ("aggregate-run", "write-report"):
            assert task_run.tags == [f"stage:{stage(task_run)}"]
            assert task_run.state_name == "Completed"

    found = artifacts(flow_run_id)
    table = json.loads(found[HEADLINE_KEY].data)
    stored = store.query(
        f"SELECT system, condition, dimension, pass_at_1 FROM aggregates "
        f"WHERE run_id = '{run_id}' AND domain = 'all'"
    )
    want = {
        (r.system, r.condition, r.dimension): r.pass_at_1 for r in stored.itertuples(index=False)
    }
    assert {row["system"] for row in table} == {"reference", "echo"}
    for row in table:
        for dimension, column in (("EVA-A_pass", "EVA-A pass@1"), ("EVA-X_pass", "EVA-X pass@1")):
            assert row[column] == pytest.approx(want[(row["system"], row["condition"], dimension)])
    # Planted: the reference agent completes every task, the echo agent none.
    assert {row["system"]: row["EVA-A pass@1"] for row in table} == {"reference": 1.0, "echo": 0.0}
    assert found[HEADLINE_KEY].type == "table"
    report = found[REPORT_KEY]  # a link artifact (Prefect stores it as markdown)
    assert Path(report.description).is_file()
    assert Path(report.description).resolve().as_uri() in str(report.data)


def _judge_answer(_body: Any) -> dict[str, Any]:
    # 1 passes the judged validation gate (user_behavioral_fidelity: 1 = a clean caller).
    return text_reply('{"rating": 1, "explanation": "ok"}')


@pytest.mark.timeout(60)
def test_llm_judge_limit_and_provider_tags(tmp_path: Path) -> None:
    from prefect.client.orchestration import get_client

    with FakeChatServer(fallback=_judge_answer) as server:
        host = server.base_url.split("://", 1)[1].split("/", 1)[0]  # 127.0.0.1:PORT
        judge = {"name": "llm", "params": {"base_url": server.base_url, "max_retries": 0}}
        scenarios = {"domains": ["airline"], "limit": 1}
        config = quick_text(tmp_path, judge=judge, judge_concurrency=3, scenarios=scenarios)
        flow_run_id, run_id = run(config)
        assert server.requests, "the judge was never called"
    with get_client(sync_client=True) as client:
        limit = client.read_global_concurrency_limit_by_name(f"judge:{host}")
        # The test server's port is new every time: its limit must not pile up.
        client.delete_global_concurrency_limit_by_name(f"judge:{host}")
    assert (limit.limit, limit.active, limit.active_slots) == (3, True, 0)
    expected = expected_counts(Store(str(tmp_path)), run_id)
    assert expected["judge-kept"] == 1
    runs = task_runs(flow_run_id, sum(expected.values()))
    assert Counter(stage(r) for r in runs) == expected
    by_stage = {stage(r): sorted(r.tags) for r in runs}
    assert by_stage["judge-kept"] == sorted(["stage:judge-kept", f"provider:{host}"])
    assert by_stage["validate-attempt"] == sorted(["stage:validate-attempt", f"provider:{host}"])
    assert by_stage["simulate-attempt"] == ["stage:simulate-attempt"]


@pytest.mark.timeout(60)
def test_stages_run_nested_under_the_dask_runner(tmp_path: Path) -> None:
    """The default runner: stage task runs are created in the Dask worker processes, each
    a child of its trial's run-trial task run, on the flow's own server."""
    flow_run_id, run_id = run(quick_text(tmp_path, runner={"kind": "dask", "workers": 2}))
    expected = expected_counts(Store(str(tmp_path)), run_id)
    runs = task_runs(flow_run_id, sum(expected.values()))
    assert Counter(stage(r) for r in runs) == expected
    trials = {r.id for r in runs if stage(r) == "run-trial"}
    for task_run in runs:
        if stage(task_run) in STAGES:
            assert {p.id for p in task_run.task_inputs["__parents__"]} <= trials


def test_offline_judges_take_no_limit_and_the_limit_is_not_part_of_the_run() -> None:
    from flows.operations import ensure_judge_limits

    assert ensure_judge_limits(BenchmarkConfig(judge_concurrency=2)) == {}  # no API call
    # How fast a run judges is not what it measures: it resumes with another limit.
    assert BenchmarkConfig(judge_concurrency=2).fingerprint() == BenchmarkConfig().fingerprint()


def test_judge_concurrency_flag_sets_the_runs_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``evaflow run --judge-concurrency N`` is the config's ``judge_concurrency`` (the flag
    over a config file's value); N < 1 or not a number is one line, exit 2, no run."""
    from types import SimpleNamespace

    from flows.cli import main

    seen: list[BenchmarkConfig] = []

    def fake_execute(config: BenchmarkConfig, **_: Any) -> Any:
        seen.append(config)
        return SimpleNamespace(run_id="r", store=str(tmp_path), attempts=0, valid=0, aggregates=[])

    monkeypatch.setattr("flows.cli.execute", fake_execute)
    monkeypatch.setattr("flows.cli.summary_costs", lambda summary: [])
    config_file = tmp_path / "run.yaml"
    config_file.write_text("judge_concurrency: 5\nmode: text\n", encoding="utf-8")
    base = ["run", "--store", str(tmp_path / "store"), "--json"]
    assert main([*base, "--judge-concurrency", "3"]) == 0
    assert main([*base, "--config", str(config_file), "--judge-concurrency", "2"]) == 0
    assert main([*base, "--config", str(config_file)]) == 0
    assert main(base) == 0
    assert [c.judge_concurrency for c in seen] == [3, 2, 5, None]
    capsys.readouterr()
    for bad in ("0", "-4", "many"):
        assert main([*base, "--judge-concurrency", bad]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "--judge-concurrency" in err and bad in err, err
    assert len(seen) == 4  # no bad value reached the run
