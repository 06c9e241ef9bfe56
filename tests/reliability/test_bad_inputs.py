"""Bad inputs give a clear error naming the culprit, and nothing already stored is lost.

Malformed scenario files and a tool with an unknown type (a scenario pack built in
``tmp_path`` from two EVA airline records), impossible config values (model and CLI), and
a corrupted Parquet partition (named by queries, quarantined on resume, re-simulated).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml

from scenarios.loader import ScenarioError
from tasks.config import ConfigError, ScenarioSource, load_config, parse_config
from tasks.sources import load_source
from tasks.store import Store, StoreError
from tests.reliability.cli import CliRunner, write_config
from tests.reliability.fakes import fake_trial, tiny_scenarios
from tests.reliability.harness import (
    assert_same_contents,
    assert_store_sound,
    base_config,
    drive_run,
    table_contents,
)

RUN_ID = "kill-run"


@pytest.fixture
def pack(eva_root: Path, tmp_path: Path) -> Path:
    """A two-record airline pack in the EVA layout (a scratch copy, never in the repo)."""
    root = tmp_path / "pack"
    (root / "data" / "airline_scenarios").mkdir(parents=True)
    (root / "configs" / "agents").mkdir(parents=True)
    records = json.loads((eva_root / "data" / "airline_dataset.json").read_text())[:2]
    (root / "data" / "airline_dataset.json").write_text(json.dumps(records, indent=1))
    for record in records:
        name = f"{record['id']}.json"
        shutil.copy(
            eva_root / "data" / "airline_scenarios" / name,
            root / "data" / "airline_scenarios" / name,
        )
    shutil.copy(
        eva_root / "configs" / "agents" / "airline_agent.yaml",
        root / "configs" / "agents" / "airline_agent.yaml",
    )
    return root


def _load(pack: Path) -> list:
    return load_source(ScenarioSource(pack=pack, domains=["airline"]))


def snapshot(root: Path) -> dict[str, str]:
    """Digest of every file under ``root``: a store that lost or changed nothing matches."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def flat(text: str) -> str:
    """stderr without the line breaks rich adds at the terminal width."""
    return text.replace("\n", "")


def test_the_pack_fixture_loads(pack: Path) -> None:
    assert len(_load(pack)) == 2


def test_truncated_dataset_names_file_and_position(pack: Path) -> None:
    dataset = pack / "data" / "airline_dataset.json"
    dataset.write_text(dataset.read_text()[:1500])
    with pytest.raises(ScenarioError) as err:
        _load(pack)
    assert str(dataset) in str(err.value) and "invalid JSON at line" in str(err.value)


def test_record_with_a_wrong_field_names_record_and_field(pack: Path) -> None:
    dataset = pack / "data" / "airline_dataset.json"
    records = json.loads(dataset.read_text())
    records[1]["current_date_time"] = {"not": "a date"}
    dataset.write_text(json.dumps(records))
    with pytest.raises(ScenarioError) as err:
        _load(pack)
    assert err.value.record_id == records[1]["id"]
    assert err.value.field == "current_date_time" and str(dataset) in str(err.value)


def test_missing_scenario_db_names_the_file(pack: Path) -> None:
    record_id = json.loads((pack / "data" / "airline_dataset.json").read_text())[0]["id"]
    db = pack / "data" / "airline_scenarios" / f"{record_id}.json"
    db.unlink()
    with pytest.raises(ScenarioError, match="file not found") as err:
        _load(pack)
    assert err.value.file == str(db) and err.value.record_id == record_id


def test_tool_with_an_unknown_type_names_file_field_and_value(pack: Path) -> None:
    agent_file = pack / "configs" / "agents" / "airline_agent.yaml"
    agent = yaml.safe_load(agent_file.read_text())
    agent["tools"][3]["tool_type"] = "teleport"
    agent_file.write_text(yaml.safe_dump(agent))
    with pytest.raises(ScenarioError) as err:
        _load(pack)
    message = str(err.value)
    assert str(agent_file) in message and "tools.3.tool_type" in message and "teleport" in message


