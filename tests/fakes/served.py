"""``evaflow serve-agent`` in its own process, as a user starts it: the tests that call a
served agent over a real socket share this one way of starting and stopping it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@contextmanager
def served_agent(agent: str, params: dict[str, str]) -> Iterator[str]:
    """``python -m flows serve-agent AGENT --port 0 --param K=V ...``; yields its ws:// URL.

    Port 0 lets the system pick a free port; the agent prints the URL it listens on as
    its first line, so the test never races a port it guessed."""
    command = [sys.executable, "-m", "flows", "serve-agent", agent, "--port", "0"]
    for key, value in params.items():
        command += ["--param", f"{key}={value}"]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("listening on ws://"), line
        yield line.split()[-1]
    finally:
        process.terminate()
        process.wait(timeout=20)
