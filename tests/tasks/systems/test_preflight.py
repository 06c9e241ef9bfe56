"""Preflight: one error naming every system and everything it lacks; values never shown."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

import tasks.systems.preflight as pf
from tasks.config import ConfigError, SystemSpec
from tasks.systems.catalogue import load_catalogue, to_system_spec


@pytest.fixture
def listening() -> Iterator[int]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def pipecat_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    python = tmp_path / ".venv-pipecat" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    monkeypatch.setenv("EVAFLOW_PIPECAT_PYTHON", str(python))
    return python


def catalogue_spec(name: str, environ: dict[str, str]) -> SystemSpec:
    return to_system_spec(load_catalogue(environ={}).get(name), environ)


def test_a_missing_key_is_named_with_the_system(pipecat_env: Path, listening: int) -> None:
    env = {"OPENAI_REALTIME_BASE_URL": f"ws://127.0.0.1:{listening}/v1"}
    spec = catalogue_spec("gpt-realtime-1.5", env)
    with pytest.raises(ConfigError) as info:
        pf.preflight([spec], environ=env)
    assert "system 'gpt-realtime-1.5'" in str(info.value)
    assert "OPENAI_API_KEY is not set" in str(info.value)
    pf.preflight([spec], environ={**env, "OPENAI_API_KEY": "sk-x"})  # complete: no error


def test_everything_missing_for_every_system_in_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVAFLOW_PIPECAT_PYTHON", str(tmp_path / "absent" / "python"))
    port = closed_port()
    env = {"EVAFLOW_LLM_BASE_URL": f"http://127.0.0.1:{port}/v1", "SECRET": "s3cr3t-value"}
    systems = [
        catalogue_spec("pipecat-offline", env),
        SystemSpec(name="mine", agent="llm", params={"model": "m", "api_key_env": "MY_KEY"}),
        SystemSpec(name="ok", agent="reference"),
    ]
    with pytest.raises(ConfigError) as info:
        pf.preflight(systems, environ=env, timeout_s=0.5)
    text = str(info.value)
    assert "no trial was started" in text
    offline = text.split("system 'pipecat-offline':")[1].split("system 'mine'")[0]
    assert "EVAFLOW_LLM_MODEL is not set" in offline and "EVAFLOW_LLM_BASE_URL" not in offline
    assert "make pipecat-env" in offline
    assert f"127.0.0.1:{port} is unreachable" in offline
    assert "MY_KEY is not set" in text.split("system 'mine':")[1]
    assert "'ok'" not in text and "s3cr3t-value" not in text


def test_endpoints_and_env_params_are_found_anywhere_in_params() -> None:
    params = {
        "components": {"llm": {"params": {"base_url": "https://h/v1", "x": ["wss://w:9"]}}},
        "api_key_env": "K",
        "judge": {"token_env": "T"},
        "plain": "not a url",
        "later": "${LATER}/v1",
    }
    assert pf.endpoints(params) == ["https://h/v1", "wss://w:9"]
    assert pf.env_params(params) == ["K", "T"]


def test_reachable_endpoint_passes(listening: int) -> None:
    assert pf.unreachable(f"http://127.0.0.1:{listening}/v1", 1.0) is None
    assert "unreachable" in (pf.unreachable(f"ws://127.0.0.1:{closed_port()}/ws", 0.5) or "")
