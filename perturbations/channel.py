"""The caller's side of the line for one trial under one condition.

``make_channel(condition, seed)`` gives a ``Channel``:

* ``voice(base)``: the caller's voice (accent drawn once per channel);
* ``speech(clip)``: caller speech with background noise and connection degradation;
* ``ambient(seconds, rate)``: what the open mic sends while the caller is silent (noise at
  the ambient level, or digital silence).

Every caller utterance is perturbed independently of what happened before on the wire:
utterance ``k`` (the k-th ``speech`` call, counted from 0) mixes noise from a point of the
loop drawn from ``(seed, "noise", "utterance", k)`` and goes through a connection drawn from
``(seed, "connection", "utterance", k)``. So however long the agent took to answer, and
however much ambient audio the open mic sent meanwhile, the same trial's k-th utterance
leaves the phone as the same bytes for every agent under test. The reference (spec 8.2)
instead shares one noise cursor between speech and ambient frames, which lets the agent's
timing move the noise under the caller's next turn; we deliberately do not.

Ambient noise is seeded per gap: gap ``g`` is the open mic after ``g`` utterances have been
perturbed (gap 0 before the first), starting at a point drawn from ``(seed, "noise", "gap",
g)`` and running on continuously for as long as the gap lasts. Between utterances the caller
thus hears one continuous stretch of the same room; only at the start of each utterance and
gap does the noise jump to another point of the loop (inaudible in noise, and unavoidable if
speech must not depend on how long the gap was). The noise loop itself is generated once
per channel from ``(seed, "noise", "loop")``.

Registered perturbation kinds (``perturbations.kinds``) act on speech at their place in
the chain (before the noise, between noise and connection, or after the connection), each
from ``(seed, <kind>, "utterance", k)``. Each axis draws from its own random stream, so e.g. ``noise`` and ``accent+noise`` built
with the same seed hear the same noise. The seed comes from the caller of ``make_channel``;
a simulated trial derives it from (run seed, scenario, condition, trial) so every agent
under test hears the same caller. Speech and ambient may be asked for from two threads (a
real-time call prepares its next utterance while the open mic keeps sending); a lock keeps
the counters and the lazily generated loop consistent.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from perturbations.accent import apply_accent
from perturbations.audio import AudioError, Clip, VoiceSpec
from perturbations.conditions import ConditionSpec, get_condition
from perturbations.connection import apply_connection
from perturbations.kinds import CONNECTION_ORDER, NOISE_ORDER, PerturbationKind
from perturbations.noise import NoiseStream, ambient_clip, load_noise, mix_at_snr
from perturbations.seeding import derive_seed, make_rng


class Channel:
    """Seeded perturbation of one caller's audio; see the module docstring."""

    def __init__(self, condition: ConditionSpec, seed: int, noise_dir: Path | str | None = None):
        self.condition = condition
        self.seed = seed
        self.noise_dir = Path(noise_dir) if noise_dir is not None else None
        self._accent_rng = np.random.default_rng(derive_seed(seed, "accent"))
        self._lock = threading.Lock()
        self._loop: np.ndarray | None = None
        self._rate: int | None = None
        self._utterances = 0
        self._gap: tuple[int, NoiseStream] | None = None
        self._kind_gap = (-1, 0)  # (gap, samples a kind's ambient hook sent in it)
        self._voice: VoiceSpec | None = None
        self._kinds = [(k, self._with_noise_dir(p)) for k, p in condition.kinds()]
        # Costly set-up (e.g. a generated noise loop) now, not mid-call on the clock.
        for kind, params in self._kinds:
            if kind.prepare is not None:
                kind.prepare(params)

    def _with_noise_dir(self, params: BaseModel) -> BaseModel:
        """A kind whose params take a ``noise_dir`` reads recordings from the channel's
        unless its condition names a directory of its own."""
        if self.noise_dir is None or "noise_dir" not in type(params).model_fields:
            return params
        if getattr(params, "noise_dir", None) is not None:
            return params
        return params.model_copy(update={"noise_dir": self.noise_dir})

    @property
    def utterances(self) -> int:
        """Caller utterances perturbed so far (also the index of the current ambient gap)."""
        return self._utterances

    def voice(self, base: VoiceSpec | None = None) -> VoiceSpec:
        """The caller's voice: ``base`` unless the condition draws an accent (drawn once)."""
        base = base or VoiceSpec()
        if self.condition.accent is None:
            return base
        if self._voice is None:
            self._voice = apply_accent(base, self.condition.accent, self._accent_rng)
        return self._voice

    def _noise_loop(self, rate: int) -> np.ndarray:
        params = self.condition.noise
        assert params is not None
        if self._loop is None:
            rng = make_rng(self.seed, "noise", "loop")
            self._loop = load_noise(params.source, params.loop_s, rate, rng, self.noise_dir)
            self._rate = rate
        elif self._rate != rate:
            raise AudioError(
                f"channel noise runs at {self._rate} Hz, got {rate} Hz audio "
                "(use one sample rate per channel)"
            )
        return self._loop

    def _stream(self, rate: int, *where: object) -> NoiseStream:
        """The noise loop from a point drawn from ``where`` (an utterance or a gap)."""
        loop = self._noise_loop(rate)
        start = int(make_rng(self.seed, "noise", *where).integers(0, loop.size))
        return NoiseStream(loop, rate, start)

    def speech(self, clip: Clip) -> Clip:
        """Caller speech as it leaves the caller's phone: noise, then the connection."""
        clip.validate()
        noise = self.condition.noise
        with self._lock:
            index = self._utterances
            self._utterances += 1
            if noise is not None:
                segment = self._stream(clip.rate, "utterance", index).take(clip.n_samples)
        kinds = self._kinds
        clip = self._apply_kinds(clip, kinds, index, -math.inf, NOISE_ORDER)
        if noise is not None:
            clip = mix_at_snr(clip, segment, noise.snr_db)
        clip = self._apply_kinds(clip, kinds, index, NOISE_ORDER, CONNECTION_ORDER)
        if self.condition.connection is not None:
            rng = make_rng(self.seed, "connection", "utterance", index)
            clip = apply_connection(clip, self.condition.connection, rng)
        return self._apply_kinds(clip, kinds, index, CONNECTION_ORDER, math.inf)

    def _apply_kinds(
        self,
        clip: Clip,
        kinds: list[tuple[PerturbationKind, Any]],
        index: int,
        lo: float,
        hi: float,
    ) -> Clip:
        """The registered kinds placed between ``lo`` and ``hi``, each on its own stream."""
        for kind, params in kinds:
            if lo < kind.order < hi:
                clip = kind.apply(clip, params, make_rng(self.seed, kind.name, "utterance", index))
        return clip

    def _kind_ambient(self, n: int, rate: int) -> Clip | None:
        """Open-mic audio from the first kind with an ambient hook, seeded per gap like the
        built-in noise: ``(seed, <kind>, "gap", g)`` plus the samples already sent in it."""
        for kind, params in self._kinds:
            if kind.ambient is not None:
                with self._lock:
                    gap = self._utterances
                    offset = self._kind_gap[1] if self._kind_gap[0] == gap else 0
                    self._kind_gap = (gap, offset + n)
                return kind.ambient(
                    n, rate, params, make_rng(self.seed, kind.name, "gap", gap), offset
                )
        return None

    def ambient(self, seconds: float, rate: int) -> Clip:
        """Open-mic audio for a silent stretch (noise if configured, else silence)."""
        n = round(seconds * rate)
        if n <= 0:
            raise AudioError(f"ambient audio of {seconds} s at {rate} Hz has no samples")
        noise = self.condition.noise
        if noise is None or not noise.ambient:
            return self._kind_ambient(n, rate) or Clip.silence(seconds, rate)
        with self._lock:
            if self._gap is None or self._gap[0] != self._utterances:
                self._gap = (self._utterances, self._stream(rate, "gap", self._utterances))
            self._noise_loop(rate)  # one sample rate per channel
            samples = self._gap[1].take(n)
        return ambient_clip(samples, rate, noise.snr_db)


def make_channel(
    condition: ConditionSpec | str, seed: int, noise_dir: Path | str | None = None
) -> Channel:
    """A fresh channel for ``condition`` (a spec or a registered name) and ``seed``."""
    spec = get_condition(condition) if isinstance(condition, str) else condition
    return Channel(spec, seed, noise_dir)
