"""Accent: the caller's voice drawn from English accent voices and variants, with
speaking-style prosody (rate, pitch, pitch range, pauses between words).

Foreign-language voices are deliberately absent: eSpeak's French or Hindi voices read
English letters and digits in their own language, which is not an accent.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from perturbations.audio import VoiceSpec

ENGLISH_ACCENTS = [
    "en-us",
    "en-gb",
    "en-gb-scotland",
    "en-gb-x-rp",
    "en-gb-x-gbclan",
    "en-gb-x-gbcwmd",
    "en-029",
    "en-us-nyc",
]
VOICE_VARIANTS = (
    [""]
    + [f"m{i}" for i in range(1, 9)]
    + [f"f{i}" for i in range(1, 6)]
    + ["klatt"]
    + [f"klatt{i}" for i in range(2, 7)]
)


def _range(low: float, high: float, lo_bound: float, hi_bound: float, what: str):
    return Field(
        default=(low, high),
        description=f"Inclusive range of {what}, within [{lo_bound}, {hi_bound}].",
    )


class AccentParams(BaseModel):
    """Pools and ranges the accent draw picks from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    voices: list[str] = Field(
        default_factory=lambda: list(ENGLISH_ACCENTS), min_length=1, description="Accent pool."
    )
    variants: list[str] = Field(
        default_factory=lambda: list(VOICE_VARIANTS),
        min_length=1,
        description="Variant pool ('' = none), e.g. m3, f2, klatt3.",
    )
    rate_wpm: tuple[int, int] = _range(140, 195, 80, 450, "speaking rate (words/min)")
    pitch: tuple[int, int] = _range(30, 70, 0, 99, "base pitch")
    pitch_range: tuple[int, int] = _range(25, 85, 0, 99, "pitch range")
    word_gap_ms: tuple[int, int] = _range(0, 60, 0, 500, "extra pause between words (ms)")

    @field_validator("voices")
    @classmethod
    def _english_only(cls, voices: list[str]) -> list[str]:
        bad = [v for v in voices if not v.lower().startswith("en")]
        if bad:
            raise ValueError(f"accent voices must be English voices (en-*), got {bad}")
        return voices

    @model_validator(mode="after")
    def _bounded(self) -> AccentParams:
        bounds = {"rate_wpm": (80, 450), "pitch": (0, 99), "pitch_range": (0, 99)}
        bounds["word_gap_ms"] = (0, 500)
        for name, (lo, hi) in bounds.items():
            low, high = getattr(self, name)
            if not lo <= low <= high <= hi:
                raise ValueError(
                    f"{name} must satisfy {lo} <= low <= high <= {hi}, got {(low, high)}"
                )
        return self


def _draw(rng: np.random.Generator, bounds: tuple[int, int]) -> int:
    return int(rng.integers(bounds[0], bounds[1] + 1))


def apply_accent(voice: VoiceSpec, params: AccentParams, rng: np.random.Generator) -> VoiceSpec:
    """A new caller voice: accent and variant from the pools, prosody from the ranges."""
    accent = params.voices[int(rng.integers(len(params.voices)))]
    variant = params.variants[int(rng.integers(len(params.variants)))]
    return voice.model_copy(
        update={
            "voice": f"{accent}+{variant}" if variant else accent,
            "rate_wpm": _draw(rng, params.rate_wpm),
            "pitch": _draw(rng, params.pitch),
            "pitch_range": _draw(rng, params.pitch_range),
            "word_gap_ms": _draw(rng, params.word_gap_ms),
        }
    )
