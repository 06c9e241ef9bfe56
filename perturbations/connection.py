"""A bad phone line: packet loss, jitter dropouts, band-limiting, a low-bitrate codec,
clipping and gain swings. Each ``apply_<x>(clip, params, rng) -> Clip`` is pure and seeded.

``ConnectionParams`` composes them in the order a real path applies them: the handset band
limit and codec first, then level changes and clipping, then network losses. Its defaults
extend the reference (spec 8.2: 3 % frame loss, gain uniform in [0.5, 1.2] per chunk) with a
300-3400 Hz band limit and occasional jitter-buffer dropouts.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from perturbations.audio import Clip

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class PacketLossParams(BaseModel):
    """Lost 20 ms packets (Gilbert-Elliott bursts) with simple concealment."""

    model_config = _FROZEN
    loss_rate: float = Field(default=0.03, ge=0, le=0.5, description="Mean fraction lost.")
    mean_burst: float = Field(default=1.0, ge=1, le=20, description="Mean lost run, frames.")
    frame_ms: int = Field(default=20, ge=5, le=100, description="Packet duration.")
    concealment: Literal["zero", "repeat"] = Field(
        default="repeat", description="'zero': silence; 'repeat': last good packet, fading."
    )


class JitterParams(BaseModel):
    """Late packets discarded by the jitter buffer: short gaps of silence."""

    model_config = _FROZEN
    dropouts_per_s: float = Field(default=0.1, ge=0, le=5, description="Mean dropout rate.")
    min_ms: int = Field(default=40, ge=10, le=1000, description="Shortest dropout.")
    max_ms: int = Field(default=160, ge=10, le=2000, description="Longest dropout.")

    @model_validator(mode="after")
    def _ordered(self) -> JitterParams:
        if self.max_ms < self.min_ms:
            raise ValueError(f"max_ms ({self.max_ms}) must be >= min_ms ({self.min_ms})")
        return self


class BandLimitParams(BaseModel):
    """Telephone band-pass."""

    model_config = _FROZEN
    low_hz: float = Field(default=300.0, ge=20, le=2000, description="Lower edge.")
    high_hz: float = Field(default=3400.0, ge=1000, le=20000, description="Upper edge.")
    order: int = Field(default=4, ge=1, le=10, description="Butterworth order.")


class CodecParams(BaseModel):
    """Low-bitrate lossy codec (MP3 via audiomentations + fast-mp3-augment)."""

    model_config = _FROZEN
    bitrate_kbps: int = Field(default=16, ge=8, le=128, description="Constant bitrate.")


class ClippingParams(BaseModel):
    """Overdriven input: the waveform saturates at a fraction of its peak."""

    model_config = _FROZEN
    ceiling: float = Field(default=0.3, ge=0.05, le=1, description="Saturation / peak.")


class GainParams(BaseModel):
    """Level swings: one gain per clip, drawn uniformly."""

    model_config = _FROZEN
    min_gain: float = Field(default=0.5, gt=0, le=4, description="Smallest linear gain.")
    max_gain: float = Field(default=1.2, gt=0, le=4, description="Largest linear gain.")

    @model_validator(mode="after")
    def _ordered(self) -> GainParams:
        if self.max_gain < self.min_gain:
            raise ValueError(f"max_gain ({self.max_gain}) must be >= min_gain ({self.min_gain})")
        return self


def _out(samples: np.ndarray, rate: int) -> Clip:
    return Clip(np.clip(samples, -1, 1).astype(np.float32), rate)


def _frame_losses(n_frames: int, params: PacketLossParams, rng) -> np.ndarray:
    """Two-state Markov chain with the requested mean loss rate and burst length."""
    lost = np.zeros(n_frames, dtype=bool)
    if params.loss_rate == 0 or n_frames == 0:
        return lost
    p_recover = 1 / params.mean_burst
    p_fail = min(1.0, params.loss_rate * p_recover / max(1e-9, 1 - params.loss_rate))
    draws = rng.random(n_frames)
    state = draws[0] < params.loss_rate
    for i in range(n_frames):
        lost[i] = state
        state = draws[i] >= p_recover if state else draws[i] < p_fail
    return lost


def apply_packet_loss(clip: Clip, params: PacketLossParams, rng: np.random.Generator) -> Clip:
    frame = max(1, clip.rate * params.frame_ms // 1000)
    out = clip.samples.astype(np.float64).copy()
    lost = _frame_losses(-(-out.size // frame), params, rng)
    last_good = np.zeros(frame)
    fade = 1.0
    for i, is_lost in enumerate(lost):
        span = slice(i * frame, min(out.size, (i + 1) * frame))
        width = span.stop - span.start
        if not is_lost:
            last_good[:width], fade = out[span], 1.0
        elif params.concealment == "repeat":
            fade *= 0.5  # repeated packets fade out so a long burst ends in silence
            out[span] = last_good[:width] * fade
        else:
            out[span] = 0.0
    return _out(out, clip.rate)


def apply_jitter_dropouts(clip: Clip, params: JitterParams, rng: np.random.Generator) -> Clip:
    out = clip.samples.astype(np.float64).copy()
    for _ in range(rng.poisson(params.dropouts_per_s * clip.duration_s)):
        length = int(clip.rate * rng.uniform(params.min_ms, params.max_ms) / 1000)
        start = int(rng.integers(0, max(1, out.size - length)))
        out[start : start + length] = 0.0
    return _out(out, clip.rate)


def apply_band_limit(clip: Clip, params: BandLimitParams, rng: np.random.Generator) -> Clip:
    # Imported here: scipy.signal is half a second of import for every run's config checks.
    from scipy.signal import butter, sosfilt

    high = min(params.high_hz, 0.49 * clip.rate)
    if params.low_hz >= high:
        raise ValueError(
            f"band limit {params.low_hz}-{params.high_hz} Hz is empty at {clip.rate} Hz"
        )
    sos = butter(params.order, [params.low_hz, high], btype="bandpass", fs=clip.rate, output="sos")
    return _out(sosfilt(sos, clip.samples.astype(np.float64)), clip.rate)


def apply_low_bitrate_codec(clip: Clip, params: CodecParams, rng: np.random.Generator) -> Clip:
    # audiomentations draws its parameters from the global RNG; min == max makes the
    # transform deterministic. The import is slow (librosa), so it is deferred.
    from audiomentations import Mp3Compression

    codec = Mp3Compression(
        min_bitrate=params.bitrate_kbps,
        max_bitrate=params.bitrate_kbps,
        backend="fast-mp3-augment",
        preserve_delay=False,
        p=1.0,
    )
    out = codec(samples=clip.samples.astype(np.float32).copy(), sample_rate=clip.rate)
    return _out(np.asarray(out[: clip.n_samples], dtype=np.float64), clip.rate)


def apply_clipping(clip: Clip, params: ClippingParams, rng: np.random.Generator) -> Clip:
    peak = float(np.abs(clip.samples).max())
    if peak == 0:
        return clip
    limit = params.ceiling * peak
    # Saturate, then restore the peak: distortion without a loudness drop.
    return _out(np.clip(clip.samples, -limit, limit) / params.ceiling, clip.rate)


def apply_gain(clip: Clip, params: GainParams, rng: np.random.Generator) -> Clip:
    return _out(clip.samples * rng.uniform(params.min_gain, params.max_gain), clip.rate)


class ConnectionParams(BaseModel):
    """A degraded connection; each stage is optional (None = off)."""

    model_config = _FROZEN
    band_limit: BandLimitParams | None = Field(default_factory=BandLimitParams)
    codec: CodecParams | None = Field(default=None, description="Off by default (slow import).")
    gain: GainParams | None = Field(default_factory=GainParams)
    clipping: ClippingParams | None = Field(default=None)
    packet_loss: PacketLossParams | None = Field(default_factory=PacketLossParams)
    jitter: JitterParams | None = Field(default_factory=JitterParams)


def apply_connection(clip: Clip, params: ConnectionParams, rng: np.random.Generator) -> Clip:
    """All enabled stages in path order: band limit, codec, gain, clipping, loss, jitter."""
    stages = [
        (params.band_limit, apply_band_limit),
        (params.codec, apply_low_bitrate_codec),
        (params.gain, apply_gain),
        (params.clipping, apply_clipping),
        (params.packet_loss, apply_packet_loss),
        (params.jitter, apply_jitter_dropouts),
    ]
    for stage_params, fn in stages:
        if stage_params is not None:
            clip = fn(clip, stage_params, rng)  # type: ignore[operator]
    return clip
