"""``evaflow systems list|show`` and ``evaflow run --system``: names in, preflight first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from flows import systems_cli  # noqa: F401 - registers `systems` on the app
from flows.cli import app
from tasks.config import BenchmarkConfig, ConfigError, parse_config

REPO = Path(__file__).resolve().parents[2]
SECRET = "sk-test-never-printed-7f3a"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_list_json_names_every_system_with_its_architecture(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    done = runner.invoke(app, ["systems", "list", "--json"])
    assert done.exit_code == 0, done.output
    rows = {r["name"]: r for r in json.loads(done.stdout)}
    assert len(rows) == 15 and {"reference", "llm", "pipecat-offline"} <= set(rows)
    assert rows["gpt-realtime-1.5"]["architecture"] == "s2s"
    assert rows["ultravox-realtime"]["architecture"] == "hybrid"
    assert rows["nova-3+gpt-5.4+sonic-3"]["architecture"] == "cascade"
    assert rows["gpt-realtime-1.5"]["variables"] == {"OPENAI_API_KEY": True}
    assert rows["gemini-3.1-flash-live"]["variables"] == {"GOOGLE_API_KEY": False}
    assert SECRET not in done.stdout


def test_show_lists_components_and_variables_never_values(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPGRAM_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    done = runner.invoke(app, ["systems", "show", "nova-3+gpt-5.4-mini+aura-2"])
    assert done.exit_code == 0, done.output
    for text in ("deepgram", "nova-3", "gpt-5.4-mini", "aura-2", "DEEPGRAM_API_KEY: set"):
        assert text in done.stdout
    assert "OPENAI_API_KEY: not set" in done.stdout and SECRET not in done.stdout
    data = json.loads(runner.invoke(app, ["systems", "show", "pipecat-offline", "--json"]).stdout)
    assert set(data["components"]) == {"stt", "llm", "tts"}
    assert data["components"]["stt"]["provider"] == "evaflow-pocketsphinx"
    unknown = runner.invoke(app, ["systems", "show", "gpt-realtime-9"])
    assert unknown.exit_code == 2 and "valid names" in unknown.output


def test_run_takes_systems_and_agents_together(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[BenchmarkConfig] = []

    def fake_execute(config: BenchmarkConfig, **_: Any) -> Any:
        seen.append(config)
        return SimpleNamespace(run_id="r", store="s", attempts=0, valid=0, aggregates=[])

    monkeypatch.setattr("flows.cli.execute", fake_execute)
    done = runner.invoke(
        app, ["run", "--agent", "text", "--system", "reference", "--mode", "text", "--json"]
    )
    assert done.exit_code == 0, done.output
    assert [(s.name, s.agent) for s in seen[0].systems] == [
        ("text", "text"),
        ("reference", "reference"),
    ]


def test_flow_preflight_runs_before_anything_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flows.benchmark import run_benchmark

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = parse_config({"systems": ["gpt-realtime-mini"], "store": str(tmp_path / "store")})
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        run_benchmark.fn(config)  # the flow body itself (as a deployment runs it)
    assert not (tmp_path / "store").exists()


def test_run_without_the_key_fails_before_any_trial_and_stores_nothing(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    store = tmp_path / "store"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "flows",
            "run",
            "--system",
            "gpt-realtime-1.5",
            "--store",
            str(store),
        ],
        cwd=tmp_path,
        env={**env, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "gpt-realtime-1.5" in done.stderr and "OPENAI_API_KEY" in done.stderr
    assert "no trial was started" in done.stderr
    assert not store.exists() and not list(tmp_path.iterdir())


def test_sweep_takes_catalogue_names(tmp_path: Path) -> None:
    from flows.sweep import SweepConfig, sweep_benchmark_config

    base = tmp_path / "base.yaml"
    base.write_text("mode: text\nsystems: [llm]\n")
    sweep = SweepConfig(
        base_config=base, systems=["gpt-realtime-mini", {"name": "t", "agent": "text"}]
    )
    config = sweep_benchmark_config(sweep)
    assert [(s.name, s.agent) for s in config.systems] == [
        ("gpt-realtime-mini", "pipecat"),
        ("t", "text"),
    ]
    assert config.systems[0].params["architecture"] == "s2s" and config.mode == "text"
