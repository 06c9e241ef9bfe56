"""The caller's side of the line for one trial under one condition.

``make_channel(condition, seed)`` gives a stateful ``Channel``:

* ``voice(base)``: the caller's voice (accent drawn once per channel);
* ``speech(clip)``: caller speech with background noise and connection degradation;
* ``ambient(seconds, rate)``: what the open mic sends while the caller is silent (noise at
  the ambient level, or digital silence).

Speech and ambient audio consume one looping noise stream with one cursor (spec 8.2).
Each axis draws from its own random stream derived from the seed, so the same seed gives
byte-identical audio, and e.g. ``noise`` and ``accent+noise`` hear the same noise. Derive
the seed with ``derive_seed(run, scenario, trial, condition)`` so every agent under test
hears the same caller. Not thread-safe: one channel per conversation.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from perturbations.accent import apply_accent
from perturbations.audio import AudioError, Clip, VoiceSpec
from perturbations.conditions import ConditionSpec, get_condition
from perturbations.connection import apply_connection
from perturbations.noise import NoiseStream, ambient_clip, load_noise, mix_at_snr
from perturbations.seeding import derive_seed


class Channel:
    """Stateful perturbation of one caller's audio; see the module docstring."""

    def __init__(self, condition: ConditionSpec, seed: int, noise_dir: Path | str | None = None):
        self.condition = condition
        self.seed = seed
        self.noise_dir = Path(noise_dir) if noise_dir is not None else None
        self._noise_rng = np.random.default_rng(derive_seed(seed, "noise"))
        self._connection_rng = np.random.default_rng(derive_seed(seed, "connection"))
        self._accent_rng = np.random.default_rng(derive_seed(seed, "accent"))
        self._stream: NoiseStream | None = None
        self._voice: VoiceSpec | None = None

    def voice(self, base: VoiceSpec | None = None) -> VoiceSpec:
        """The caller's voice: ``base`` unless the condition draws an accent (drawn once)."""
        base = base or VoiceSpec()
        if self.condition.accent is None:
            return base
        if self._voice is None:
            self._voice = apply_accent(base, self.condition.accent, self._accent_rng)
        return self._voice

    def _noise(self, n: int, rate: int) -> np.ndarray:
        params = self.condition.noise
        assert params is not None
        if self._stream is None:
            loop = load_noise(params.source, params.loop_s, rate, self._noise_rng, self.noise_dir)
            start = int(self._noise_rng.integers(0, loop.size))
            self._stream = NoiseStream(loop, rate, start)
        elif self._stream.rate != rate:
            raise AudioError(
                f"channel noise runs at {self._stream.rate} Hz, got {rate} Hz audio "
                "(use one sample rate per channel)"
            )
        return self._stream.take(n)

    def speech(self, clip: Clip) -> Clip:
        """Caller speech as it leaves the caller's phone: noise, then the connection."""
        clip.validate()
        if self.condition.noise is not None:
            noise = self._noise(clip.n_samples, clip.rate)
            clip = mix_at_snr(clip, noise, self.condition.noise.snr_db)
        if self.condition.connection is not None:
            clip = apply_connection(clip, self.condition.connection, self._connection_rng)
        return clip

    def ambient(self, seconds: float, rate: int) -> Clip:
        """Open-mic audio for a silent stretch (noise if configured, else silence)."""
        n = round(seconds * rate)
        if n <= 0:
            raise AudioError(f"ambient audio of {seconds} s at {rate} Hz has no samples")
        noise = self.condition.noise
        if noise is None or not noise.ambient:
            return Clip.silence(seconds, rate)
        return ambient_clip(self._noise(n, rate), rate, noise.snr_db)


def make_channel(
    condition: ConditionSpec | str, seed: int, noise_dir: Path | str | None = None
) -> Channel:
    """A fresh channel for ``condition`` (a spec or a registered name) and ``seed``."""
    spec = get_condition(condition) if isinstance(condition, str) else condition
    return Channel(spec, seed, noise_dir)
