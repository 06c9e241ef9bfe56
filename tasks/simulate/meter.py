"""``ComputeMeter``: the seconds an agent really spent on its work, whatever the machine load.

On the virtual clock call time advances by the agent's compute. Wall time would make that
depend on load: on a busy machine (other Dask workers, the caller's own recognition
holding the GIL in a thread of the same process) a wall-timed step waits for a core or
for the GIL, and the agent looks slower than it is. The meter charges instead:

* ``run_cpu``: local compute, charged as the *thread CPU time* of the worker thread that
  ran it (``time.thread_time``), which does not grow while the thread waits for a core or
  the GIL;
* ``run_wall``: I/O-bound work (an HTTP call to a model endpoint), charged in wall time,
  because there the waiting is the latency.

While a metered call runs, ``seconds()`` seen *from that thread* includes the call's
progress so far, so a tool call made from inside the policy is stamped part-way through
the policy's compute, not at its start. Other threads see only finished calls.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Literal, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")
ComputeKind = Literal["cpu", "wall"]

_CLOCKS: dict[ComputeKind, Callable[[], float]] = {
    "cpu": time.thread_time,
    "wall": time.perf_counter,
}


class ComputeMeter:
    """Accumulates the seconds an agent spent computing; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._charged = 0.0
        self._running = threading.local()  # (clock, start) of this thread's metered call
        self.engaged = False

    def engage(self) -> None:
        """The agent promises to charge all its work here (so the clock may time by it)."""
        self.engaged = True

    def add(self, seconds: float) -> None:
        """Charge ``seconds`` of work done elsewhere."""
        if seconds < 0:
            raise ValueError(f"cannot charge negative time ({seconds})")
        with self._lock:
            self._charged += seconds

    def seconds(self) -> float:
        """Seconds charged so far, plus the calling thread's metered call in progress."""
        with self._lock:
            charged = self._charged
        running = getattr(self._running, "call", None)
        if running is None:
            return charged
        clock, start = running
        return charged + max(0.0, clock() - start)

    def call(
        self, kind: ComputeKind, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """Run ``fn`` in this thread and charge it by ``kind``."""
        if getattr(self._running, "call", None) is not None:
            return fn(*args, **kwargs)  # nested: the outer call already counts this time
        clock = _CLOCKS[kind]
        start = clock()
        self._running.call = (clock, start)
        try:
            return fn(*args, **kwargs)
        finally:
            spent = max(0.0, clock() - start)
            self._running.call = None
            self.add(spent)

    async def run(
        self, kind: ComputeKind, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """Run ``fn`` in a worker thread (like ``asyncio.to_thread``), charged by ``kind``."""

        def job() -> T:
            return self.call(kind, fn, *args, **kwargs)

        return await asyncio.to_thread(job)

    async def run_cpu(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run local compute in a worker thread; charge its thread CPU time."""
        return await self.run("cpu", fn, *args, **kwargs)

    async def run_wall(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run I/O-bound work in a worker thread; charge its wall time."""
        return await self.run("wall", fn, *args, **kwargs)
