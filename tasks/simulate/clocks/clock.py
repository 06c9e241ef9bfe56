"""The virtual clock: call time advances by 20 ms ticks plus the agent's compute.

The harness sends one caller frame per tick and waits until the agent acknowledges the
tick. While it waits, call time runs from the tick's start by the agent's compute, so
whatever the agent sends (and every tool call it makes) is stamped with the time a
real-time run would have shown; between ticks no time passes, which is why a call runs
faster than real time.

How compute is timed (``timing``):

* ``"cpu"``: by the agent's :class:`~tasks.simulate.meter.ComputeMeter` (thread CPU time
  of local work, wall time of I/O-bound work), so the timeline does not depend on how
  loaded the machine is. Only an agent that engaged the meter is timed this way; for any
  other agent the clock falls back to wall time, since it would never advance otherwise.
* ``"wall"``: wall seconds since the tick started (load-dependent; kept for comparison).
* ``"none"``: the agent's compute costs no call time (an instant agent). Every timestamp
  is then decided by the seed and the agent's own pauses alone, so two runs store the
  same timeline to the millisecond: for reproducibility checks, not for latency figures.

The sync timeout is always wall time (:meth:`VirtualClock.wall_elapsed`): it is a safety
net against a hung agent, not a measurement.
"""

from __future__ import annotations

import time
from typing import Literal

from tasks.simulate.meter import ComputeMeter

FRAME_S = 0.02
VirtualTiming = Literal["cpu", "wall", "none"]


class VirtualClock:
    def __init__(self, timing: VirtualTiming = "wall", meter: ComputeMeter | None = None) -> None:
        if timing == "cpu" and meter is None:
            raise ValueError("cpu timing needs the agent's ComputeMeter")
        self.tick = 0
        self.requested: VirtualTiming = timing
        self.meter = meter
        self._tick_wall: float | None = None
        # Work charged before tick 0 (the greeting, prepared on the start message) belongs
        # to tick 0: call time 0 is when the line opens.
        self._tick_charged = meter.seconds() if meter is not None else 0.0

    @property
    def timing(self) -> VirtualTiming:
        """The timing in effect: none as requested; cpu only when requested and the agent is
        metered; wall otherwise."""
        if self.requested == "none":
            return "none"
        metered = self.meter is not None and self.meter.engaged
        return "cpu" if self.requested == "cpu" and metered else "wall"

    @property
    def tick_time(self) -> float:
        return self.tick * FRAME_S

    def start_tick(self, tick: int) -> None:
        """Tick ``tick`` begins: its frame is on its way to the agent."""
        self.tick = tick
        self._tick_wall = time.perf_counter()
        if self.meter is not None and tick > 0:
            self._tick_charged = self.meter.seconds()

    def wall_elapsed(self) -> float:
        """Wall seconds since the current tick started."""
        return 0.0 if self._tick_wall is None else time.perf_counter() - self._tick_wall

    def elapsed(self) -> float:
        """Seconds the agent has spent on the current tick, timed by :attr:`timing`."""
        if self.timing == "none":
            return 0.0
        if self.timing == "cpu" and self.meter is not None:
            return max(0.0, self.meter.seconds() - self._tick_charged)
        return self.wall_elapsed()

    def now(self) -> float:
        """Current call time in seconds."""
        return self.tick_time + self.elapsed()
