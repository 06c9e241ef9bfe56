"""A caller that hears the line and speaks with its own voice (e.g. a speech-to-speech model).

Text callers (``respond(heard_text) -> CallerTurn``) are spoken by our TTS. An
:class:`AudioCaller` instead is fed the agent's audio as the caller hears it, decides for
itself when to speak, and hands over each turn as audio plus its words
(:class:`SpokenTurn`); the clock still puts that audio through the trial's channel (noise,
connection), records it as the caller's turn and ends the call after an ``end_call``
turn's audio has drained. The clock's side is :mod:`tasks.simulate.clocks.audio_turns`.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from perturbations.audio import Clip, VoiceSpec
from tasks.simulate.caller.caller import CallerTurn


@dataclass(frozen=True)
class SpokenTurn:
    turn: CallerTurn  # its words (the model's transcript of its own audio), end_call
    audio: Clip  # the caller's own voice, any rate (the clock resamples)
    heard: str  # what the caller understood of the agent since its last turn


@runtime_checkable
class AudioCaller(Protocol):
    speaks_for_itself: bool
    hung_up: bool  # end_call honoured with nothing (more) to say: hang up once drained
    failure: str | None  # the caller's own service failed (the harness's fault)

    def session(self, voice: VoiceSpec) -> AbstractAsyncContextManager[None]:
        """Connected for the length of the call; ``voice``: the trial's (persona rate)."""
        ...

    async def hear(self, agent_pcm: np.ndarray, t: float, agent_audio: bool) -> None:
        """One 20 ms tick of what the caller hears (8 kHz floats) at call time ``t``;
        ``agent_audio``: the agent's audio was playing (else the line was quiet)."""
        ...

    def take_turn(self) -> SpokenTurn | None:
        """The next finished turn, if there is one."""
        ...


def speaks_for_itself(caller: object) -> bool:
    return getattr(caller, "speaks_for_itself", False) is True
