"""EVA's acoustic settings (spec 8.2) as perturbation kinds: ``eva_noise``, ``eva_connection``.

These follow the reference's rules and constants exactly, next to our own ``noise`` and
``connection`` axes (which measure the speech level on active frames, conceal lost packets
and add band limiting and jitter):

* ``eva_noise``: per speech chunk, noise scaled to ``RMS(chunk) * 10^(-snr_db/20)`` and added
  (a silent noise chunk leaves the speech unchanged); ``bad_connection_static`` adds Gaussian
  noise with that sigma, the reference RMS 3000/32768 standing in for a silent chunk. The open
  mic sends 20 ms frames scaled to ``3000/32768 * 10^(-snr_db/20)`` (Gaussian for static).
* ``eva_connection``: per chunk, a G.711 mu-law round trip, each 20 ms segment zeroed with
  probability 0.03, one gain drawn from U[0.5, 1.2], clip.

The reference mixes per chunk *as the simulator provider streams it*, a size the spec does
not fix; we cut each utterance into ``chunk_ms`` chunks. Its noises are WAV recordings, five
of seven missing upstream (spec item 25), so apart from static a condition uses EVA's rule over
one of our generated sources (``NOISE_GENERATORS``). Like a recording, that loop is fixed per
(source, rate) (generated once from a constant seed); each utterance starts at a point drawn
from its own stream and each open-mic gap at a point drawn from the gap's. The reference's
single cursor shared by speech and ambient frames is left out on purpose (``channel``).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from perturbations.audio import INT16_SCALE, Clip
from perturbations.kinds import perturbation_kind
from perturbations.noise import REFERENCE_SPEECH_RMS, load_noise
from perturbations.seeding import make_rng

STATIC = "bad_connection_static"
# Spec 8.2: the open mic's frames and the connection's loss segments are both 20 ms
# (640 bytes of 16 kHz PCM16).
FRAME_MS = 20
SIMULATOR_RATE = 16000  # spec 8.2: simulator speech and noise files are 16 kHz
_FROZEN = ConfigDict(frozen=True, extra="forbid")


class EvaNoiseParams(BaseModel):
    """EVA's background-noise rule over a noise source."""

    model_config = _FROZEN
    source: str = Field(
        default=STATIC,
        min_length=1,
        description=f"'{STATIC}' (the reference's Gaussian static, exact) or one of our "
        "generated noise sources (cafe, street, babble, ...) standing in for a recording.",
    )
    snr_db: float = Field(default=15.0, ge=-5, le=40, description="Reference default 15 dB.")
    chunk_ms: int = Field(default=100, ge=FRAME_MS, le=2000, description="Mixing chunk.")
    loop_s: float = Field(default=30.0, ge=2, le=120, description="Generated loop length.")
    noise_dir: Path | None = Field(
        default=None,
        description="Directory of <source>.wav recordings (PCM, mono or stereo, any rate; "
        "resampled to the channel's). Unset: the channel's noise_dir (the simulation's).",
    )


class EvaConnectionParams(BaseModel):
    """EVA's connection degradation."""

    model_config = _FROZEN
    mulaw: bool = Field(default=True, description="G.711 mu-law encode/decode round trip.")
    loss_rate: float = Field(default=0.03, ge=0, le=0.5, description="P(20 ms segment zeroed).")
    min_gain: float = Field(default=0.5, gt=0, le=4, description="Smallest gain per chunk.")
    max_gain: float = Field(default=1.2, gt=0, le=4, description="Largest gain per chunk.")
    chunk_ms: int = Field(default=100, ge=FRAME_MS, le=2000, description="Gain chunk.")

    @model_validator(mode="after")
    def _ordered(self) -> EvaConnectionParams:
        if self.max_gain < self.min_gain:
            raise ValueError(f"max_gain ({self.max_gain}) must be >= min_gain ({self.min_gain})")
        return self


# ----------------------------------------------------------------------------- mu-law


def mulaw_encode(pcm: np.ndarray) -> np.ndarray:
    """G.711 mu-law bytes of int16 samples (the Sun/CPython ``audioop.lin2ulaw`` algorithm:
    14-bit magnitude, bias 33, clip 8159, 8 segments, bits inverted)."""
    x = pcm.astype(np.int32) >> 2
    mask = np.where(x < 0, 0x7F, 0xFF)
    mag = np.minimum(np.abs(x), 8159) + 33
    seg = np.searchsorted(np.array([0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF]), mag)
    code = np.where(seg >= 8, 0x7F, (seg << 4) | ((mag >> (seg + 1)) & 0xF))
    return ((code ^ mask) & 0xFF).astype(np.uint8)


def mulaw_decode(codes: np.ndarray) -> np.ndarray:
    """int16 samples of G.711 mu-law bytes (``audioop.ulaw2lin``)."""
    u = ~codes.astype(np.int32) & 0xFF
    t = (((u & 0x0F) << 3) + 0x84) << ((u & 0x70) >> 4)
    return np.where(u & 0x80, 0x84 - t, t - 0x84).astype(np.int16)


# ----------------------------------------------------------------------------- helpers


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if x.size else 0.0


