"""Audio values passed between speech engines, the telephone channel and perturbations.

``Clip`` is the one audio type: float32 mono samples in [-1, 1] at a known rate. It checks
itself on construction, so bad audio (empty, NaN, stereo, int16 where float is expected,
a zero rate) fails here with a message naming the problem instead of deep in an engine.
``VoiceSpec`` describes how a synthetic caller speaks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

INT16_SCALE = 32768.0
# Float rounding in resamplers and mixers can overshoot full scale by a hair.
_AMPLITUDE_TOLERANCE = 1e-4


class AudioError(ValueError):
    """Audio that cannot be used: the message names the problem and the offending value."""


def _check_samples(samples: object, rate: object) -> None:
    if not isinstance(rate, int | np.integer) or isinstance(rate, bool) or rate <= 0:
        raise AudioError(f"sample rate must be a positive integer, got {rate!r}")
    if not isinstance(samples, np.ndarray):
        raise AudioError(f"samples must be a numpy array, got {type(samples).__name__}")
    if samples.ndim != 1:
        raise AudioError(
            f"audio must be mono (1-D), got an array of shape {samples.shape}; "
            "mix channels down first (e.g. samples.mean(axis=1))"
        )
    if samples.dtype != np.float32:
        hint = " (use Clip.from_int16 for PCM16)" if samples.dtype == np.int16 else ""
        raise AudioError(f"samples must be float32, got {samples.dtype}{hint}")
    if samples.size == 0:
        raise AudioError("audio is empty (0 samples)")
    if not np.isfinite(samples).all():
        bad = int((~np.isfinite(samples)).sum())
        raise AudioError(f"audio contains {bad} NaN/inf samples")
    peak = float(np.abs(samples).max())
    if peak > 1.0 + _AMPLITUDE_TOLERANCE:
        raise AudioError(f"samples must lie in [-1, 1], got a peak of {peak:.4f}")


@dataclass(frozen=True, eq=False)
class Clip:
    """Mono float32 audio in [-1, 1]; immutable (the sample array is made read-only)."""

    samples: np.ndarray
    rate: int

    def __post_init__(self) -> None:
        _check_samples(self.samples, self.rate)
        view = self.samples.view()
        view.flags.writeable = False
        object.__setattr__(self, "samples", view)
        object.__setattr__(self, "rate", int(self.rate))

    def validate(self) -> Clip:
        """Re-run the construction checks (for clips built with ``object.__new__``)."""
        _check_samples(self.samples, self.rate)
        return self

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_int16(cls, arr: np.ndarray, rate: int) -> Clip:
        """From PCM16 samples (full scale 32768)."""
        arr = np.asarray(arr)
        if arr.dtype != np.int16:
            raise AudioError(f"from_int16 expects int16 samples, got {arr.dtype}")
        return cls((arr.astype(np.float32) / INT16_SCALE).astype(np.float32), rate)

    @classmethod
    def from_float(cls, arr: np.ndarray, rate: int, *, clip: bool = False) -> Clip:
        """From any float array; ``clip=True`` saturates to [-1, 1] instead of failing."""
        arr = np.asarray(arr)
        if arr.dtype.kind != "f":
            raise AudioError(f"from_float expects floating-point samples, got {arr.dtype}")
        out = arr.astype(np.float32)
        if clip:
            out = np.clip(out, -1.0, 1.0)
        return cls(out, rate)

    @classmethod
    def silence(cls, seconds: float, rate: int) -> Clip:
        """Digital silence; at least one sample."""
        n = round(seconds * rate) if rate > 0 else 0
        if n <= 0:
            raise AudioError(f"silence of {seconds} s at {rate} Hz has no samples")
        return cls(np.zeros(n, dtype=np.float32), rate)

    @staticmethod
    def concat(*clips: Clip) -> Clip:
        """Clips one after another; all must share one rate."""
        if not clips:
            raise AudioError("concat needs at least one clip")
        rates = {c.rate for c in clips}
        if len(rates) != 1:
            raise AudioError(f"concat needs one sample rate, got {sorted(rates)} Hz")
        return Clip(np.concatenate([c.samples for c in clips]), clips[0].rate)

    # ----------------------------------------------------------------- views
    @property
    def n_samples(self) -> int:
        return int(self.samples.size)

    @property
    def duration_s(self) -> float:
        return self.samples.size / self.rate

    def to_int16(self) -> np.ndarray:
        """PCM16 samples (rounded, saturated)."""
        scaled = np.round(self.samples.astype(np.float64) * INT16_SCALE)
        return np.clip(scaled, -32768, 32767).astype(np.int16)

    def rms(self) -> float:
        return float(np.sqrt(np.mean(np.square(self.samples, dtype=np.float64))))

    def dbfs(self) -> float:
        """RMS level in dB relative to full scale (-inf for digital silence)."""
        rms = self.rms()
        return float(20 * np.log10(rms)) if rms > 0 else float("-inf")

    def expect_rate(self, rate: int, who: str = "this step") -> Clip:
        """Fail clearly when a step that needs one rate receives another."""
        if self.rate != rate:
            raise AudioError(
                f"{who} expects {rate} Hz audio, got {self.rate} Hz (resample it first)"
            )
        return self

    def slice_s(self, start_s: float, end_s: float) -> Clip:
        start = max(0, round(start_s * self.rate))
        end = min(self.n_samples, round(end_s * self.rate))
        if end <= start:
            raise AudioError(f"empty slice {start_s}-{end_s} s of a {self.duration_s:.3f} s clip")
        return Clip(self.samples[start:end].copy(), self.rate)

    def same_as(self, other: Clip) -> bool:
        """Byte-identical samples and the same rate."""
        return self.rate == other.rate and self.samples.tobytes() == other.samples.tobytes()

    def __repr__(self) -> str:
        return f"Clip({self.duration_s:.3f} s at {self.rate} Hz, {self.dbfs():.1f} dBFS)"


class VoiceSpec(BaseModel):
    """How a synthetic caller speaks: an eSpeak NG voice name plus prosody."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    voice: str = Field(
        default="en-us",
        min_length=1,
        description="Voice: language code plus optional variant, e.g. 'en-us+klatt3', 'en-gb'.",
    )
    rate_wpm: int = Field(default=165, ge=80, le=450, description="Speaking rate, words/min.")
    pitch: int = Field(default=50, ge=0, le=99, description="Base pitch (eSpeak 0-99).")
    pitch_range: int = Field(default=50, ge=0, le=99, description="Pitch range (0 = monotone).")
    word_gap_ms: int = Field(
        default=0, ge=0, le=500, description="Extra pause between words, in milliseconds."
    )
    version: str = Field(default="1", description="Spec version; bump when semantics change.")
