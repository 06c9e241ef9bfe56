"""The virtual clock: call time advances by 20 ms ticks plus measured agent compute.

The harness sends one caller frame per tick and waits until the agent acknowledges the
tick. While it waits, call time runs on the wall clock from the tick's start, so whatever
the agent sends (and every tool call it makes) is stamped with the time a real-time run
would have shown; between ticks no time passes, which is why a call runs faster than
real time.
"""

from __future__ import annotations

import time

FRAME_S = 0.02


class VirtualClock:
    def __init__(self) -> None:
        self.tick = 0
        self._tick_wall: float | None = None

    @property
    def tick_time(self) -> float:
        return self.tick * FRAME_S

    def start_tick(self, tick: int) -> None:
        """Tick ``tick`` begins: its frame is on its way to the agent."""
        self.tick = tick
        self._tick_wall = time.perf_counter()

    def elapsed(self) -> float:
        """Wall seconds the agent has spent on the current tick."""
        return 0.0 if self._tick_wall is None else time.perf_counter() - self._tick_wall

    def now(self) -> float:
        """Current call time in seconds."""
        return self.tick_time + self.elapsed()
