"""The speech-worker pool: subprocess workers, usable from a daemonic process (a Dask
worker), errors and dead workers reported to the caller, a stray print harmless."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator

import pytest

from tasks.simulate.clocks.stt_pool import SttWorkerError, WorkerPool


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    workers = WorkerPool(1)
    yield workers
    workers.shutdown()


def noisy(text: str) -> str:
    os.write(1, b"a C library writing to fd 1\n")
    print("and a print")
    return text.upper()


def test_jobs_run_in_another_process_and_return(pool: WorkerPool) -> None:
    assert pool.submit(os.getpid).result(timeout=30) != os.getpid()
    assert pool.submit(noisy, "heard").result(timeout=30) == "HEARD"


def test_a_failing_job_raises_with_the_workers_traceback(pool: WorkerPool) -> None:
    with pytest.raises(SttWorkerError, match="invalid literal for int"):
        pool.submit(int, "x").result(timeout=30)
    assert pool.submit(abs, -2).result(timeout=30) == 2  # the worker survived


def test_a_dead_worker_fails_its_job_and_is_replaced(pool: WorkerPool) -> None:
    before = pool.submit(os.getpid).result(timeout=30)
    with pytest.raises(SttWorkerError, match="died"):
        pool.submit(os._exit, 3).result(timeout=30)
    assert pool.submit(os.getpid).result(timeout=30) not in (before, os.getpid())


def pool_in_a_daemon(results: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    workers = WorkerPool(1)
    try:
        results.put(workers.submit(abs, -7).result(timeout=60))
    except BaseException as exc:  # noqa: BLE001 - reported to the test
        results.put(repr(exc))
    finally:
        workers.shutdown()


def test_the_pool_works_inside_a_daemonic_process() -> None:
    """A multiprocessing pool raised ``daemonic processes are not allowed to have
    children`` here, which is where Dask runs every trial."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    daemon = context.Process(target=pool_in_a_daemon, args=(results,), daemon=True)
    daemon.start()
    try:
        assert results.get(timeout=90) == 7
    finally:
        daemon.join(timeout=30)
    assert daemon.exitcode == 0
