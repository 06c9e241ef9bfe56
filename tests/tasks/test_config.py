"""Run configuration: defaults, YAML loading and errors that name file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks.config import BenchmarkConfig, ConfigError, load_config


def test_defaults_are_the_embedded_offline_run() -> None:
    cfg = BenchmarkConfig()
    assert cfg.systems[0].agent == "reference"
    assert cfg.caller.name == "scripted" and cfg.judge.name == "offline"
    assert cfg.conditions == ["clean", "noise"] and cfg.trials == 3
    assert cfg.scenarios.eva_root is None


def test_run_id_is_assigned_and_stable_fingerprint() -> None:
    a, b = BenchmarkConfig(seed=1), BenchmarkConfig(seed=1)
    assert a.fingerprint() == b.fingerprint() != BenchmarkConfig(seed=2).fingerprint()
    assert a.with_run_id().run_id


def test_yaml_errors_name_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("trials: 0\nscenarios:\n  domains: [airline, trains]\nbogus: 1\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    text = str(info.value)
    assert "bad.yaml" in text and "trials" in text and "scenarios.domains" in text
    assert "trains" in text
    assert "bogus" in text


def test_invalid_yaml_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("trials: [1\n")
    with pytest.raises(ConfigError, match="broken.yaml: invalid YAML"):
        load_config(broken)


def test_run_id_cannot_be_a_path() -> None:
    with pytest.raises(ValueError, match="plain name"):
        BenchmarkConfig(run_id="../../etc")
