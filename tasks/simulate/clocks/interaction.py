"""The caller's turn-taking while the agent speaks: barge-in, backchannels, hesitations.

:class:`CallerInteraction` makes every draw of these behaviours from
:func:`perturbations.behavior.behavior_rng` over the trial's channel seed, keyed by the
agent turn (the number of caller utterances before it) or by the caller utterance, never
by a time: whether the caller cuts into its third agent turn, and after how much of it, is
the same for every agent under test. What an agent's timing changes is only whether that
turn lasts long enough to be cut.

:class:`BackchannelPlayer` holds the backchannel clips ("mm-hmm", "okay") and plays them.
A backchannel is never a turn: it goes out on the wire and into the caller's recorded
track, but not through the caller-side VAD that numbers turns; it is a ``backchannel``
event on the timeline instead, so turn-taking can tell it from a barge-in.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from perturbations.audio import Clip, VoiceSpec
from perturbations.behavior import InteractionParams, behavior_rng
from perturbations.seeding import derive_seed
from tasks.simulate.channel import CallerChannel, caller_channel, channel_seed
from tasks.simulate.clocks.tracks import CLEAN_FRAME, CLEAN_RATE
from tasks.simulate.voices import CallerStyle
from tasks.voice.telephony import FRAME_BYTES, resample, to_wire
from tasks.voice.tts import synthesize

if TYPE_CHECKING:
    from scenarios.models import Scenario
    from tasks.simulate.config import SimulationConfig

# Where in an utterance a hesitation may fall (share of its words before the pause).
HESITATION_SPAN = (0.3, 0.7)


class CallerInteraction:
    """The seeded draws of one trial's turn-taking behaviour."""

    def __init__(self, style: CallerStyle, seed: int) -> None:
        self.style, self.seed = style, seed
        self.params: InteractionParams | None = style.interaction
        self._barge_in: dict[int, float | None] = {}
        self._backchannel: dict[tuple[int, int], float] = {}

    def barge_in_after(self, agent_turn: int) -> float | None:
        """Agent speech the caller lets pass before cutting into this agent turn (None:
        it does not cut in). Without an interaction condition, the persona text's own
        barge-in (after a fixed time) applies, as before."""
        if self.params is None:
            return self.style.barge_in_after_s
        if agent_turn == 0:
            return None  # the greeting is heard out: the caller has not said why it calls
        if agent_turn not in self._barge_in:
            rng = behavior_rng(self.seed, "barge_in", agent_turn)
            cut = rng.random() < self.params.barge_in_rate
            after = float(rng.uniform(*self.params.barge_in_after_s))
            self._barge_in[agent_turn] = after if cut else None
        return self._barge_in[agent_turn]

    def backchannel_at(self, agent_turn: int, n: int) -> float | None:
        """Agent speech (s, from the start of the turn) after which the caller says its
        ``n``-th backchannel of this turn (0-based); None: no backchannels."""
        every = self.params.backchannel_every_s if self.params is not None else None
        if every is None or agent_turn == 0:
            return None
        # Asked every tick while the agent speaks: draw once per (turn, n).
        if (agent_turn, n) not in self._backchannel:
            rng = behavior_rng(self.seed, "backchannel", agent_turn)
            self._backchannel[(agent_turn, n)] = float(sum(rng.uniform(*every, size=n + 1)))
        return self._backchannel[(agent_turn, n)]

    def backchannel_text(self, agent_turn: int, n: int) -> str:
        assert self.params is not None
        rng = behavior_rng(self.seed, "backchannel_text", agent_turn, n)
        return self.params.backchannels[int(rng.integers(len(self.params.backchannels)))]

    def hesitation(self, utterance: int, text: str) -> tuple[str, str, float] | None:
        """(before, after, pause_s) when utterance number ``utterance`` has a pause inside."""
        words = text.split()
        if self.style.hesitation_rate <= 0 or len(words) < 4:
            return None
        rng = behavior_rng(self.seed, "hesitation", utterance)
        if rng.random() >= self.style.hesitation_rate:
            return None
        low, high = (max(1, round(len(words) * share)) for share in HESITATION_SPAN)
        cut = int(rng.integers(low, max(low, high) + 1))
        cut = min(cut, len(words) - 1)
        pause = float(rng.uniform(*self.style.hesitation_s))
        return " ".join(words[:cut]), " ".join(words[cut:]), pause


def hesitant_speech(
    parts: tuple[str, str, float], voice: VoiceSpec, engine: str
) -> tuple[Clip, float]:
    """Speech of ``before``, a pause, then ``after`` (at the clean rate) and the offset of
    the pause in seconds."""
    before, after, pause = parts
    first = resample(synthesize(before, voice, engine), CLEAN_RATE)
    second = resample(synthesize(after, voice, engine), CLEAN_RATE)
    gap = np.zeros(int(round(pause * CLEAN_RATE)), np.float32)
    joined = np.concatenate([first.samples, gap, second.samples]).astype(np.float32)
    return Clip(joined, CLEAN_RATE), first.samples.size / CLEAN_RATE


@dataclass
class _Playing:
    text: str
    wire: list[bytes]
    clean: list[np.ndarray]
    sent: int = 0


def split_frames(sent: Clip, clean: Clip) -> tuple[list[bytes], list[np.ndarray]]:
    """A perturbed clip's wire frames and the clean clip's frames, padded to whole frames."""
    payload = to_wire(sent)
    n = -(-len(payload) // FRAME_BYTES)
    payload = payload.ljust(n * FRAME_BYTES, b"\xff")
    samples = np.pad(clean.samples, (0, max(0, n * CLEAN_FRAME - clean.samples.size)))
    return (
        [payload[i * FRAME_BYTES : (i + 1) * FRAME_BYTES] for i in range(n)],
        [samples[i * CLEAN_FRAME : (i + 1) * CLEAN_FRAME] for i in range(n)],
    )


@dataclass
class BackchannelPlayer:
    """Backchannel clips through their own channel (their own noise and seed, so a
    backchannel never moves what the caller's next utterance sounds like)."""

    channel: CallerChannel | None
    voice: VoiceSpec
    engine: str
    clips: dict[str, Clip] = field(default_factory=dict)
    playing: _Playing | None = None

    async def start(self, text: str) -> None:
        if text not in self.clips:
            tts = await asyncio.to_thread(synthesize, text, self.voice, self.engine)
            self.clips[text] = await asyncio.to_thread(resample, tts, CLEAN_RATE)
        clean = self.clips[text]
        sent = await asyncio.to_thread(self.channel.speech, clean) if self.channel else clean
        wire, frames = await asyncio.to_thread(split_frames, sent, clean)
        self.playing = _Playing(text, wire, frames)

    def next_frame(self) -> tuple[bytes, np.ndarray] | None:
        """The next frame of the backchannel being said (None when none is)."""
        playing = self.playing
        if playing is None:
            return None
        frame = playing.wire[playing.sent], playing.clean[playing.sent]
        playing.sent += 1
        if playing.sent == len(playing.wire):
            self.playing = None
        return frame


def trial_interaction(
    scenario: Scenario, config: SimulationConfig, style: CallerStyle, voice: VoiceSpec
) -> tuple[CallerInteraction, BackchannelPlayer]:
    """A trial's interaction draws and backchannel player (seeded from its channel seed)."""
    seed = channel_seed(scenario, config)
    params = style.interaction
    channel = None
    if params is not None and params.backchannel_every_s is not None:
        channel = caller_channel(
            config.condition, derive_seed(seed, "backchannel"), config.noise_dir
        )
    return CallerInteraction(style, seed), BackchannelPlayer(channel, voice, config.caller_tts)
