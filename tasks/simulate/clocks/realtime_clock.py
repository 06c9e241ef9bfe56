"""The real-time clock: call time is wall time, frames on an absolute schedule.

It also keeps how late each frame went out, because lateness is the harness's own fault:
a harness that falls behind its clock hears the agent late and may wait out an agent
that did answer. :func:`harness_fell_behind` decides when an agent timeout is therefore
the harness's (issue 29, item 5: faults have owners).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import numpy as np

from tasks.simulate.clocks.clock import FRAME_S
from tasks.voice.vad import VadEvent

# Median lateness of the harness's frames over the agent's answer window above which an
# agent timeout or disconnect is the harness's. Healthy calls, even seven real-time calls
# and their judging on two cores, send half their frames within about 4 ms of schedule
# (stored `pacing` events of the twelve-system rehearsal); the overloaded harness whose
# timeout was first stored as the agent's sent 735 of 750 frames late, the median 1.15 s
# late.
HARNESS_BEHIND_S = 0.1


class RealtimeClock:
    """Call time = wall time since the call started; frames on an absolute schedule."""

    def __init__(self) -> None:
        self._t0 = time.perf_counter()
        self.tick_time = 0.0
        self.lateness_s: list[float] = []

    def start(self) -> None:
        self._t0 = time.perf_counter()

    def now(self) -> float:
        return time.perf_counter() - self._t0

    async def sleep_until(self, call_time: float, record: bool = False) -> None:
        delay = call_time - self.now()
        if delay > 0:
            await asyncio.sleep(delay)
        if record:
            self.tick_time = call_time
            self.lateness_s.append(max(0.0, self.now() - call_time))

    def pacing(self) -> dict[str, float]:
        """How late frames went out: p50/p99/max (ms) and frames later than one frame."""
        if not self.lateness_s:
            return {}
        late = np.asarray(self.lateness_s) * 1000
        return {
            "late_p50_ms": round(float(np.percentile(late, 50)), 3),
            "late_p99_ms": round(float(np.percentile(late, 99)), 3),
            "late_max_ms": round(float(late.max()), 3),
            "frames": int(late.size),
            "late_frames": int((late > FRAME_S * 1000).sum()),
        }


def harness_fell_behind(lateness_s: Sequence[float], window_s: float) -> str | None:
    """Why the harness, not the agent, owns a timeout or a dropped call, judged over the
    last ``window_s`` seconds of frames (None when it kept its clock): the median frame
    went out over :data:`HARNESS_BEHIND_S` late."""
    window = np.asarray(lateness_s[-max(1, round(window_s / FRAME_S)) :], dtype=float)
    if window.size == 0:
        return None
    median = float(np.median(window))
    if median <= HARNESS_BEHIND_S:
        return None
    late = int((window > FRAME_S).sum())
    return (
        f"harness fell behind its real-time clock: {late} of the last {window.size} frames "
        f"late, the median {median * 1000:.0f} ms, the worst {window.max() * 1000:.0f} ms"
    )


def wire_time(event: VadEvent, frame_times: list[float]) -> VadEvent:
    """A VAD event re-timed from the frame grid to when its frame really crossed the wire."""
    if not frame_times:
        return event
    index = round(event.time_s / FRAME_S)
    if event.kind == "speech_end":
        at = frame_times[min(max(index - 1, 0), len(frame_times) - 1)] + FRAME_S
    else:
        at = frame_times[min(index, len(frame_times) - 1)]
    return event.model_copy(update={"time_s": round(at, 4)})
