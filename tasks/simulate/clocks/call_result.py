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
    log.caller_segments = _segments(side.events, "caller")
    log.agent_segments = _segments(side.events, "agent")
    record.turns = build_turns(log)
    caller_events = getattr(side.caller, "events", [])  # e.g. an LLM caller's usage
    record.events = sorted([*record.events, *side.events, *caller_events], key=lambda e: e.t_s)
    record.caller_ended = side.caller_ended
    record.duration_s = round(duration, 3)
    record.stage_seconds = {k: round(v, 3) for k, v in side.stage_seconds.items()}
    if config.audio_dir is not None:
        with contextlib.suppress(OSError):
            record.audio = save_tracks(side.tracks, Path(config.audio_dir))


def _segments(events: list[Any], source: str) -> list[tuple[float, float]]:
    spans: list[tuple[float, float]] = []
    start: float | None = None
    for event in sorted((e for e in events if e.source == source), key=lambda e: e.t_s):
        if event.kind == "speech_start":
            start = event.t_s
        elif event.kind == "speech_end" and start is not None:
            spans.append((start, max(start, event.t_s)))
            start = None
    return spans
