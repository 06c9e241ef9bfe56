"""Speech recognition in worker processes, for calls paced by the wall clock.

PocketSphinx keeps the GIL while it decodes (measured here: a 5 s clip took 0.8 s and
stalled the event loop for 0.4-0.5 s even from a worker thread), and building the
caller's domain language model is 0.5 s of pure Python. On the real-time clock either
would delay every other call's frames, so the harness's recognizers live in a small
pool of worker processes instead; each worker builds a recognizer once per
(scenario, spec, seed).

The workers are plain subprocesses (``python -c ...`` over pipes), not
:mod:`multiprocessing` children: the harness often runs inside a Dask worker process,
which is daemonic, and a daemonic process may not have multiprocessing children
(``AssertionError: daemonic processes are not allowed to have children``), whereas it
may start subprocesses. They also need no ``__main__`` guard in the caller's script,
and exit on their own when the parent dies (their stdin closes).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Any

import numpy as np

from perturbations.audio import Clip
from scenarios.models import Scenario
from tasks.voice.recognizer_pool import reset_recognizer
from tasks.voice.stt import Expectation, SttSpec

_HEADER = struct.Struct("!Q")
_WORKER_CODE = "from tasks.simulate.clocks.stt_pool import serve_worker; serve_worker()"
# Package root, put on the workers' PYTHONPATH: the parent may have found evaflow through
# sys.path (a test's rootdir, a script's directory) rather than an installed copy.
_ROOT = str(Path(__file__).resolve().parents[3])
_STOP_TIMEOUT_S = 2.0


class SttWorkerError(RuntimeError):
    """A job failed in a worker process (the message carries the worker's traceback),
    or the worker died."""


def worker_count() -> int:
    """``EVAFLOW_STT_WORKERS`` or one fewer than the cores (the event loop keeps one)."""
    configured = os.environ.get("EVAFLOW_STT_WORKERS")
    if configured:
        return max(1, int(configured))
    return max(1, min(4, (os.cpu_count() or 2) - 1))


def _send(stream: IO[bytes], payload: bytes) -> None:
    stream.write(_HEADER.pack(len(payload)) + payload)
    stream.flush()


def _receive(stream: IO[bytes]) -> bytes | None:
    """One framed message, or None at end of stream."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    size = _HEADER.unpack(header)[0]
    payload = stream.read(size)
    return payload if len(payload) == size else None


def serve_worker() -> None:
    """Worker side: run ``(function, args)`` jobs from stdin until it closes."""
    # Replies go to a private copy of stdout; fd 1 itself goes to stderr, so that a print
    # from any library (or C code writing to fd 1) cannot corrupt the reply stream.
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    jobs = sys.stdin.buffer
    while (payload := _receive(jobs)) is not None:
        try:
            function, args = pickle.loads(payload)
            reply = ("ok", function(*args))
        except Exception:  # noqa: BLE001 - the parent raises it as SttWorkerError
            reply = ("error", traceback.format_exc(limit=8))
        _send(replies, pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))


class _Worker:
    """One worker subprocess, used by one dispatcher thread at a time."""

    def __init__(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, env.get("PYTHONPATH")) if p)
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WORKER_CODE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
        )

    def call(self, payload: bytes) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            _send(self.process.stdin, payload)
        except (BrokenPipeError, OSError) as exc:
            raise SttWorkerError(f"speech worker {self.process.pid} is gone: {exc}") from None
        reply = _receive(self.process.stdout)
        if reply is None:
            code = self.process.wait(timeout=_STOP_TIMEOUT_S)
            raise SttWorkerError(f"speech worker {self.process.pid} died (exit code {code})")
        status, value = pickle.loads(reply)
        if status == "error":
            raise SttWorkerError(f"in speech worker {self.process.pid}:\n{value}")
        return value

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


Job = tuple[Future[Any], bytes]


