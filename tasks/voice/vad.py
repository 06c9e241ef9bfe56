"""Energy-based voice activity detection on a stream of 20 ms frames.

Used on both directions of a call. A frame is speech when its level is above
``max(threshold_dbfs, noise_floor + margin_db)``. The noise floor follows quiet frames down
at once and creeps up slowly (``floor_rise_db_per_s``), so steady background noise stops
counting as speech after a few seconds while the short pauses between words keep the floor
low during speech. Speech starts after ``start_ms`` of speech frames and ends after
``hangover_ms`` without one; event times are stream times of the first/last speech frame,
not the (later) detection time. Digitally silent frames (below ``DIGITAL_SILENCE_DBFS``: a
lost packet, a muted chunk) are never speech and leave the floor where it is.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from perturbations.audio import AudioError, Clip

# Below any allowed threshold_dbfs: digital silence (zeroed frames), never the noise floor.
DIGITAL_SILENCE_DBFS = -90.0


def _frame_rms(frame: np.ndarray) -> float:
    """RMS by np.mean's own arithmetic (pairwise sum, one division), minus its overhead."""
    return math.sqrt(float(np.add.reduce(np.square(frame, dtype=np.float64))) / frame.size)


class VadConfig(BaseModel):
    """Tuning of ``EnergyVAD``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    frame_ms: int = Field(default=20, ge=5, le=100, description="Analysis frame length.")
    threshold_dbfs: float = Field(
        default=-45.0, ge=-90, le=0, description="Absolute level below which nothing is speech."
    )
    margin_db: float = Field(
        default=10.0, ge=0, le=40, description="Speech must exceed the noise floor by this."
    )
    floor_rise_db_per_s: float = Field(
        default=6.0, gt=0, le=100, description="How fast the noise floor may rise."
    )
    start_ms: int = Field(default=60, ge=0, le=1000, description="Speech needed to start.")
    hangover_ms: int = Field(default=300, ge=0, le=5000, description="Silence needed to end.")


class VadEvent(BaseModel):
    """Speech started or ended, at a time on the stream's own clock."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["speech_start", "speech_end"] = Field(description="Which transition.")
    time_s: float = Field(description="Start of the first / end of the last speech frame.")
    detected_at_s: float = Field(description="Stream time at which the event was decided.")


class EnergyVAD:
    """Streaming detector; feed it consecutive clips (any length, one sample rate).

    Not thread-safe: one instance per audio direction.
    """

    def __init__(self, config: VadConfig | None = None) -> None:
        self.config = config or VadConfig()
        self._rate: int | None = None
        self._pending = np.zeros(0, dtype=np.float32)
        self._frame_index = 0
        self._floor_db: float | None = None
        self._in_speech = False
        self._run_start = -1  # first frame of the current run of speech frames
        self._last_speech = -1  # last speech frame seen
        self.levels_db: list[float] = []

    @property
    def in_speech(self) -> bool:
        return self._in_speech

    @property
    def last_speech_s(self) -> float:
        """Stream time at which the last speech frame seen ended (0 before any)."""
        return (self._last_speech + 1) * self.config.frame_ms / 1000

    def _frame_len(self) -> int:
        assert self._rate is not None
        return self._rate * self.config.frame_ms // 1000

    def process(self, chunk: Clip) -> list[VadEvent]:
        """Consume audio; return the events it completes."""
        return self.process_samples(chunk.samples, chunk.rate)

    def process_samples(self, samples: np.ndarray, rate: int) -> list[VadEvent]:
        """:meth:`process` on float32 samples already checked (a call's 20 ms frames,
        which would otherwise pay a Clip's checks once per frame)."""
        if self._rate is None:
            self._rate = rate
        elif rate != self._rate:
            raise AudioError(f"EnergyVAD got {rate} Hz after {self._rate} Hz audio")
        n = self._frame_len()
        if self._pending.size == 0 and samples.size == n:
            return self._step(samples)  # the per-tick case: one whole frame
        self._pending = np.concatenate([self._pending, samples])
        events: list[VadEvent] = []
        while self._pending.size >= n:
            frame, self._pending = self._pending[:n], self._pending[n:]
            events.extend(self._step(frame))
        return events

    def flush(self) -> list[VadEvent]:
        """End of stream: close an open utterance at its last speech frame."""
        if not self._in_speech:
            return []
        self._in_speech = False
        return [self._event("speech_end", self._last_speech + 1)]

    def _event(self, kind: Literal["speech_start", "speech_end"], frame: int) -> VadEvent:
        frame_s = self.config.frame_ms / 1000
        return VadEvent(
            kind=kind,
            time_s=round(frame * frame_s, 6),
            detected_at_s=round((self._frame_index + 1) * frame_s, 6),
        )

    def _is_speech(self, level_db: float) -> bool:
        cfg = self.config
        if self._floor_db is None:
            self._floor_db = level_db  # streams start with the line open, not mid-word
        if level_db < DIGITAL_SILENCE_DBFS:
            # A lost packet or a muted chunk is no measure of the room's noise: were the floor
            # to follow it down, it would take (floor - level) / rise seconds to climb back,
            # and steady noise would count as speech all that time.
            return False
        threshold = max(cfg.threshold_dbfs, self._floor_db + cfg.margin_db)
        rise = cfg.floor_rise_db_per_s * cfg.frame_ms / 1000
        self._floor_db = min(level_db, self._floor_db + rise)
        return level_db > threshold

    def _step(self, frame: np.ndarray) -> list[VadEvent]:
        rms = _frame_rms(frame)
        level_db = 20 * np.log10(max(rms, 1e-9))
        self.levels_db.append(level_db)
        cfg = self.config
        i = self._frame_index
        events: list[VadEvent] = []
        if self._is_speech(level_db):
            if self._run_start < 0 or self._last_speech != i - 1:
                self._run_start = i if not self._in_speech else self._run_start
            self._last_speech = i
            run_ms = (i - self._run_start + 1) * cfg.frame_ms
            if not self._in_speech and run_ms >= max(cfg.start_ms, cfg.frame_ms):
                self._in_speech = True
                events.append(self._event("speech_start", self._run_start))
        else:
            if not self._in_speech:
                self._run_start = -1
            elif (i - self._last_speech) * cfg.frame_ms >= cfg.hangover_ms:
                self._in_speech = False
                self._run_start = -1
                events.append(self._event("speech_end", self._last_speech + 1))
        self._frame_index += 1
        return events


def speech_segments(clip: Clip, config: VadConfig | None = None) -> list[tuple[float, float]]:
    """(start_s, end_s) of each utterance in ``clip``."""
    vad = EnergyVAD(config)
    events = vad.process(clip) + vad.flush()
    segments: list[tuple[float, float]] = []
    start: float | None = None
    for event in events:
        if event.kind == "speech_start":
            start = event.time_s
        elif start is not None:
            segments.append((start, event.time_s))
            start = None
    return segments
