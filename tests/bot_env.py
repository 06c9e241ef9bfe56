"""Running a snippet in the Pipecat bot's own environment (.venv-pipecat), where the
bot's processors can be driven with Pipecat's frames; the main environment never imports
Pipecat."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
PIPECAT_PYTHON = REPO / ".venv-pipecat" / "bin" / "python"

needs_bot_env = pytest.mark.skipif(
    not PIPECAT_PYTHON.exists(), reason="needs .venv-pipecat (make pipecat-env)"
)


def last_json_line(script: str) -> Any:
    """Run ``script`` with the bot's Python and return its last stdout line as JSON."""
    done = subprocess.run(
        [str(PIPECAT_PYTHON), "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
