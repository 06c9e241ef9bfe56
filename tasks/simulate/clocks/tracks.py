"""The call's audio tracks, recorded tick by tick, and their WAV files."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

from perturbations.audio import Clip
from tasks.records import AudioRef
from tasks.voice.telephony import WIRE_RATE

CLEAN_RATE = 16000
CLEAN_FRAME = CLEAN_RATE // 50  # samples in one 20 ms frame


class CallTracks:
    """caller (as sent, 8 kHz), caller_clean (before the channel, 16 kHz), agent (as played)."""

    def __init__(self) -> None:
        self.caller: list[np.ndarray] = []
        self.caller_clean: list[np.ndarray] = []
        self.agent: list[np.ndarray] = []

    def add_tick(self, caller: np.ndarray, caller_clean: np.ndarray, agent: np.ndarray) -> None:
        self.caller.append(caller)
        self.caller_clean.append(caller_clean)
        self.agent.append(agent)

    @staticmethod
    def _join(chunks: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(chunks).astype(np.float32) if chunks else np.zeros(0, np.float32)

    def clips(self) -> dict[str, Clip]:
        caller, agent = self._join(self.caller), self._join(self.agent)
        n = max(caller.size, agent.size, 1)
        caller = np.pad(caller, (0, n - caller.size))
        agent = np.pad(agent, (0, n - agent.size))
        mixed = np.clip(caller + agent, -1.0, 1.0)
        clean = self._join(self.caller_clean)
        return {
            "caller": Clip(caller, WIRE_RATE),
            "caller_clean": Clip(clean if clean.size else np.zeros(1, np.float32), CLEAN_RATE),
            "agent": Clip(agent, WIRE_RATE),
            "mixed": Clip(mixed.astype(np.float32), WIRE_RATE),
        }


def write_wav(clip: Clip, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(clip.rate)
        out.writeframes(clip.to_int16().tobytes())


def save_tracks(tracks: CallTracks, directory: Path) -> list[AudioRef]:
    """Write the four WAVs (16-bit mono PCM) and describe them."""
    refs = []
    for name, clip in tracks.clips().items():
        path = directory / f"{name}.wav"
        write_wav(clip, path)
        refs.append(
            AudioRef(
                track=name,  # type: ignore[arg-type]
                path=str(path),
                sample_rate=clip.rate,
                duration_s=round(clip.duration_s, 3),
            )
        )
    return refs
