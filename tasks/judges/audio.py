"""Audio helpers of the speech-fidelity judges: WAV I/O, silence trimming, per-turn cuts.

Silence trimming follows spec 4.7: a stretch is silent when a 3000 ms window scanned in
50 ms steps stays below -90 dBFS; each non-silent range is padded by 100 ms, ranges are
joined with 3000 ms of silence and 500 ms of silence is appended. No speech => untrimmed.
"""

from __future__ import annotations

import base64
import io
import wave
from pathlib import Path

import numpy as np

SILENCE_DBFS = -90.0
MIN_SILENCE_MS = 3000
SCAN_STEP_MS = 50
PAD_MS = 100
JOIN_MS = 3000
TAIL_MS = 500


class AudioReadError(ValueError):
    """A track could not be read; the message names the file and the problem."""


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    """Mono float32 samples in [-1, 1] and the sample rate of a PCM WAV file."""
    try:
        with wave.open(str(path), "rb") as wav:
            rate, width, channels = wav.getframerate(), wav.getsampwidth(), wav.getnchannels()
            frames = wav.readframes(wav.getnframes())
    except FileNotFoundError:
        raise AudioReadError(f"{path}: audio file not found") from None
    except (wave.Error, EOFError) as exc:
        return _read_other(path, exc)
    if width != 2:
        return _read_other(path, ValueError(f"{8 * width}-bit PCM"))
    samples = np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1)
    return samples, rate


def _read_other(path: Path, cause: Exception) -> tuple[np.ndarray, int]:
    # Float or 24-bit WAVs are not readable by the stdlib; soundfile handles them.
    try:
        import soundfile

        data, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    except Exception as exc:  # noqa: BLE001 - report both causes
        raise AudioReadError(f"{path}: cannot read audio ({cause}; {exc})") from exc
    return data.mean(axis=1).astype(np.float32), int(rate)


def wav_bytes(samples: np.ndarray, rate: int) -> bytes:
    """16-bit mono PCM WAV bytes of float samples."""
    pcm = np.clip(np.nan_to_num(samples), -1.0, 1.0)
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes((pcm * 32767.0).astype("<i2").tobytes())
    return buffer.getvalue()


def wav_base64(samples: np.ndarray, rate: int) -> str:
    return base64.b64encode(wav_bytes(samples, rate)).decode("ascii")


def nonsilent_ranges(samples: np.ndarray, rate: int) -> list[tuple[int, int]]:
    """Sample ranges that are not part of a >= 3 s stretch below -90 dBFS."""
    n = len(samples)
    window = int(rate * MIN_SILENCE_MS / 1000)
    step = max(1, int(rate * SCAN_STEP_MS / 1000))
    if n == 0:
        return []
    if n < window:
        return [] if _dbfs(samples) < SILENCE_DBFS else [(0, n)]
    squares = np.concatenate([[0.0], np.cumsum(samples.astype(np.float64) ** 2)])
    silent = np.zeros(n, dtype=bool)
    starts = list(range(0, n - window + 1, step))
    if starts[-1] != n - window:
        # The track's last window too (as pydub's detect_silence, the reference's scanner,
        # adds it): else a silent tail shorter than a step stays "speech" and costs a join.
        starts.append(n - window)
    for start in starts:
        energy = (squares[start + window] - squares[start]) / window
        if _to_db(energy) < SILENCE_DBFS:
            silent[start : start + window] = True
    return _runs(~silent)


def _dbfs(samples: np.ndarray) -> float:
    return _to_db(float(np.mean(samples.astype(np.float64) ** 2)))


def _to_db(mean_square: float) -> float:
    return -np.inf if mean_square <= 0 else 10.0 * np.log10(mean_square)


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def trim_silence(samples: np.ndarray, rate: int) -> tuple[np.ndarray, bool]:
    """Long silences cut out (spec 4.7); returns (audio, trimmed?)."""
    ranges = nonsilent_ranges(samples, rate)
    if not ranges:
        return samples, False
    pad = int(rate * PAD_MS / 1000)
    gap = np.zeros(int(rate * JOIN_MS / 1000), dtype=np.float32)
    pieces: list[np.ndarray] = []
    for i, (a, b) in enumerate(ranges):
        if i:
            pieces.append(gap)
        pieces.append(samples[max(0, a - pad) : min(len(samples), b + pad)])
    pieces.append(np.zeros(int(rate * TAIL_MS / 1000), dtype=np.float32))
    return np.concatenate(pieces).astype(np.float32), True


def cut_segments(
    samples: np.ndarray, rate: int, segments: list[tuple[float, float]], pad_s: float = 0.15
) -> np.ndarray:
    """The audio of one turn: its segments (call-time seconds) padded and concatenated."""
    pieces = []
    for start, end in segments:
        a = max(0, int((start - pad_s) * rate))
        b = min(len(samples), int((end + pad_s) * rate))
        if b > a:
            pieces.append(samples[a:b])
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float32)
