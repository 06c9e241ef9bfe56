"""The telephone channel: G.711 mu-law at 8 kHz in 20 ms frames (spec section 7.1).

``ulaw_encode``/``ulaw_decode`` are bit-exact with the classic G.711 reference code (the one
CPython's removed ``audioop`` used), written in numpy because ``audioop`` is gone in 3.13.
"""

from __future__ import annotations

import functools
from math import gcd

import numpy as np

from perturbations.audio import INT16_SCALE, AudioError, Clip

WIRE_RATE = 8000
FRAME_MS = 20
FRAME_BYTES = WIRE_RATE * FRAME_MS // 1000  # 160 bytes = 20 ms of 8 kHz mu-law
ULAW_SILENCE = 0xFF

_BIAS = 0x84
_CLIP = 32635
_SEG_UPPER_ENDS = np.array([0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF], dtype=np.int32)


def ulaw_encode(pcm: np.ndarray) -> np.ndarray:
    """int16 PCM -> uint8 mu-law codes (G.711, 14-bit magnitude path)."""
    pcm = np.asarray(pcm)
    if pcm.dtype != np.int16:
        raise AudioError(f"ulaw_encode expects int16 samples, got {pcm.dtype}")
    value = pcm.astype(np.int32) >> 2
    mask = np.where(value < 0, 0x7F, 0xFF)
    magnitude = np.minimum(np.abs(value), _CLIP) + (_BIAS >> 2)
    segment = np.searchsorted(_SEG_UPPER_ENDS, magnitude, side="left")
    code = (segment << 4) | ((magnitude >> (np.minimum(segment, 7) + 1)) & 0xF)
    code = np.where(segment >= 8, 0x7F, code)
    return (code ^ mask).astype(np.uint8)


def _decode_table() -> np.ndarray:
    codes = ~np.arange(256, dtype=np.int32) & 0xFF
    t = ((codes & 0x0F) << 3) + _BIAS
    t = t << ((codes & 0x70) >> 4)
    return np.where(codes & 0x80, _BIAS - t, t - _BIAS).astype(np.int16)


_DECODE = _decode_table()
# The float samples of each code, computed as Clip.from_int16 does (same float32 values).
_DECODE_FLOAT = (_DECODE.astype(np.float32) / INT16_SCALE).astype(np.float32)


def ulaw_decode(codes: bytes | np.ndarray) -> np.ndarray:
    """mu-law codes -> int16 PCM."""
    arr = np.frombuffer(codes, dtype=np.uint8) if isinstance(codes, bytes | bytearray) else codes
    arr = np.asarray(arr)
    if arr.dtype != np.uint8:
        raise AudioError(f"ulaw_decode expects bytes or uint8 codes, got {arr.dtype}")
    return _DECODE[arr]


@functools.lru_cache(maxsize=32)
def _lowpass(up: int, down: int) -> np.ndarray:
    """The filter ``resample_poly`` designs by default (Kaiser window, beta 5), designed
    once per ratio: designing it cost more than filtering a 20 ms frame. Passed back as
    ``window``, ``resample_poly`` copies it and scales it exactly as its own design."""
    from scipy.signal import firwin  # scipy.signal takes 0.6 s to import: only when resampling

    max_rate = max(up, down)
    taps = firwin(2 * 10 * max_rate + 1, 1.0 / max_rate, window=("kaiser", 5.0))
    taps.flags.writeable = False
    return taps


def resample(clip: Clip, rate: int) -> Clip:
    """Band-limited rate conversion (polyphase FIR with an anti-aliasing Kaiser window)."""
    if not isinstance(rate, int) or rate <= 0:
        raise AudioError(f"target sample rate must be a positive integer, got {rate!r}")
    if rate == clip.rate:
        return clip
    g = gcd(rate, clip.rate)
    up, down = rate // g, clip.rate // g
    from scipy.signal import resample_poly

    out = resample_poly(clip.samples.astype(np.float64), up, down, window=_lowpass(up, down))
    return Clip(np.clip(out, -1.0, 1.0).astype(np.float32), rate)


def to_wire(clip: Clip) -> bytes:
    """8 kHz mu-law bytes for ``clip`` (resampled first if needed)."""
    silent = _silent_wire(clip)
    if silent is not None:
        return silent
    return ulaw_encode(resample(clip, WIRE_RATE).to_int16()).tobytes()


def _silent_wire(clip: Clip) -> bytes | None:
    """Digital silence on the wire, or None if ``clip`` is not all zeros: what the full
    path gives (a filter of zeros is zeros, PCM 0 is code 0xFF) without filtering a quiet
    line's every 20 ms frame."""
    if clip.samples.any():
        return None
    g = gcd(WIRE_RATE, clip.rate)
    up, down = WIRE_RATE // g, clip.rate // g
    n = clip.samples.size * up
    return bytes([ULAW_SILENCE]) * (n // down + bool(n % down))


def from_wire(payload: bytes) -> Clip:
    """Decode 8 kHz mu-law bytes into a clip."""
    return Clip(wire_samples(payload), WIRE_RATE)


def wire_samples(payload: bytes) -> np.ndarray:
    """The float32 samples of 8 kHz mu-law bytes (``from_wire(payload).samples``, without
    a Clip's checks, which table-decoded codes always pass: for per-frame loops)."""
    if not isinstance(payload, bytes | bytearray) or len(payload) == 0:
        raise AudioError(f"mu-law payload must be non-empty bytes, got {type(payload).__name__}")
    return _DECODE_FLOAT[np.frombuffer(payload, dtype=np.uint8)]


def frames(payload: bytes, size: int = FRAME_BYTES, pad: bool = True) -> list[bytes]:
    """Cut a mu-law stream into frames; a short last frame is padded with mu-law silence
    (``pad=True``) or dropped."""
    if size <= 0:
        raise ValueError(f"frame size must be positive, got {size}")
    out = [payload[i : i + size] for i in range(0, len(payload), size)]
    if out and len(out[-1]) < size:
        if pad:
            out[-1] = out[-1] + bytes([ULAW_SILENCE]) * (size - len(out[-1]))
        else:
            out.pop()
    return out


def telephone_round_trip(clip: Clip, rate: int | None = None) -> Clip:
    """What the far end hears: ``clip`` through 8 kHz mu-law, back at ``rate`` (default:
    the clip's own rate)."""
    return resample(from_wire(to_wire(clip)), rate or clip.rate)
