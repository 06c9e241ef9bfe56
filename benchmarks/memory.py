"""Peak memory of a piece of work: run it in a child process and read the kernel's numbers.

``run_child("module:function", kwargs)`` starts ``python -m benchmarks.memory --child ...``,
which imports and calls the function and writes its JSON result to a file. The parent
reads the child's peak resident set from ``wait4`` (``ru_maxrss``: the kernel's high-water
mark, which also covers Arrow and DuckDB buffers that ``tracemalloc`` cannot see) and,
optionally, samples the whole process tree (a run's Prefect server and Dask workers are
descendants), summing PSS so pages shared between them are counted once.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from benchmarks.common import MB, REPO_ROOT


class ChildResult(BaseModel):
    """What one child process returned and how much memory it used."""

    target: str
    value: Any = Field(default=None, description="The function's JSON-serialisable result")
    ok: bool = Field(default=False, description="Exited 0 and wrote its result")
    error: str | None = None
    wall_s: float = Field(default=0.0, description="Wall time of the whole child process")
    call_s: float | None = Field(default=None, description="Wall time of the function call")
    peak_rss_mb: float | None = Field(default=None, description="ru_maxrss of the child")
    import_rss_mb: float | None = Field(
        default=None, description="Child RSS after importing the target, before the call"
    )
    tree_peak_pss_mb: float | None = Field(
        default=None, description="Largest sampled PSS sum of the child and its descendants"
    )
    tree_peak_rss_mb: float | None = Field(
        default=None, description="Largest sampled RSS sum (shared pages counted repeatedly)"
    )


class TreeSampler(threading.Thread):
    """Samples the memory of a process and its descendants until stopped.

    Two sums: RSS (counts pages shared between processes once per process, so it
    overstates a tree of Python processes) and PSS (shares them out: the tree's real use).
    """

    def __init__(self, pid: int, interval_s: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.interval_s = interval_s
        self.peak_rss = 0
        self.peak_pss = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        import psutil

        try:
            root = psutil.Process(self.pid)
        except psutil.Error:
            return
        while not self._stop_event.is_set():
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.Error:
                break
            rss = pss = 0
            for proc in procs:
                sample = _rss_and_pss(proc)
                if sample is not None:
                    rss += sample[0]
                    pss += sample[1]
            self.peak_rss = max(self.peak_rss, rss)
            self.peak_pss = max(self.peak_pss, pss)
            self._stop_event.wait(self.interval_s)

    def stop(self) -> tuple[float | None, float | None]:
        """(peak PSS sum, peak RSS sum) in MB."""
        self._stop_event.set()
        self.join(timeout=5)
        return (self.peak_pss / MB or None, self.peak_rss / MB or None)


def _rss_and_pss(proc: Any) -> tuple[int, int] | None:
    """(RSS, PSS) in bytes from one read of the kernel's rollup.

    psutil reads RSS from statm and PSS from smaps a moment later; a process that is
    allocating in between shows PSS above RSS. ``smaps_rollup`` gives both in one snapshot.
    """
    import psutil

    try:
        with open(f"/proc/{proc.pid}/smaps_rollup", encoding="ascii") as fh:
            fields = dict(line.split(":", 1) for line in fh if line[:4] in ("Rss:", "Pss:"))
        return int(fields["Rss"].split()[0]) * 1024, int(fields["Pss"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        pass
    try:
        info = proc.memory_full_info()
    except psutil.Error:
        return None
    return info.rss, getattr(info, "pss", info.rss)


def run_child(
    target: str,
    kwargs: dict[str, Any] | None = None,
    *,
    timeout_s: float | None = None,
    sample_tree: bool = False,
    env: dict[str, str] | None = None,
    log_path: Path | None = None,
    stream: bool = False,
) -> ChildResult:
    """Call ``module:function(**kwargs)`` in a fresh interpreter; never raises.

    The child's output goes to ``log_path`` (a temporary file by default), or to this
    process's own stdout when ``stream`` is set.
    """
    with tempfile.TemporaryDirectory(prefix="evaflow-bench-child-") as tmp:
        result_file = Path(tmp) / "result.json"
        args = [target, str(result_file), json.dumps(kwargs or {}, default=str)]
        log_file = log_path or Path(tmp) / "child.log"
        with open(log_file, "wb") as log:
            started = time.perf_counter()
            # A new session, so a timeout can end the child's whole group (its children too).
            proc = subprocess.Popen(
                [sys.executable, "-m", "benchmarks.memory", "--child", *args],
                cwd=REPO_ROOT,
                env={**os.environ, **(env or {})},
                stdout=None if stream else log,
                stderr=None if stream else subprocess.STDOUT,
                start_new_session=True,
            )
            code, peak_mb, (tree_pss, tree_rss) = _wait(proc.pid, timeout_s, sample_tree)
            proc.returncode = code  # reaped by wait4 above, not by Popen
        outcome = ChildResult(
            target=target,
            wall_s=time.perf_counter() - started,
            peak_rss_mb=peak_mb,
            tree_peak_pss_mb=tree_pss,
            tree_peak_rss_mb=tree_rss,
        )
        return _read_outcome(outcome, result_file, code, str(log_file))


def _wait(
    pid: int, timeout_s: float | None, sample_tree: bool
) -> tuple[int, float, tuple[float | None, float | None]]:
    """Reap the child: (exit code, its ru_maxrss, the tree's peak (PSS, RSS) sums), in MB."""
    sampler = TreeSampler(pid) if sample_tree else None
    if sampler:
        sampler.start()
    timer = threading.Timer(timeout_s, _kill_group, args=(pid,)) if timeout_s else None
    if timer:
        timer.start()
    _, status, usage = os.wait4(pid, 0)
    if timer:
        timer.cancel()
    tree_peaks = sampler.stop() if sampler else (None, None)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024 / MB, tree_peaks


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def _read_outcome(outcome: ChildResult, result_file: Path, code: int, log: str) -> ChildResult:
    if result_file.is_file():
        payload = json.loads(result_file.read_text(encoding="utf-8"))
        outcome.value = payload.get("value")
        outcome.call_s = payload.get("call_s")
        outcome.import_rss_mb = payload.get("import_rss_mb")
        outcome.error = payload.get("error")
    if code != 0 and outcome.error is None:
        tail = Path(log).read_text(encoding="utf-8", errors="replace")[-1500:]
        outcome.error = f"child exited with code {code}: {tail}"
    outcome.ok = code == 0 and outcome.error is None and result_file.is_file()
    return outcome


def _current_rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / MB


def child_main(target: str, result_file: str, kwargs_json: str) -> int:
    """Entry point inside the child: import, call, write the result; exit status 0/1."""
    module_name, _, func_name = target.partition(":")
    payload: dict[str, Any] = {}
    code = 0
    try:
        func = getattr(importlib.import_module(module_name), func_name)
        payload["import_rss_mb"] = _current_rss_mb()
        # Someone else's main() may parse sys.argv: give it a clean command line.
        sys.argv = [module_name]
        started = time.perf_counter()
        payload["value"] = func(**json.loads(kwargs_json))
        payload["call_s"] = time.perf_counter() - started
    except SystemExit as exc:
        if exc.code not in (0, None):
            payload["error"] = f"SystemExit({exc.code!r})"
            code = 1
    except BaseException as exc:  # noqa: BLE001 - report any failure as data
        import traceback

        payload["error"] = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}"
        code = 1
    payload["self_maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / MB
    Path(result_file).write_text(json.dumps(payload, default=str), encoding="utf-8")
    return code


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        sys.exit(child_main(sys.argv[2], sys.argv[3], sys.argv[4]))
    print("usage: python -m benchmarks.memory --child module:function RESULT.json KWARGS_JSON")
    sys.exit(2)
