"""tasks.voice.vad: speech start/stop on synthetic speech and silence."""

from __future__ import annotations

import numpy as np
import pytest

from perturbations.audio import AudioError, Clip
from tasks.voice.vad import EnergyVAD, VadConfig, speech_segments

RATE = 16000


def _speechlike(seconds: float, rng: np.random.Generator) -> np.ndarray:
    """Voiced syllables (harmonics, 5 per second, with short gaps) at about -20 dBFS."""
    t = np.arange(int(seconds * RATE)) / RATE
    f0 = 120 + 20 * rng.random()
    voiced = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 8))
    envelope = np.clip(np.abs(np.sin(np.pi * 5 * t)) * 1.5, 0, 1)
    return 0.08 * voiced * envelope


def _call(rng: np.random.Generator, noise_dbfs: float | None = None) -> Clip:
    silence = np.zeros(RATE)
    parts = [silence, _speechlike(1.5, rng), silence, _speechlike(0.8, rng), silence]
    samples = np.concatenate(parts)
    if noise_dbfs is not None:
        samples = samples + rng.standard_normal(samples.size) * 10 ** (noise_dbfs / 20)
    return Clip(np.clip(samples, -1, 1).astype(np.float32), RATE)


@pytest.mark.parametrize("noise_dbfs", [None, -60.0, -45.0])
def test_segments_match_the_speech(noise_dbfs) -> None:
    segments = speech_segments(_call(np.random.default_rng(0), noise_dbfs))
    assert len(segments) == 2
    (s1, e1), (s2, e2) = segments
    assert s1 == pytest.approx(1.0, abs=0.1) and e1 == pytest.approx(2.5, abs=0.1)
    assert s2 == pytest.approx(3.5, abs=0.1) and e2 == pytest.approx(4.3, abs=0.1)


def test_streaming_in_frames_gives_the_same_events_with_detection_delay() -> None:
    clip = _call(np.random.default_rng(1))
    vad = EnergyVAD(VadConfig(hangover_ms=300))
    events = []
    for start in range(0, clip.n_samples, 320):
        events += vad.process(Clip(clip.samples[start : start + 320].copy(), RATE))
    events += vad.flush()
    kinds = [e.kind for e in events]
    assert kinds == ["speech_start", "speech_end", "speech_start", "speech_end"]
    end = events[1]
    assert end.detected_at_s - end.time_s == pytest.approx(0.3, abs=0.03)  # the hangover
    assert all(e.detected_at_s >= e.time_s for e in events)


def test_short_clicks_are_not_speech() -> None:
    samples = np.zeros(RATE)
    samples[8000:8100] = 0.5  # a 6 ms click
    assert speech_segments(Clip(samples.astype(np.float32), RATE)) == []


def test_steady_noise_stops_counting_as_speech() -> None:
    rng = np.random.default_rng(2)
    noise = rng.standard_normal(8 * RATE) * 0.02  # about -34 dBFS, switched on at 1 s
    noise[:RATE] *= 0.01
    segments = speech_segments(Clip(noise.astype(np.float32), RATE))
    assert all(end < 8.0 for _, end in segments)  # the floor catches up before the end


def test_rate_change_mid_stream_is_an_error() -> None:
    vad = EnergyVAD()
    vad.process(Clip.silence(0.1, RATE))
    with pytest.raises(AudioError, match="8000 Hz after 16000 Hz"):
        vad.process(Clip.silence(0.1, 8000))


def test_lost_packets_in_steady_noise_do_not_hold_the_floor_down() -> None:
    """Zeroed 20 ms segments (packet loss, EVA's connection degradation) used to pull the
    floor to -180 dB, after which -36 dBFS line noise counted as speech for 20 s: a caller's
    turn never ended. Digital silence is now no measure of the floor."""
    rng = np.random.default_rng(3)
    samples = _call(rng, noise_dbfs=-36.0).samples.copy()
    frame = RATE // 50
    # One lost frame in 33 (3%), after the line opened (EVA degrades speech chunks only).
    for start in range(frame * 10, samples.size - frame, frame * 33):
        samples[start : start + frame] = 0
    segments = speech_segments(Clip(samples, RATE))
    assert segments and segments[0][1] < 3.0, segments  # the first utterance ends (at 2.5 s)
