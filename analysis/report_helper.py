"""The report's second interpreter: it writes the attempt pages, then shares the analyses.

A report is CPU work held to one core by the GIL: one page per attempt (over half of a
1,000-attempt text run's report) and the analyses' figures (nearly all of a small audio
run's). So a second interpreter (``python -m analysis.report_helper``, a fresh one: it
imports only the report, never the caller's ``__main__`` or Prefect) takes the pages and
then whatever analyses are left, while the report's own process runs analyses from the
same list. Each analysis is claimed by creating its file in the job's claims folder
(``O_EXCL``), so it runs exactly once, in whichever process is free first: a long page
job leaves the analyses to the report's process, a short one takes half of them.

The helper can be started before the report is due (:func:`prestart`: the benchmark flow
does so while its trials run), so its imports (pandas, matplotlib, every analysis: about
a second) are paid before the report, not on its critical path. It waits for one job on
stdin and exits once it is done or its stdin closes.

This module only starts and feeds the helper (stdlib only: the flow imports it without
pandas or matplotlib); the shared work is :mod:`analysis.report_share`. The report never
depends on the helper: pages or analyses the helper did not finish (it could not
start, it died, a result file is missing) are done in the report's process afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

_warm: list[ReportHelper] = []
_warm_lock = threading.Lock()


class ReportHelper:
    """One helper interpreter, started and waiting for its job."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process

    @classmethod
    def start(cls) -> ReportHelper | None:
        """A new helper, or None if no interpreter could be started."""
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", __name__],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        except OSError:
            return None
        return cls(process)

    def send(self, job: dict[str, Any]) -> bool:
        """Hand over the job; False if the helper is already gone."""
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(json.dumps(job).encode() + b"\n")
            self._process.stdin.close()
        except (BrokenPipeError, OSError):
            return False
        return True

    def wait(self) -> str | None:
        """Wait for the helper to exit; None if it succeeded, else its last error line."""
        assert self._process.stderr is not None
        err = self._process.stderr.read()  # its stdin is closed: communicate() would flush it
        self._process.wait()
        if self._process.returncode == 0:
            return None
        lines = err.decode(errors="replace").strip().splitlines() or ["no output"]
        return f"exit {self._process.returncode}: {lines[-1]}"

    def stop(self) -> None:
        """End the helper now, whatever it is doing."""
        self._process.kill()
        self._process.wait()

    def close(self) -> None:
        """Let an unused helper go (its stdin closes, it exits)."""
        if self._process.stdin and not self._process.stdin.closed:
            self._process.stdin.close()
        self._process.wait()


def prestart() -> None:
    """Start a helper now for the next report of this process (its imports run meanwhile),
    unless one is already waiting (a run that failed before its report left it)."""
    with _warm_lock:
        if _warm:
            return
        helper = ReportHelper.start()
        if helper is not None:
            _warm.append(helper)


def helper_for_report() -> ReportHelper | None:
    """A prestarted helper if there is one, else a new one (None if none can start)."""
    with _warm_lock:
        if _warm:
            return _warm.pop(0)
    return ReportHelper.start()


def claim(claims: Path, name: str) -> bool:
    """Take ``name`` for this process; False if another process took it first."""
    try:
        os.close(os.open(claims / f"{name}.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def main() -> None:
    import analysis.report  # noqa: F401 - every analysis registers itself: import them now
    from analysis.report_share import serve

    line = sys.stdin.readline()
    if line.strip():
        serve(json.loads(line))
        # Everything it made is on disk and closed: leave without the interpreter's teardown
        # (collecting matplotlib's and pandas' objects took 0.2-0.3 s the report waited on).
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
