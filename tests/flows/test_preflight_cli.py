"""``evaflow run`` preflight options and ``evaflow systems check``, as a user runs them.

Each command runs the real CLI in a subprocess (and, for Pipecat systems, the bot's
``--check`` in .venv-pipecat); the four run side by side. No name is looked up: every host
is a closed loopback port, given as a parameter or as the variable the provider's client
reads. Run under ``flock /tmp/evaflow-heavy.lock`` (it starts the Pipecat environment).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.tasks.systems.standins.pipecat_driver import require_pipecat

SECRET = "sk-cli-secret-41d7"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


SYSTEMS = {
    # Every host moved to a closed port: a param (stt), the clients' variables (llm, tts).
    "nowhere.yaml": """
name: nowhere
title: Nowhere
architecture: cascade
description: Three components, no route to any of them.
agent: pipecat
components:
  stt: {provider: openai, model: whisper-1, params: {base_url: "${NOWHERE_URL}/v1"}}
  llm: {provider: anthropic, model: claude-haiku-4-5}
  tts: {provider: google, model: gemini-3.1-flash-tts-preview, params: {voice_id: Kore}}
env: [ANTHROPIC_API_KEY, GOOGLE_API_KEY]
""",
    "typo.yaml": """
name: typo
title: Typo
architecture: cascade
description: A parameter Deepgram's service does not take.
agent: pipecat
components:
  stt: {provider: deepgram, model: nova-3, params: {voise: x}}
  llm: {provider: anthropic, model: claude-haiku-4-5}
  tts: {provider: cartesia, model: sonic-3}
env: [DEEPGRAM_API_KEY, ANTHROPIC_API_KEY, CARTESIA_API_KEY]
""",
}


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every command of this module, run at once: name -> (process, store dir)."""
    require_pipecat()
    root = tmp_path_factory.mktemp("preflight-cli")
    systems = root / "systems"
    systems.mkdir()
    for name, text in SYSTEMS.items():
        (systems / name).write_text(text)
    nowhere = f"http://127.0.0.1:{closed_port()}"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env |= {"EVAFLOW_SYSTEMS_PATH": str(systems), "NOWHERE_URL": nowhere, "COLUMNS": "80"}
    env |= {"ANTHROPIC_BASE_URL": nowhere, "GOOGLE_GEMINI_BASE_URL": nowhere}
    env |= {k: SECRET for k in ("ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "DEEPGRAM_API_KEY")}
    env |= {"CARTESIA_API_KEY": SECRET}
    commands = {
        "no-route": ["run", "--system", "nowhere"],
        "no-preflight": ["run", "--system", "nowhere", "--no-preflight", "--check"],
        "typo": ["run", "--system", "typo", "--no-preflight"],
        "systems-check": ["systems", "check", "nowhere", "--json"],
    }

    def run(name: str) -> tuple[subprocess.CompletedProcess[str], Path]:
        store = root / f"store-{name}"
        argv = [*commands[name], *(["--store", str(store)] if commands[name][0] == "run" else [])]
        done = subprocess.run(
            [sys.executable, "-m", "flows", *argv],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        return done, store

    with ThreadPoolExecutor(len(commands)) as pool:
        return dict(zip(commands, pool.map(run, commands), strict=True))


def error_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.strip()]


def test_no_route_stops_the_run_with_one_line_per_component(ran: dict[str, Any]) -> None:
    done, store = ran["no-route"]
    assert done.returncode == 2, done.stderr
    lines = error_lines(done)
    assert lines[0] == "error: preflight failed; no trial was started:"
    assert len(lines) == 4, lines  # one line per problem, never wrapped
    for label in (
        "stt openai (whisper-1)",
        "llm anthropic (claude-haiku-4-5)",
        "tts google (gemini-3.1-flash-tts-preview)",
    ):
        (line,) = [ln for ln in lines if f"system 'nowhere': {label}: " in ln]
        assert "is unreachable" in line
    assert SECRET not in done.stderr + done.stdout
    assert not store.exists()


def test_no_preflight_skips_the_network_but_still_builds(ran: dict[str, Any]) -> None:
    done, store = ran["no-preflight"]
    assert done.returncode == 0, done.stderr
    assert "preflight passed for nowhere" in done.stdout
    assert not store.exists()


def test_a_bad_parameter_stops_the_run_before_any_trial(ran: dict[str, Any]) -> None:
    done, store = ran["typo"]
    assert done.returncode == 2, done.stderr
    assert error_lines(done) == [
        "error: preflight failed; no trial was started:",
        "  - system 'typo': stt deepgram (nova-3): ValueError: DeepgramSTTService takes no "
        "parameter 'voise'",
    ]
    assert not store.exists()


def test_systems_check_shows_every_check_per_component(ran: dict[str, Any]) -> None:
    done, _ = ran["systems-check"]
    assert done.returncode == 2, done.stderr
    checks = json.loads(done.stdout)
    seen = {(c["component"], c["kind"], c["ok"]) for c in checks}
    for label in ("llm anthropic (claude-haiku-4-5)", "tts google (gemini-3.1-flash-tts-preview)"):
        assert {(label, "variables", True), (label, "host", False), (label, "build", True)} <= seen
    assert ("stt openai (whisper-1)", "host", False) in seen
    assert ("stt openai (whisper-1)", "build", True) in seen
    assert SECRET not in done.stdout
