"""ComputeMeter: thread CPU time for local work, wall time for I/O, safe across threads."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tasks.simulate.meter import ComputeMeter


def busy(seconds: float) -> float:
    """Burn ``seconds`` of this thread's CPU in pure Python; returns the CPU it used."""
    start = time.thread_time()
    x = 0
    while time.thread_time() - start < seconds:
        for i in range(200):
            x += i * i
    return time.thread_time() - start


def fixed_work(rounds: int = 300_000) -> None:
    x = 0
    for i in range(rounds):
        x += i * i


@contextmanager
def gil_hog(switch_s: float | None = None) -> Iterator[None]:
    """A background thread spinning pure Python (it holds the GIL whenever it can);
    ``switch_s`` sets the interpreter's GIL switch interval meanwhile."""
    stop = threading.Event()
    interval = sys.getswitchinterval()
    if switch_s is not None:
        sys.setswitchinterval(switch_s)

    def spin() -> None:
        x = 0
        while not stop.is_set():
            for i in range(1000):
                x += i * i

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)


def test_run_cpu_charges_the_thread_cpu_time_of_a_busy_loop() -> None:
    meter = ComputeMeter()
    used = asyncio.run(meter.run_cpu(busy, 0.05))
    assert used >= 0.05
    assert meter.seconds() == pytest.approx(used, abs=0.005)


def test_run_cpu_charges_nothing_for_sleeping() -> None:
    meter = ComputeMeter()
    asyncio.run(meter.run_cpu(time.sleep, 0.1))
    assert meter.seconds() < 0.01


def test_run_wall_charges_the_wait() -> None:
    meter = ComputeMeter()
    asyncio.run(meter.run_wall(time.sleep, 0.1))
    assert 0.1 <= meter.seconds() < 0.5


def test_add_and_kwargs() -> None:
    meter = ComputeMeter()
    meter.add(0.25)
    assert asyncio.run(meter.run_cpu(int, "ff", base=16)) == 255
    assert meter.seconds() == pytest.approx(0.25, abs=0.005)
    with pytest.raises(ValueError):
        meter.add(-1.0)


def test_a_gil_hog_does_not_inflate_the_cpu_charge() -> None:
    idle, loaded = ComputeMeter(), ComputeMeter()
    asyncio.run(idle.run_cpu(fixed_work))
    with gil_hog():
        began = time.perf_counter()
        asyncio.run(loaded.run_cpu(fixed_work))
        wall = time.perf_counter() - began
    assert loaded.seconds() < 1.5 * idle.seconds() + 0.005
    assert loaded.seconds() < wall  # the wait for the GIL is not charged


def test_concurrent_calls_add_up() -> None:
    meter = ComputeMeter()

    async def main() -> list[float]:
        return await asyncio.gather(*(meter.run_cpu(busy, 0.01) for _ in range(8)))

    used = asyncio.run(main())
    assert meter.seconds() == pytest.approx(sum(used), abs=0.01)


def test_a_call_in_progress_is_seen_from_its_own_thread_only() -> None:
    meter = ComputeMeter()
    meter.add(1.0)
    seen: dict[str, float] = {}

    def policy() -> None:
        busy(0.02)
        seen["inside"] = meter.seconds()
        other = threading.Thread(target=lambda: seen.update(other=meter.seconds()))
        other.start()
        other.join()

    meter.call("cpu", policy)
    assert seen["inside"] >= 1.02  # e.g. a tool call stamped part-way through the policy
    assert seen["other"] == pytest.approx(1.0)
    assert meter.seconds() >= seen["inside"]


def test_nested_calls_are_charged_once() -> None:
    meter = ComputeMeter()
    meter.call("cpu", meter.call, "cpu", busy, 0.02)
    assert meter.seconds() == pytest.approx(0.02, abs=0.005)


def test_sessions_say_how_their_turns_are_charged() -> None:
    from tasks.simulate.agents.llm import LLMAgentSession
    from tasks.simulate.reference.cascade import policy_compute_kind

    assert policy_compute_kind(object()) == "cpu"  # the reference policy: local compute
    assert policy_compute_kind(LLMAgentSession) == "wall"  # waits on a model endpoint
    with pytest.raises(ValueError):
        policy_compute_kind(type("Odd", (), {"compute_kind": "gpu"}))
