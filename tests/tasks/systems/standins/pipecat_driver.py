"""Run a short script in the Pipecat bot's own environment (``.venv-pipecat``) and read its JSON.

Pipecat and the provider SDKs it pins live in ``.venv-pipecat``; the stand-ins run in the
test process (``.venv``). A stand-in test starts its server here and hands a script that
builds the real Pipecat service (``tasks.systems.pipecat_bot.pipeline``) pointed at it; the
script prints one JSON document as its last stdout line.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[4]
PIPECAT_PYTHON = ROOT / ".venv-pipecat" / "bin" / "python"


class PipecatScriptError(RuntimeError):
    """The script failed or printed no JSON; the message carries its stderr."""


def pipecat_available() -> bool:
    return PIPECAT_PYTHON.exists()


def require_pipecat() -> None:
    """Skip the calling test when the Pipecat environment is not installed."""
    if not pipecat_available():
        pytest.skip(f"{PIPECAT_PYTHON} missing (make pipecat-env)")


def run_in_pipecat(script: str, env: dict[str, str] | None = None, timeout: float = 60) -> Any:
    """``.venv-pipecat/bin/python -c script`` with cwd = repo root; the JSON on its last line.

    ``env`` adds to (and overrides) this process's environment.
    """
    full_env = {**os.environ, **(env or {})}
    full_env.pop("VIRTUAL_ENV", None)  # the child is its own venv's interpreter
    try:
        done = subprocess.run(
            [str(PIPECAT_PYTHON), "-c", script],
            cwd=ROOT,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        stderr = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        raise PipecatScriptError(f"pipecat script timed out after {timeout} s:\n{stderr}") from exc
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or not lines:
        raise PipecatScriptError(
            f"pipecat script exited {done.returncode}\nstdout:\n{done.stdout[-4000:]}"
            f"\nstderr:\n{done.stderr[-8000:]}"
        )
    try:
        return json.loads(lines[-1])
    except ValueError as exc:
        raise PipecatScriptError(
            f"last stdout line is not JSON: {lines[-1][:500]!r}\nstderr:\n{done.stderr[-8000:]}"
        ) from exc