def _chunks(n: int, rate: int, ms: int) -> list[slice]:
    size = max(1, rate * ms // 1000)
    return [slice(i, min(n, i + size)) for i in range(0, n, size)]


def _out(samples: np.ndarray, rate: int) -> Clip:
    return Clip(np.clip(samples, -1, 1).astype(np.float32), rate)


@lru_cache(maxsize=8)
def _loop(source: str, seconds: float, rate: int, noise_dir: Path | None = None) -> np.ndarray:
    """A fixed unit-RMS loop per source, like the reference's recording (read-only): the
    user's ``<source>.wav`` in ``noise_dir`` when there is one, else a generated loop."""
    rng = make_rng("eva_noise", source, "loop")
    loop = np.asarray(load_noise(source, seconds, rate, rng, noise_dir))
    loop.flags.writeable = False
    return loop


def _segment(params: EvaNoiseParams, rate: int, start: int, n: int) -> np.ndarray:
    loop = _loop(params.source, params.loop_s, rate, params.noise_dir)
    return loop[(start + np.arange(n)) % loop.size]


# ----------------------------------------------------------------------------- noise


def mix_chunk(speech: np.ndarray, noise: np.ndarray, snr_db: float) -> np.ndarray:
    """Spec 8.2: noise scaled to ``RMS(speech) * 10^(-snr_db/20)``, added (unclipped)."""
    noise_rms = _rms(noise)
    if noise_rms == 0:
        return speech.astype(np.float64)
    return speech + noise / noise_rms * _rms(speech) * 10 ** (-snr_db / 20)


def static_chunk(speech: np.ndarray, snr_db: float, rng: np.random.Generator) -> np.ndarray:
    """Spec 8.2: Gaussian noise, sigma from the chunk's RMS (the reference RMS if silent)."""
    level = _rms(speech) or REFERENCE_SPEECH_RMS
    return speech + rng.standard_normal(speech.size) * level * 10 ** (-snr_db / 20)


def _noise_apply(clip: Clip, params: EvaNoiseParams, rng: np.random.Generator) -> Clip:
    samples = clip.samples.astype(np.float64)
    out = np.empty_like(samples)
    spans = _chunks(samples.size, clip.rate, params.chunk_ms)
    if params.source == STATIC:
        for span in spans:
            out[span] = static_chunk(samples[span], params.snr_db, rng)
    else:
        start = int(rng.integers(0, round(params.loop_s * clip.rate)))
        noise = _segment(params, clip.rate, start, samples.size)
        for span in spans:
            out[span] = mix_chunk(samples[span], noise[span], params.snr_db)
    return _out(out, clip.rate)


def ambient_frames(noise: np.ndarray, rate: int, snr_db: float) -> np.ndarray:
    """Each 20 ms frame scaled to the target RMS ``3000/32768 * 10^(-snr_db/20)``."""
    target = REFERENCE_SPEECH_RMS * 10 ** (-snr_db / 20)
    out = np.zeros(noise.size)
    for span in _chunks(noise.size, rate, FRAME_MS):
        rms = _rms(noise[span])
        if rms > 0:
            out[span] = noise[span] / rms * target
    return out


def eva_ambient(
    n: int, rate: int, params: EvaNoiseParams, rng: np.random.Generator, offset: int
) -> Clip:
    """The open mic in gap ``rng``, ``offset`` samples after the gap began."""
    if params.source == STATIC:
        # Fresh Gaussian per call with sigma = the target, reproducible from (gap, offset).
        frame_rng = np.random.default_rng([int(rng.integers(0, 2**62)), offset])
        target = REFERENCE_SPEECH_RMS * 10 ** (-params.snr_db / 20)
        return _out(frame_rng.standard_normal(n) * target, rate)
    start = int(rng.integers(0, round(params.loop_s * rate)))
    noise = _segment(params, rate, start + offset, n)
    return _out(ambient_frames(noise, rate, params.snr_db), rate)


def eva_prepare(params: EvaNoiseParams) -> None:
    """Generate (or read) the loop at the simulator's 16 kHz before the call (babble takes
    seconds; an unreadable recording fails here, naming the file, not mid-call)."""
    if params.source != STATIC:
        _loop(params.source, params.loop_s, SIMULATOR_RATE, params.noise_dir)


@perturbation_kind("eva_noise", EvaNoiseParams, order=110, ambient=eva_ambient, prepare=eva_prepare)
def eva_noise(clip: Clip, params: EvaNoiseParams, rng: np.random.Generator) -> Clip:
    """EVA's background noise on one caller utterance (after any built-in noise)."""
    return _noise_apply(clip, params, rng)


# ----------------------------------------------------------------------------- connection


def mulaw_round_trip(samples: np.ndarray) -> np.ndarray:
    """Float samples through int16 and G.711 mu-law and back."""
    pcm = np.clip(np.round(samples * INT16_SCALE), -32768, 32767).astype(np.int16)
    return mulaw_decode(mulaw_encode(pcm)).astype(np.float64) / INT16_SCALE


def degrade_chunk(
    chunk: np.ndarray, rate: int, params: EvaConnectionParams, rng: np.random.Generator
) -> np.ndarray:
    """Spec 8.2 on one chunk: mu-law, 20 ms segments zeroed at ``loss_rate``, gain, clip."""
    out = mulaw_round_trip(chunk) if params.mulaw else chunk.astype(np.float64)
    spans = _chunks(out.size, rate, FRAME_MS)
    for span, lost in zip(spans, rng.random(len(spans)) < params.loss_rate, strict=True):
        if lost:
            out[span] = 0.0
    return np.clip(out * rng.uniform(params.min_gain, params.max_gain), -1, 1)


@perturbation_kind("eva_connection", EvaConnectionParams, order=210)
def eva_connection(clip: Clip, params: EvaConnectionParams, rng: np.random.Generator) -> Clip:
    """EVA's connection degradation on one caller utterance (speech only, after noise)."""
    samples = clip.samples.astype(np.float64)
    out = np.empty_like(samples)
    for span in _chunks(samples.size, clip.rate, params.chunk_ms):
        out[span] = degrade_chunk(samples[span], clip.rate, params, rng)
    return _out(out, clip.rate)
