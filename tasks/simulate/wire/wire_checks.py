"""Checks on what an agent sends over a real-time call, beyond message syntax.

The protocol parser (:mod:`tasks.simulate.wire.protocol`) rejects malformed frames. Two faults
pass it and only show in the audio itself:

* **wrong audio format**: linear PCM sent where 8 kHz mu-law is required decodes to a
  sustained, very loud, full-band signal (PCM silence ``0x0000`` even decodes to a
  full-scale DC level). Real speech on a phone line averages about -20 dBFS with most of
  its energy at low frequencies, so a window that is both far louder and noise-like
  cannot be mu-law speech;
* **flooding**: audio sent far faster than it can be played. A phone network buffers a
  burst (a whole synthesized reply at once is fine) but not minutes of it.

Also here: the optional ``agent_timing`` diagnostic event, read before strict parsing so
agents may report their own processing time (docs/agent-protocol.md).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from tasks.voice.telephony import WIRE_RATE, ulaw_decode

FORMAT_WINDOW = WIRE_RATE // 2  # 0.5 s of audio per check
LOUD_NOISE_DBFS = -14.0  # louder than this *and* noise-like: not mu-law speech
ANY_SIGNAL_DBFS = -6.0  # louder than this on average: not mu-law speech at all
NOISE_LIKE_RATIO = 1.2  # energy of the first difference / energy (white noise: 2, speech <1)
MAX_AHEAD_S = 60.0  # audio the harness buffers ahead of real time before it calls a flood
TIMING_EVENT = "agent_timing"


def window_problem(samples: np.ndarray) -> str | None:
    """Why a window of decoded agent audio (floats in [-1, 1]) cannot be mu-law speech."""
    x = samples.astype(np.float64)
    energy = float(np.mean(x**2))
    level = 10 * np.log10(energy + 1e-12)
    ratio = float(np.mean(np.diff(x) ** 2)) / (energy + 1e-12)
    if level > ANY_SIGNAL_DBFS or (level > LOUD_NOISE_DBFS and ratio > NOISE_LIKE_RATIO):
        return (
            f"agent audio is not 8 kHz mu-law: {len(x) / WIRE_RATE:.1f} s at {level:.1f} dBFS, "
            f"spectral flatness ratio {ratio:.2f} (linear PCM sent as mu-law?)"
        )
    return None


class AudioFormatMonitor:
    """Feeds on the agent's payloads and reports the first window that fails the check."""

    def __init__(self, window: int = FORMAT_WINDOW) -> None:
        self.window = window
        self._pending = bytearray()

    def feed(self, payload: bytes) -> str | None:
        self._pending.extend(payload)
        while len(self._pending) >= self.window:
            chunk = bytes(self._pending[: self.window])
            del self._pending[: self.window]
            problem = window_problem(ulaw_decode(chunk).astype(np.float64) / 32768.0)
            if problem:
                return problem
        return None


def flood_problem(buffered_frames: int, frame_s: float) -> str | None:
    ahead = buffered_frames * frame_s
    if ahead > MAX_AHEAD_S:
        return (
            f"agent sent {ahead:.0f} s of audio ahead of real time (limit {MAX_AHEAD_S:.0f} s): "
            "audio must be paced, or at least not flooded"
        )
    return None


def timing_event(raw: Any) -> dict[str, Any] | None:
    """The body of an ``agent_timing`` event, or None for any other frame."""
    if not isinstance(raw, str) or TIMING_EVENT not in raw[:200]:
        return None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or data.get("event") != TIMING_EVENT:
        return None
    return {k: v for k, v in data.items() if k not in ("event", "streamSid")}
