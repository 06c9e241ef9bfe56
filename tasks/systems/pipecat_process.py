"""The Pipecat bot as a child process of the harness: start, wait until it listens, stop.

The bot (:mod:`tasks.systems.pipecat_bot`) runs in its own virtual environment
(``.venv-pipecat``, ``make pipecat-env``) because pipecat-ai cannot share evaflow's. One bot
per system and harness process (a Dask worker, the threads runner) serves every call of
that process, one Pipecat pipeline per call; each gets a free port from the OS, so
concurrent workers never collide. Bots stop at interpreter exit, and exit by themselves
when their parent dies (they poll their parent), so a killed run leaves
no orphan. A bot that cannot start is an error naming the cause (its stderr tail).
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

REPO_ROOT = Path(__file__).resolve().parents[2]
VENV_ENV = "EVAFLOW_PIPECAT_PYTHON"
STARTUP_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 5.0
STDERR_TAIL = 2000


class BotStartError(RuntimeError):
    """The bot process could not be started or died before it listened."""


def bot_python() -> Path:
    """The Pipecat environment's interpreter (``$EVAFLOW_PIPECAT_PYTHON`` overrides)."""
    return Path(os.environ.get(VENV_ENV) or REPO_ROOT / ".venv-pipecat" / "bin" / "python")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class BotProcess:
    """One running bot: ``url`` while it runs; ``stop()`` ends it."""

    def __init__(self, system: dict[str, Any], python: Path | None = None) -> None:
        self.system = system
        self.python = python or bot_python()
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._files: list[Any] = []

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def start(self, timeout_s: float = STARTUP_TIMEOUT_S) -> BotProcess:
        if not self.python.exists():
            raise BotStartError(
                f"the Pipecat environment is missing ({self.python}); run `make pipecat-env`"
            )
        spec = tempfile.NamedTemporaryFile("w", suffix=".json", prefix="pipecat-system-")  # noqa: SIM115 - kept for the bot's life
        json.dump(self.system, spec)
        spec.flush()
        stderr: IO[bytes] = tempfile.TemporaryFile(prefix="pipecat-bot-")  # noqa: SIM115
        self._files = [spec, stderr]
        self.port = _free_port()
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        command = [str(self.python), "-m", "tasks.systems.pipecat_bot", "--port", str(self.port)]
        self.process = subprocess.Popen(
            [*command, "--system-json", spec.name],
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        self._wait_listening(timeout_s)
        return self

    def _wait_listening(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        assert self.process is not None
        while not _listening(self.port):
            code = self.process.poll()
            if code is not None:
                raise BotStartError(f"pipecat bot exited with status {code}: {self.stderr_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise BotStartError(
                    f"pipecat bot did not listen on port {self.port} within {timeout_s:.0f} s: "
                    f"{self.stderr_tail()}"
                )
            time.sleep(0.1)

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stderr_tail(self) -> str:
        if len(self._files) < 2:
            return ""
        stderr = self._files[1]
        stderr.seek(0)
        return stderr.read().decode("utf-8", "replace")[-STDERR_TAIL:].strip()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(STOP_TIMEOUT_S)
        for handle in self._files:
            handle.close()
        self._files = []


_BOTS: dict[str, BotProcess] = {}
_LOCK = threading.Lock()


def shared_bot(system: dict[str, Any]) -> BotProcess:
    """This process's bot for ``system`` (started on first use, restarted if it died)."""
    key = json.dumps(system, sort_keys=True, default=str)
    with _LOCK:
        bot = _BOTS.get(key)
        if bot is None or not bot.running():
            if bot is not None:
                bot.stop()
            bot = _BOTS[key] = BotProcess(system).start()
        return bot


@atexit.register
def stop_all() -> None:
    with _LOCK:
        for bot in _BOTS.values():
            bot.stop()
        _BOTS.clear()
