"""The clock's side of a caller that speaks for itself (:mod:`tasks.simulate.caller.spoken`).

Mixed into :class:`tasks.simulate.clocks.call.CallerSide`: every tick the caller hears the
agent's frame as played; when it hands over a turn, its audio (its own voice and timing,
no TTS, no hesitation or barge-in draws of ours) is prepared off the tick like a TTS turn:
resampled and put through the trial's channel, so noise and connection apply to what goes
on the line. Such a caller runs only on the real-time clock: a live remote session cannot
be paced by the virtual clock's frames.
"""

from __future__ import annotations

import asyncio
import contextlib
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from perturbations.audio import VoiceSpec
from tasks.records import EndReason, TimelineEvent
from tasks.simulate.caller.spoken import AudioCaller, speaks_for_itself
from tasks.simulate.clocks.call_state import Heard, Utterance

if TYPE_CHECKING:
    from perturbations.audio import Clip
    from tasks.simulate.caller.caller import CallerTurn
    from tasks.simulate.clocks.timeline import CallLog
    from tasks.simulate.clocks.tracks import CallTracks
    from tasks.simulate.config import SimulationConfig


class CallerNeedsRealtimeClock(ValueError):
    """An audio caller on the virtual clock (a configuration error)."""


def refuse_virtual_clock(caller_name: str, caller: object) -> None:
    if speaks_for_itself(caller):
        raise CallerNeedsRealtimeClock(
            f"caller {caller_name!r} speaks through a live remote session and needs the "
            "real-time clock: set clock: realtime (the virtual clock cannot pace it)"
        )


def caller_session(caller: object, voice: VoiceSpec) -> AbstractAsyncContextManager[Any]:
    """The caller's connection for the call (nothing to open for a text caller)."""
    if speaks_for_itself(caller):
        return cast(AudioCaller, caller).session(voice)
    return contextlib.nullcontext()


class AudioTurns:
    """Listening and turn-taking of an :class:`AudioCaller` (see the module docstring)."""

    caller: Any
    current: Utterance | None
    heard: Heard
    tracks: CallTracks
    log: CallLog
    events: list[TimelineEvent]
    config: SimulationConfig
    turns: int
    waiting_since: float
    caller_ended: bool
    audio_preparing: asyncio.Task[Utterance] | None = None

    async def _prepare(
        self, turn: CallerTurn, start_at: float | None, audio: Clip | None = None
    ) -> Utterance:
        raise NotImplementedError

    def _ended(self, reason: EndReason, error: str | None = None) -> Exception:
        raise NotImplementedError

    async def _listen_audio(self, t: float) -> None:
        caller = cast(AudioCaller, self.caller)
        played = self.heard.last_audio >= t - 1e-6  # an agent frame was played this tick
        frame = self.tracks.agent[-1] if self.tracks.agent else np.zeros(160, np.float32)
        await caller.hear(frame, t, played)
        if caller.failure is not None:
            raise self._ended("harness_error", caller.failure)
        task = self.audio_preparing
        if task is not None:
            if task.done():
                self.audio_preparing = None
                self.current = task.result()
            return
        if self.current is not None:
            if self.current.start_at is None:
                self.current.start_at = t
            return
        if caller.hung_up:  # end_call with nothing more to say, after its audio drained
            self.caller_ended = True
            raise self._ended("goodbye")
        spoken = caller.take_turn()
        if spoken is not None:
            self._take_spoken(spoken, t)
        elif not self.heard.spoke and t - self.waiting_since >= self.config.agent_timeout_s:
            timeout = self.config.agent_timeout_s
            raise self._ended("agent_timeout", f"no agent speech for {timeout:.0f} s")

    def _take_spoken(self, spoken: Any, t: float) -> None:
        if self.turns >= self.config.max_turns:
            raise self._ended("max_duration", f"caller turn limit {self.config.max_turns} reached")
        heard_at = self.heard.speech_start if self.heard.speech_start is not None else t
        self.log.caller_heard.append((min(heard_at, t), spoken.heard))
        data = {"kind": spoken.turn.kind, "heard": spoken.heard, "own_voice": True}
        self.events.append(
            TimelineEvent(t_s=round(t, 3), source="caller", kind="decide", data=data)
        )
        self.heard = Heard()
        # Resampling and the channel run off the tick, as a TTS turn's preparation does.
        self.audio_preparing = asyncio.ensure_future(
            self._prepare(spoken.turn, t, audio=spoken.audio)
        )
