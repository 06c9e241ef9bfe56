"""From a finished call to its record: what both clocks store the same way.

Shared by :mod:`tasks.simulate.clocks.audio_mode` (virtual clock) and
:mod:`tasks.simulate.clocks.realtime` (real-time clock), so neither imports the other's privates.
"""

from __future__ import annotations

import contextlib
import random
from pathlib import Path
from typing import Any

from scenarios.models import Scenario
from tasks.records import AttemptRecord
from tasks.simulate.clocks.call import CallerSide
from tasks.simulate.clocks.timeline import build_turns
from tasks.simulate.clocks.tracks import save_tracks
from tasks.simulate.config import SimulationConfig


def call_rng(config: SimulationConfig, scenario: Scenario) -> random.Random:
    """The call's random stream: one per (seed, scenario, trial, attempt)."""
    return random.Random(f"{config.seed}/{scenario.key}/{config.trial}/{config.attempt}")


def fill_from_call(
    record: AttemptRecord, side: CallerSide, duration: float, config: SimulationConfig
) -> None:
    """Copy what the call produced (timeline, events, tracks) into ``record``."""
    log = side.log
    log.caller_segments = speech_spans(side.events, "caller")
    log.agent_segments = speech_spans(side.events, "agent")
    record.turns = build_turns(log)
    caller_events = getattr(side.caller, "events", [])  # e.g. an LLM caller's usage
    record.events = sorted([*record.events, *side.events, *caller_events], key=lambda e: e.t_s)
    record.caller_ended = side.caller_ended
    record.duration_s = round(duration, 3)
    record.stage_seconds = {k: round(v, 3) for k, v in side.stage_seconds.items()}
    if config.audio_dir is not None:
        with contextlib.suppress(OSError):
            record.audio = save_tracks(side.tracks, Path(config.audio_dir))


def speech_spans(events: list[Any], source: str) -> list[tuple[float, float]]:
    """One track's speech spans: each VAD start paired with the end that follows it, in
    the order the VAD emitted them (not re-sorted by time).

    On the real-time clock the events are re-timed to when their frames crossed the wire
    (:func:`tasks.simulate.clocks.realtime_clock.wire_time`). Frames a late harness sent
    in a burst make a short pause vanish: the next span then starts before this one ends.
    Sorted by time, those events paired the next start with this end, leaving a 20 ms
    span for a whole sentence (and its judge hearing nothing); the two spans are one."""
    spans: list[tuple[float, float]] = []
    start: float | None = None
    for event in events:
        if event.source != source:
            continue
        if event.kind == "speech_start":
            start = event.t_s
        elif event.kind == "speech_end" and start is not None:
            spans.append((start, max(start, event.t_s)))
            start = None
    merged: list[tuple[float, float]] = []
    for begin, end in sorted(spans):
        if merged and begin < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((begin, end))
    return merged
