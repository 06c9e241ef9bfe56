"""Driving the real ``evaflow`` command line in child processes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def evaflow_command() -> list[str]:
    """The installed ``evaflow`` script next to this interpreter, else ``-m flows.cli``."""
    script = Path(sys.executable).with_name("evaflow")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "flows.cli"]


class CliRunner:
    """Starts ``evaflow`` children in their own session so a kill takes their whole group
    (the CLI's temporary Prefect server is a child of the CLI process)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.started: list[subprocess.Popen[str]] = []

    def start(
        self, args: list[str], extra_env: dict[str, str] | None = None
    ) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [*evaflow_command(), *args],
            cwd=REPO,
            env={**self.env, **(extra_env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.started.append(proc)
        return proc

    def run(
        self, args: list[str], timeout_s: float = 300, extra_env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        proc = self.start(args, extra_env)
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            out, err = proc.communicate()
            raise AssertionError(
                f"evaflow {args} timed out after {timeout_s} s:\n{err[-3000:]}"
            ) from None
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def stop_all(self) -> None:
        for proc in self.started:
            if proc.poll() is None:
                kill_group(proc)
                proc.communicate()


def kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the process group we created for ``proc`` (the CLI and its server)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def write_config(path: Path, **fields: object) -> Path:
    """A YAML run config for ``evaflow run --config``."""
    path.write_text(yaml.safe_dump(fields, sort_keys=True), encoding="utf-8")
    return path
