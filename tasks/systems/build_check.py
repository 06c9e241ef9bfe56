"""Build a Pipecat system's pipeline without a call: the bot's ``--check``, from evaflow.

``python -m tasks.systems.pipecat_bot --check --system-json FILE`` (in ``.venv-pipecat``)
constructs every component's Pipecat service with the system's parameters and prints one
JSON line per component (``{"component", "ok", "detail"}``); a system it cannot build at
all (unknown provider, missing role) is one ``pipecat bot: ...`` line on stderr and exit
status 2. Building opens no connection, so placeholder keys stand in for unset ones (the
variable check names those). One process per distinct system; it costs a start of the
Pipecat environment (a few seconds), run in parallel with the network checks.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from tasks.systems.pipecat_process import REPO_ROOT, bot_python
from tasks.systems.providers import key_variables
from tasks.systems.spec import SystemSpec

BUILD_TIMEOUT_S = 120.0
PLACEHOLDER_KEY = "evaflow-check-placeholder"
PREFIX = "pipecat bot: "
TAIL = 400


def bot_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The bot's environment for a check: placeholders for unset keys (nothing is sent)."""
    env = {**os.environ, **environ}
    env.update({k: PLACEHOLDER_KEY for k in key_variables() if not env.get(k)})
    env["PYTHONPATH"] = str(REPO_ROOT)
    return env


def parse(code: int, stdout: str, stderr: str) -> list[dict[str, Any]]:
    """The bot's answer as checks (``component``, ``kind``, ``ok``, ``detail``)."""
    checks: list[dict[str, Any]] = []
    for line in stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue  # a library's own print
        if isinstance(item, dict) and {"component", "ok", "detail"} <= set(item):
            checks.append({**item, "kind": "build"})
    said = [ln[len(PREFIX) :] for ln in stderr.splitlines() if ln.startswith(PREFIX)]
    failed_components = {c["component"] for c in checks if not c["ok"]}
    for line in said:
        if not any(line.startswith(f"{c}:") for c in failed_components):
            checks.append({"component": "", "kind": "build", "ok": False, "detail": line})
    if code != 0 and not any(not c["ok"] for c in checks):
        tail = " ".join(stderr.strip().splitlines()[-3:])[-TAIL:]
        checks.append(
            {
                "component": "",
                "kind": "build",
                "ok": False,
                "detail": f"pipecat bot --check exited with status {code}: {tail}",
            }
        )
    return checks


def run_bot_check(
    params: Mapping[str, Any], environ: Mapping[str, str], timeout_s: float = BUILD_TIMEOUT_S
) -> list[dict[str, Any]]:
    """Run the bot's ``--check`` on one system's params; its findings."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="pipecat-check-") as spec:
        json.dump(dict(params), spec)
        spec.flush()
        command = [str(bot_python()), "-m", "tasks.systems.pipecat_bot", "--check"]
        try:
            done = subprocess.run(
                [*command, "--system-json", spec.name],
                cwd=REPO_ROOT,
                env=bot_environment(environ),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout_s,
            )
        except subprocess.TimeoutExpired:
            detail = f"pipecat bot --check did not finish within {timeout_s:.0f} s"
            return [{"component": "", "kind": "build", "ok": False, "detail": detail}]
        except OSError as exc:
            detail = f"pipecat bot --check could not start ({exc.strerror})"
            return [{"component": "", "kind": "build", "ok": False, "detail": detail}]
    return parse(done.returncode, done.stdout, done.stderr)


def build_checks(
    systems: Sequence[SystemSpec], environ: Mapping[str, str], pool: ThreadPoolExecutor
) -> dict[str, Future[list[dict[str, Any]]]]:
    """System name -> its build findings (one bot process per distinct system)."""
    started: dict[str, Future[list[dict[str, Any]]]] = {}
    found: dict[str, Future[list[dict[str, Any]]]] = {}
    for spec in systems:
        if spec.agent != "pipecat" or not isinstance(spec.params.get("components"), dict):
            continue
        key = json.dumps(spec.params, sort_keys=True, default=str)
        if key not in started:
            started[key] = pool.submit(run_bot_check, spec.params, environ)
        found[spec.name] = started[key]
    return found