class WorkerPool:
    """A fixed number of worker subprocesses fed from one queue (like
    :class:`concurrent.futures.ProcessPoolExecutor`). Each worker has a dispatcher
    thread that blocks on its pipes, never on the GIL; a worker is started on its first
    job and restarted after it dies."""

    def __init__(self, workers: int) -> None:
        self.pid = os.getpid()
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._closed = False
        self._threads = [
            threading.Thread(target=self._dispatch, name=f"stt-worker-{i}", daemon=True)
            for i in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, function: Callable[..., Any], *args: Any) -> Future[Any]:
        """Run ``function(*args)`` in a worker; both must pickle (functions by name)."""
        if self._closed:
            raise RuntimeError("the speech worker pool is shut down")
        future: Future[Any] = Future()
        self._jobs.put((future, pickle.dumps((function, args), protocol=pickle.HIGHEST_PROTOCOL)))
        return future

    def _dispatch(self) -> None:
        worker: _Worker | None = None
        while (job := self._jobs.get()) is not None:
            future, payload = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                if worker is None or not worker.alive():
                    worker = self._start_worker()
                future.set_result(worker.call(payload))
            except BaseException as exc:  # noqa: BLE001 - delivered to the caller
                future.set_exception(exc)
        if worker is not None:
            worker.stop()

    def _start_worker(self) -> _Worker:
        with self._lock:
            worker = _Worker()
            self._workers.append(worker)
            return worker

    def shutdown(self) -> None:
        """Cancel the queued jobs and stop the workers (a busy one after its job)."""
        self._closed = True
        with contextlib.suppress(queue.Empty):
            while True:
                job = self._jobs.get_nowait()
                if job is not None:
                    job[0].cancel()
        for _ in self._threads:
            self._jobs.put(None)
        with self._lock:
            workers = list(self._workers)
        for worker in workers:
            worker.stop()
        for thread in self._threads:
            thread.join(timeout=_STOP_TIMEOUT_S)

    def worker_pids(self) -> list[int]:
        with self._lock:
            return [w.process.pid for w in self._workers if w.alive()]


_POOL: WorkerPool | None = None
_POOL_LOCK = threading.Lock()


def shared_pool() -> WorkerPool:
    """This process's pool (a forked child gets its own: threads do not survive a fork)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL.pid != os.getpid():
            _POOL = WorkerPool(worker_count())
            atexit.register(_POOL.shutdown)
        return _POOL


@functools.lru_cache(maxsize=16)
def _cached_recognizer(key: str, recipe: bytes) -> Any:
    from tasks.simulate.voices import caller_recognizer

    scenario, spec, cache_dir, seed = pickle.loads(recipe)
    return caller_recognizer(scenario, spec, Path(cache_dir), seed)


def _recognize(
    key: str, recipe: bytes, samples: np.ndarray | None, rate: int, expect: str | None
) -> str:
    """Worker side: decode one clip (``samples=None`` only builds the recognizer)."""
    recognizer = _cached_recognizer(key, recipe)
    if samples is None:
        return ""
    # A call's clips land on any worker, after other calls' clips: decode each from a new
    # decoder's state, so a transcript depends on its clip alone, not on the worker's history.
    reset_recognizer(recognizer)
    text: str = recognizer.recognize(Clip(samples, rate), expect)  # type: ignore[arg-type]
    return text


class PooledCallerRecognizer:
    """The caller's recognizer (:func:`tasks.simulate.voices.caller_recognizer`), decoding
    in a worker process. ``recognize`` blocks its calling thread, never the event loop."""

    def __init__(self, scenario: Scenario, spec: SttSpec, cache_dir: Path, seed: int) -> None:
        self.key = "|".join([scenario.source, scenario.key, spec.model_dump_json(), str(seed)])
        self.recipe = pickle.dumps((scenario, spec, str(cache_dir), seed))

    def warm(self) -> Future[str]:
        """Build the recognizer in a worker ahead of the call."""
        return shared_pool().submit(_recognize, self.key, self.recipe, None, 0, None)

    def recognize(self, clip: Clip, expect: Expectation = None) -> str:
        future = shared_pool().submit(
            _recognize, self.key, self.recipe, clip.samples, clip.rate, expect
        )
        result: str = future.result()
        return result