@pytest.mark.parametrize(
    ("fields", "culprit"),
    [
        ({"trials": 0}, "trials"),
        ({"max_attempts": -1}, "max_attempts"),
        ({"max_duration_s": 1}, "max_duration_s"),
        ({"batch_size": 0}, "batch_size"),
        ({"runner": {"workers": 0}}, "runner.workers"),
        ({"runner": {"kind": "cluster"}}, "runner.kind"),
        ({"mode": "video"}, "mode"),
        ({"run_id": "../escape"}, "run_id"),
        ({"scenarios": {"limit": -1}}, "scenarios.limit"),
        ({"trails": 3}, "trails"),
        ({"systems": []}, "systems"),
    ],
)
def test_impossible_config_values_name_the_field(fields: dict, culprit: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(fields, "run.yaml")
    assert f"run.yaml: field '{culprit}'" in str(err.value)


def test_config_file_errors_name_the_file(tmp_path: Path) -> None:
    config = write_config(tmp_path / "run.yaml", trials=3, conditions="clean")
    with pytest.raises(ConfigError, match=rf"{config}: field 'conditions'"):
        load_config(config)
    (tmp_path / "broken.yaml").write_text("trials: [3\n")
    with pytest.raises(ConfigError, match="broken.yaml: invalid YAML"):
        load_config(tmp_path / "broken.yaml")


@pytest.fixture
def stored_run(tmp_path: Path) -> Path:
    """A store that already holds a complete run (and a second run next to it)."""
    store = tmp_path / "store"
    drive_run(base_config(store), tiny_scenarios(), fake_trial)
    drive_run(base_config(store, run_id="other-run"), tiny_scenarios(), fake_trial)
    return store


def test_cli_rejects_impossible_values_before_touching_the_store(
    cli: CliRunner, stored_run: Path, tmp_path: Path
) -> None:
    before = snapshot(stored_run)
    result = cli.run(["run", "--store", str(stored_run), "--trials", "0", "--run-id", RUN_ID])
    assert result.returncode == 2
    assert "field 'trials'" in flat(result.stderr) and "got 0" in flat(result.stderr)
    bad = write_config(tmp_path / "bad.yaml", store=str(stored_run), max_attempts=0)
    result = cli.run(["run", "--config", str(bad)])
    assert result.returncode == 2 and f"{bad}: field 'max_attempts'" in flat(result.stderr)
    assert snapshot(stored_run) == before


@pytest.mark.parametrize("table", ["metrics", "trials", "turns"])
def test_corrupt_partition_is_named_then_quarantined_and_resimulated(
    cli: CliRunner, stored_run: Path, tmp_path: Path, table: str
) -> None:
    want = table_contents(stored_run, RUN_ID)
    keys = set(want["trials"]["trial_key"])
    other = snapshot(stored_run / table / "other-run")
    victim = sorted((stored_run / table / RUN_ID).glob("*.parquet"))[1]
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 3])
    corrupt_copy = victim.read_bytes()
    with pytest.raises(StoreError, match=victim.name):
        Store(str(stored_run)).query(f"SELECT count(*) FROM {table}")
    if table == "metrics":  # the command line says the same (one case is enough)
        result = cli.run(["query", "SELECT count(*) FROM metrics", "--store", str(stored_run)])
        assert result.returncode == 2 and victim.name in flat(result.stderr)

    resimulated = drive_run(base_config(stored_run), tiny_scenarios(), fake_trial)
    assert resimulated >= 1, "the quarantined batch's trials must be simulated again"
    assert_store_sound(stored_run, RUN_ID, keys)
    assert_same_contents(table_contents(stored_run, RUN_ID), want)
    # Nothing is deleted: the corrupt part waits in quarantine; the other run is untouched.
    kept = stored_run / "_quarantine" / RUN_ID / table / victim.name
    assert kept.read_bytes() == corrupt_copy
    assert snapshot(stored_run / table / "other-run") == other


@pytest.mark.slow  # starts Prefect (~15-40 s); the loader tests above cover the messages
def test_bad_scenario_pack_through_the_cli_loses_nothing(
    cli: CliRunner, stored_run: Path, pack: Path
) -> None:
    dataset = pack / "data" / "airline_dataset.json"
    dataset.write_text(dataset.read_text()[:1500])
    before = snapshot(stored_run)
    result = cli.run(
        [
            "run",
            "--pack",
            str(pack),
            "--domains",
            "airline",
            "--mode",
            "text",
            "--no-report",
            "--store",
            str(stored_run),
            "--run-id",
            "bad-pack",
        ]
    )
    assert result.returncode != 0
    assert str(dataset) in flat(result.stderr) and "invalid JSON at line" in flat(result.stderr)
    after = snapshot(stored_run)
    assert {k: after.get(k) for k in before} == before, "a stored file changed or vanished"
    assert "bad-pack" not in Store(str(stored_run)).run_ids(), "a run that never ran is listed"


@pytest.mark.parametrize(
    ("args", "field", "valid"),
    [
        (["--conditions", "clean,nonsense-cond"], "conditions", "accent+noise"),
        (["--agent", "mine=nope"], "systems[0].agent", "reference"),
        (["--caller", "robot"], "caller.name", "scripted"),
        (["--judge", "oracle"], "judge.name", "offline"),
        (["--records", "air-001,air-999"], "scenarios.records", "air-012"),
    ],
)
def test_unknown_names_stop_the_run_before_anything_is_stored(
    cli: CliRunner, tmp_path: Path, args: list[str], field: str, valid: str
) -> None:
    """Before: six infra_error attempts, exit 0 and a table of null pass rates."""
    store = tmp_path / "store"
    result = cli.run(["run", "--quick", "--store", str(store), *args], timeout_s=120)
    assert result.returncode == 2, result.stderr[-2000:]
    message = flat(result.stderr)
    assert f"field '{field}'" in message and "valid names:" in message and valid in message
    assert not store.exists() or not any(p.is_file() for p in store.rglob("*.parquet"))


def test_a_run_config_names_unknown_metrics_and_conditions_file_entries(
    cli: CliRunner, tmp_path: Path
) -> None:
    extra = tmp_path / "conditions.yaml"
    extra.write_text(yaml.safe_dump({"conditions": [{"name": "quiet-office"}]}))
    config = write_config(
        tmp_path / "run.yaml",
        store=str(tmp_path / "store"),
        conditions=["quiet-office", "loud-office"],
        conditions_file=str(extra),
        metrics=["task_completion", "vibes"],
    )
    result = cli.run(["run", "--config", str(config)], timeout_s=120)
    assert result.returncode == 2
    message = flat(result.stderr)
    # The file's own conditions are valid names; the unknown ones are listed, all at once.
    assert "unknown condition 'loud-office'" in message and "quiet-office" in message
    assert "'quiet-office'" not in message.split("unknown condition")[1].split(";")[0]
    assert "unknown metric 'vibes'" in message and f"{config}: field 'metrics'" in message
    assert not (tmp_path / "store").exists()
