"""The bot's ``--check``: every component's Pipecat service built without a call.

These start ``.venv-pipecat`` processes (a few seconds each, run in parallel): run them
under ``flock /tmp/evaflow-heavy.lock``.
"""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import tasks.systems.preflight as pf
from tasks.config import ConfigError, SystemSpec
from tasks.systems.catalogue import load_catalogue, to_system_spec
from tasks.systems.providers import key_variables
from tests.tasks.systems.standins.pipecat_driver import (
    PIPECAT_PYTHON,
    ROOT,
    require_pipecat,
    run_in_pipecat,
)

PLACEHOLDERS = {k: "placeholder-key" for k in key_variables()}
BAD_PARAM = {
    "architecture": "cascade",
    "components": {
        "stt": {"provider": "deepgram", "model": "nova-3", "params": {"voise": "x"}},
        "llm": {"provider": "anthropic", "model": "claude-haiku-4-5"},
        "tts": {"provider": "cartesia", "model": "sonic-3"},
    },
}
BAD_VALUE = {
    "architecture": "hybrid",
    "components": {"realtime": {"provider": "ultravox", "params": {"temperature": 5}}},
}
MISSING_ROLE = {
    "architecture": "cascade",
    "components": {"llm": {"provider": "anthropic"}, "tts": {"provider": "cartesia"}},
}


@pytest.fixture(autouse=True)
def _pipecat() -> None:
    require_pipecat()
    pf.clear_passed()


def bot_check(
    system: dict[str, Any], tmp_path: Path, name: str
) -> subprocess.CompletedProcess[str]:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(system))
    env = {**os.environ, **PLACEHOLDERS, "PYTHONPATH": str(ROOT)}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        [str(PIPECAT_PYTHON), "-m", "tasks.systems.pipecat_bot", "--check"]
        + ["--system-json", str(path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def said(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.startswith("pipecat bot: ")]


def test_a_bad_parameter_or_a_missing_role_is_one_line_and_status_2(tmp_path: Path) -> None:
    cases = {"param": BAD_PARAM, "value": BAD_VALUE, "role": MISSING_ROLE}
    with ThreadPoolExecutor(len(cases)) as pool:
        done = dict(zip(cases, pool.map(lambda kv: bot_check(kv[1], tmp_path, kv[0]),
                                         cases.items()), strict=True))  # fmt: skip
    assert {k: d.returncode for k, d in done.items()} == {"param": 2, "value": 2, "role": 2}
    assert said(done["param"]) == [
        "pipecat bot: stt deepgram (nova-3): ValueError: DeepgramSTTService takes no "
        "parameter 'voise'"
    ]
    findings = [json.loads(line) for line in done["param"].stdout.splitlines()]
    assert [(f["component"], f["ok"]) for f in findings] == [
        ("stt deepgram (nova-3)", False),
        ("llm anthropic (claude-haiku-4-5)", True),
        ("tts cartesia (sonic-3)", True),
    ]
    (value,) = said(done["value"])
    assert value.startswith("pipecat bot: realtime ultravox: ValidationError: ")
    assert "temperature" in value
    assert said(done["role"]) == ["pipecat bot: cascade system lacks components ['stt']"]


GUARDED_CHECK = r"""
import asyncio, json, socket, sys
attempts = []
def refuse(name):
    def guard(*args, **kwargs):
        attempts.append([name, repr(args[1:] if name == "connect" else args)[:120]])
        raise OSError("test guard: no connection while building")
    return guard
socket.getaddrinfo = refuse("getaddrinfo")
socket.create_connection = refuse("create_connection")
socket.socket.connect = refuse("connect")
socket.socket.connect_ex = refuse("connect_ex")
from tasks.systems.pipecat_bot.check import check_components
from tasks.systems.pipecat_bot.pipeline import SystemParams, check_system
out = {}
for name, params in json.load(open(sys.argv[1])).items():
    system = SystemParams.model_validate(params)
    check_system(system)
    out[name] = asyncio.run(check_components(dict(system.components)))
try:  # the guard itself works: this attempt must be recorded
    socket.create_connection(("127.0.0.1", 9))
except OSError:
    pass
print(json.dumps({"built": out, "attempts": attempts}))
"""


def test_every_shipped_system_is_built_with_placeholder_keys_and_no_connection(
    tmp_path: Path,
) -> None:
    env = {**PLACEHOLDERS, "EVAFLOW_LLM_MODEL": "m"}
    env |= {v: "http://127.0.0.1:9/v1" for v in ("EVAFLOW_LLM_BASE_URL", "WHISPER_BASE_URL",
            "QWEN3_5_27B_BASE_URL", "VOXTRAL_TTS_BASE_URL", "PARAKEET_BASE_URL",
            "GEMMA_4_31B_BASE_URL", "KOKORO_BASE_URL", "COHERE_TRANSCRIBE_BASE_URL",
            "GEMMA_4_26B_BASE_URL")}  # fmt: skip
    catalogue = load_catalogue(environ={})
    systems = {
        name: to_system_spec(catalogue.get(name), env).params
        for name in catalogue
        if catalogue.get(name).agent == "pipecat"
    }
    assert len(systems) == 13
    path = tmp_path / "systems.json"
    path.write_text(json.dumps(systems))
    result = run_in_pipecat(GUARDED_CHECK.replace("sys.argv[1]", repr(str(path))), env, 120)
    failed = {
        name: [f for f in found if not f["ok"]]
        for name, found in result["built"].items()
        if any(not f["ok"] for f in found)
    }
    assert failed == {}
    for name, found in result["built"].items():
        roles = {f["component"].split()[0] for f in found}
        assert roles == set(systems[name]["components"]), name
    # Only the guard's own control attempt: building opened nothing, looked nothing up.
    assert [a[0] for a in result["attempts"]] == ["create_connection"]


def test_preflight_stops_a_bad_parameter_before_anything_runs(tmp_path: Path) -> None:
    spec = SystemSpec(name="typo", agent="pipecat", params=BAD_PARAM)
    with pytest.raises(ConfigError) as info:
        pf.preflight([spec], environ=PLACEHOLDERS, network=False)
    assert str(info.value).splitlines() == [
        "preflight failed; no trial was started:",
        "  - system 'typo': stt deepgram (nova-3): ValueError: DeepgramSTTService takes no "
        "parameter 'voise'",
    ]
