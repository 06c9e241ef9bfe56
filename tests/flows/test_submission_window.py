"""Trials are submitted through a bounded window: in order, each once, never more in flight
than the window, and the next is submitted before a finished one is handed over."""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest
from prefect.utilities.annotations import quote

from flows.runners import _unquoted, completed_in_window, submission_window, trial_parameters


class _Tracker:
    """Submits to a real thread pool and counts what is in flight (submitted, not yet
    handed back by the window)."""

    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self.pool = pool
        self.lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0
        self.submitted: list[int] = []

    def submit(self, item: int) -> Future[int]:
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            self.submitted.append(item)
        delay = random.Random(item).uniform(0, 0.01)
        return self.pool.submit(lambda: (time.sleep(delay), item)[1])

    def handed_back(self) -> None:
        with self.lock:
            self.in_flight -= 1


@pytest.mark.parametrize("window", [1, 3, 16])
def test_every_item_once_in_order_within_the_window(window: int) -> None:
    items = list(range(60))
    with ThreadPoolExecutor(max_workers=4) as pool:
        tracker = _Tracker(pool)
        got = []
        for future in completed_in_window(tracker.submit, items, window):
            assert future.done()
            got.append(future.result())
            tracker.handed_back()
    assert sorted(got) == items
    assert tracker.submitted == items  # submission order is the caller's (longest first)
    # The next item goes in before a finished one is handed back: window + 1 at most.
    assert tracker.peak <= window + 1
    assert tracker.peak >= min(window, len(items))


def test_an_empty_run_yields_nothing() -> None:
    assert list(completed_in_window(lambda item: Future(), [], 4)) == []


def test_a_failed_future_is_handed_back_like_any_other() -> None:
    def submit(item: int) -> Future[Any]:
        future: Future[Any] = Future()
        if item == 2:
            future.set_exception(RuntimeError("worker died"))
        else:
            future.set_result(item)
        return future

    done = list(completed_in_window(submit, range(5), 2))
    assert len(done) == 5
    assert sum(1 for f in done if f.exception() is not None) == 1


def test_window_keeps_every_worker_fed() -> None:
    assert submission_window(2) >= 2 * 2
    assert submission_window(32) >= 4 * 32


def test_trial_arguments_are_quoted_for_every_runner() -> None:
    spec, scenario = object(), {"db": [1, 2, 3]}
    params = trial_parameters(spec, scenario)
    assert all(isinstance(value, quote) for value in params.values())
    assert _unquoted(params["scenario"]) is scenario
    assert _unquoted(scenario) is scenario
