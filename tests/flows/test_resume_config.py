"""Resuming a run id never mixes configurations: another configuration is refused before
any trial, naming the fields that differ (or starts a new run id on request), and a trial
key names the system's agent parameters."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from flows.benchmark import run_benchmark
from tasks.config import BenchmarkConfig, ConfigError, config_differences
from tasks.config_checks import resume_config
from tasks.store import Store
from tasks.trial import expand_trials
from tests.reliability.cli import CliRunner
from tests.reliability.fakes import tiny_scenarios


def text_config(store: Path, **update: object) -> BenchmarkConfig:
    base = {
        "store": str(store),
        "run_id": "nightly",
        "mode": "text",
        "scenarios": {"domains": ["airline"], "limit": 1},
        "conditions": ["clean"],
        "trials": 1,
        "max_attempts": 1,
        "report": False,
        "runner": {"kind": "threads"},
    }
    return BenchmarkConfig.model_validate({**base, **update})


def snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".prefect" not in p.parts
    }


def test_differences_name_each_field_that_defines_the_run(tmp_path: Path) -> None:
    stored = text_config(
        tmp_path, systems=[{"name": "mine", "agent": "llm", "params": {"model": "a"}}]
    )
    changed = stored.model_copy(
        update={
            "trials": 3,
            "conditions": ["clean", "noise"],
            "systems": [stored.systems[0].model_copy(update={"params": {"model": "b"}})],
        }
    )
    found = config_differences(stored.model_dump_json(), changed)
    assert found == [
        'conditions: stored ["clean"], now ["clean", "noise"]',
        'systems[0].params.model: stored "a", now "b"',
        "trials: stored 1, now 3",
    ]
    # Where and how a run executes is not what it measures: these may change on resume.
    moved = stored.model_copy(
        update={"store": "elsewhere", "batch_size": 99, "report": True, "runner": {"workers": 7}}
    )
    assert config_differences(stored.model_dump_json(), moved) == []


def test_a_trial_key_names_the_agent_parameters(tmp_path: Path) -> None:
    config = text_config(
        tmp_path,
        systems=[
            {"name": "mine", "agent": "llm", "params": {"model": "a"}},
            {"name": "mine", "agent": "llm", "params": {"model": "b"}},
        ],
    )
    one, other = expand_trials(config, tiny_scenarios(1)[:1], None)
    assert one.system.name == other.system.name == "mine"
    assert one.trial_key != other.trial_key
    assert one.trial_key.startswith("mine@")
    again = expand_trials(config, tiny_scenarios(1)[:1], None)[0]
    assert again.trial_key == one.trial_key  # stable, so a resume finds stored trials


@pytest.mark.timeout(300)
def test_resuming_with_another_configuration_stops_before_any_trial(tmp_path: Path) -> None:
    first = run_benchmark(text_config(tmp_path))
    assert first.simulated_trials == 1
    before = snapshot(tmp_path)
    changed = text_config(tmp_path, trials=2, conditions=["clean", "accent"])
    with pytest.raises(ConfigError) as err:
        run_benchmark(changed)
    message = str(err.value)
    assert "'nightly'" in message and "trials: stored 1, now 2" in message
    assert "conditions:" in message and "--new-run-if-changed" in message
    assert snapshot(tmp_path) == before  # no trial, no runs row rewritten

    again = run_benchmark(text_config(tmp_path, batch_size=5))
    assert again.skipped_trials == 1 and again.simulated_trials == 0  # same config resumes

    forked = run_benchmark(changed, new_run_if_changed=True)
    assert forked.run_id == f"nightly-{changed.fingerprint()[:8]}"
    assert forked.simulated_trials == 4
    store = Store(str(tmp_path))
    assert len(store.read("trials", "nightly")) == 1  # the stored run is untouched
    assert resume_config(store, changed, new_run_if_changed=True).run_id == forked.run_id


def test_the_cli_refuses_another_configuration_before_prefect_starts(tmp_path: Path) -> None:
    from flows.benchmark import _write_run_row

    stored = text_config(tmp_path)
    _write_run_row(Store(str(tmp_path)), stored)
    before = snapshot(tmp_path)
    cli = CliRunner(dict(os.environ))
    args = ["run", "--store", str(tmp_path), "--run-id", "nightly", "--mode", "text"]
    result = cli.run([*args, "--trials", "2", "--conditions", "clean"], timeout_s=120)
    assert result.returncode == 2, result.stderr
    text = result.stderr.replace("\n", " ")
    assert "trials: stored 1, now 2" in text and "--new-run-if-changed" in text
    assert snapshot(tmp_path) == before
