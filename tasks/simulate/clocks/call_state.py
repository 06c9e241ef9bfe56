"""What a call's caller side keeps between ticks, and its cutting in on the agent.

:class:`CuttingIn` is the barge-in and backchannel part of
:class:`tasks.simulate.clocks.call.CallerSide` (both clocks), kept here so the call loop
stays readable; the draws it acts on are :mod:`tasks.simulate.clocks.interaction`'s.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tasks.records import TimelineEvent
from tasks.simulate.caller.caller import CallerTurn
from tasks.simulate.clocks.clock import FRAME_S

if TYPE_CHECKING:
    from tasks.simulate.clocks.interaction import BackchannelPlayer, CallerInteraction
    from tasks.voice.vad import EnergyVAD


@dataclass
class Utterance:
    turn: CallerTurn
    spoken: str
    wire: list[bytes]
    clean: list[np.ndarray]
    start_at: float | None
    sent: int = 0
    hesitation: tuple[float, float] | None = None  # (offset, pause) s of a pause inside
    barge_in: bool = False  # said over the agent on purpose: do not wait for it


@dataclass
class Heard:
    """What the caller has heard of the agent since it last spoke."""

    frames: list[np.ndarray] = field(default_factory=list)
    spoke: bool = False
    speech_start: float | None = None
    last_audio: float = -1.0
    barged: bool = False
    # The agent was still finishing the turn the caller barged into when the caller's
    # turn ended: what follows may be its last words, cut short by its yielding.
    cut_off_tail: bool = False
    # Finished agent segments are recognised in the background while the call goes on;
    # ``cut`` is how many frames those tasks cover.
    pending: list[asyncio.Future[str]] = field(default_factory=list)
    cut: int = 0
    backchannels: int = 0


# Agent speech this short that follows a barge-in, with no word understood in it, is the
# interrupted turn dying away (an agent stops some hundreds of ms after being talked over),
# not a new turn: a person waits for the answer to what they said rather than asking the
# agent to repeat the words they talked over.
CUT_OFF_TAIL_S = 1.0


def is_cut_off_tail(heard: Heard, text: str) -> bool:
    """Whether what the caller heard since its barge-in ended is only the agent yielding."""
    if not heard.cut_off_tail or text.strip() or heard.speech_start is None:
        return False
    return tail_s(heard) <= CUT_OFF_TAIL_S


def tail_s(heard: Heard) -> float:
    """Agent audio heard since ``speech_start`` (0 when its VAD's hangover was all there was)."""
    return max(0.0, heard.last_audio - (heard.speech_start or heard.last_audio))


class CuttingIn:
    """Barge-in and backchannels while the agent speaks (mixed into ``CallerSide``)."""

    heard: Heard
    turns: int
    events: list[TimelineEvent]
    agent_vad: EnergyVAD
    interaction: CallerInteraction
    backchannels: BackchannelPlayer
    waiting_since: float

    async def _respond(self, t: float, start_at: float) -> None:
        raise NotImplementedError

    def _cutting_in_possible(self) -> bool:
        heard = self.heard
        return (
            heard.speech_start is not None
            and self.agent_vad.in_speech
            and self.backchannels.playing is None
        )

    def _barge_in_due(self, t: float) -> bool:
        if self.heard.barged or not self._cutting_in_possible():
            return False
        after = self.interaction.barge_in_after(self.turns)
        return after is not None and t - (self.heard.speech_start or t) >= after

    async def _barge_in(self, t: float) -> None:
        heard = self.heard
        heard.barged = True
        spoken_s = round(t - (heard.speech_start or t), 3)
        self.events.append(
            TimelineEvent(
                t_s=round(t, 3), source="caller", kind="barge_in", data={"agent_spoke_s": spoken_s}
            )
        )
        await self._respond(t, t)

    def _wait_past_tail(self, t: float) -> None:
        """After a barge-in, ignore the agent's last unintelligible words: wait for its answer."""
        spoke_s = round(tail_s(self.heard), 3)
        self.events.append(
            TimelineEvent(
                t_s=round(t, 3),
                source="caller",
                kind="ignore_tail",
                data={"agent_spoke_s": spoke_s},
            )
        )
        self.heard = Heard()
        self.waiting_since = t

    def _backchannel_due(self, t: float) -> bool:
        if not self._cutting_in_possible():
            return False
        at = self.interaction.backchannel_at(self.turns, self.heard.backchannels)
        return at is not None and t - (self.heard.speech_start or t) >= at

    async def _backchannel(self, t: float) -> None:
        """Say "mm-hmm" over the agent: on the line, not a turn (see .interaction)."""
        text = self.interaction.backchannel_text(self.turns, self.heard.backchannels)
        self.heard.backchannels += 1
        await self.backchannels.start(text)
        frames = len(self.backchannels.playing.wire) if self.backchannels.playing else 0
        data = {"text": text, "end_s": round(t + frames * FRAME_S, 3), "turn_id": self.turns}
        self.events.append(
            TimelineEvent(t_s=round(t, 3), source="caller", kind="backchannel", data=data)
        )
