"""The caller's line: the perturbation channel applied to its speech and its open mic."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import numpy as np

from perturbations.audio import Clip, VoiceSpec

AMBIENT_CHUNK_S = 5.0


class CallerChannel(Protocol):
    def voice(self, base: VoiceSpec | None = None) -> VoiceSpec: ...

    def speech(self, clip: Clip) -> Clip: ...

    def ambient(self, seconds: float, rate: int) -> Clip: ...


class CleanChannel:
    """No perturbation: speech unchanged, silence between utterances."""

    def voice(self, base: VoiceSpec | None = None) -> VoiceSpec:
        return base or VoiceSpec()

    def speech(self, clip: Clip) -> Clip:
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


class AmbientFeed:
    """The caller's open mic between utterances, cut into frames from longer chunks."""

    def __init__(self, channel: CallerChannel, rate: int, frame: int) -> None:
        self.channel, self.rate, self.frame = channel, rate, frame
        self.buffer = np.zeros(0, np.float32)

    def next_frame(self) -> np.ndarray:
        if self.buffer.size < self.frame:
            chunk = self.channel.ambient(AMBIENT_CHUNK_S, self.rate).samples.astype(np.float32)
            self.buffer = np.concatenate([self.buffer, chunk])
        out, self.buffer = self.buffer[: self.frame], self.buffer[self.frame :]
        return out
