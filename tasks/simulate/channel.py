"""The caller's line: the perturbation channel applied to its speech and its open mic."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from perturbations.audio import Clip, VoiceSpec
from perturbations.seeding import derive_seed

if TYPE_CHECKING:
    from scenarios.models import Scenario
    from tasks.simulate.config import SimulationConfig

AMBIENT_CHUNK_S = 5.0


class CallerChannel(Protocol):
    @property
    def utterances(self) -> int: ...

    def voice(self, base: VoiceSpec | None = None) -> VoiceSpec: ...

    def speech(self, clip: Clip) -> Clip: ...

    def ambient(self, seconds: float, rate: int) -> Clip: ...


class CleanChannel:
    """No perturbation: speech unchanged, silence between utterances."""

    def __init__(self) -> None:
        self.utterances = 0

    def voice(self, base: VoiceSpec | None = None) -> VoiceSpec:
        return base or VoiceSpec()

    def speech(self, clip: Clip) -> Clip:
        self.utterances += 1
        return clip

    def ambient(self, seconds: float, rate: int) -> Clip:
        return Clip.silence(seconds, rate)


def caller_channel(condition: Any, seed: int, noise_dir: Path | None = None) -> CallerChannel:
    """``perturbations.make_channel`` for the condition (a name or a ConditionSpec)."""
    try:
        from perturbations import make_channel  # type: ignore[attr-defined]
    except ImportError:
        name = condition if isinstance(condition, str) else getattr(condition, "name", "")
        if name == "clean":
            return CleanChannel()
        raise ValueError(
            f"condition {name!r} needs perturbations.make_channel, which is not available"
        ) from None
    channel: CallerChannel = make_channel(condition, seed, noise_dir=noise_dir)
    return channel


def channel_seed(scenario: Scenario, config: SimulationConfig) -> int:
    """The channel's seed: (seed, scenario, condition, trial), nothing an agent can move.

    The channel adds the utterance (or gap) index to it, so every caller utterance of a
    trial leaves the phone byte-identical whatever the agent did before it.
    """
    return derive_seed(config.seed, scenario.key, config.condition_name, config.trial)


def trial_channel(
    scenario: Scenario, config: SimulationConfig, rng: random.Random
) -> CallerChannel:
    """The caller's line for one attempt.

    The channel seed once came from the attempt's caller stream ``rng``; that draw is still
    taken so the caller's later draws (pauses, disfluencies, the stream id) and therefore
    every stored clean conversation stay exactly as they were.
    """
    rng.getrandbits(32)
    return caller_channel(config.condition, channel_seed(scenario, config), config.noise_dir)


class AmbientFeed:
    """The caller's open mic between utterances, cut into frames from longer chunks.

    What is left of a chunk when the caller speaks is dropped: each gap's ambient audio
    starts where the channel seeds that gap, not where the previous gap happened to stop.
    """

    def __init__(self, channel: CallerChannel, rate: int, frame: int) -> None:
        self.channel, self.rate, self.frame = channel, rate, frame
        self.buffer = np.zeros(0, np.float32)
        self.gap = channel.utterances

    def next_frame(self) -> np.ndarray:
        if self.gap != self.channel.utterances:
            self.gap, self.buffer = self.channel.utterances, np.zeros(0, np.float32)
        if self.buffer.size < self.frame:
            chunk = self.channel.ambient(AMBIENT_CHUNK_S, self.rate).samples.astype(np.float32)
            self.buffer = np.concatenate([self.buffer, chunk])
        out, self.buffer = self.buffer[: self.frame], self.buffer[self.frame :]
        return out
