"""perturbations.audio: the Clip value type and VoiceSpec."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from perturbations.audio import AudioError, Clip, VoiceSpec


@pytest.mark.parametrize(
    ("samples", "rate", "message"),
    [
        (np.zeros(0, np.float32), 16000, "empty"),
        (np.array([0.0, np.nan], np.float32), 16000, "NaN"),
        (np.array([0.0, np.inf], np.float32), 16000, "NaN/inf"),
        (np.zeros((100, 2), np.float32), 16000, "mono"),
        (np.zeros(100, np.int16), 16000, "float32.*from_int16"),
        (np.zeros(100, np.float64), 16000, "float32"),
        (np.zeros(100, np.float32), 0, "positive"),
        (np.zeros(100, np.float32), -8000, "positive"),
        (np.zeros(100, np.float32), 8000.0, "positive integer"),
        (np.full(100, 1.5, np.float32), 16000, r"\[-1, 1\]"),
        ([0.0, 0.1], 16000, "numpy array"),
    ],
)
def test_bad_audio_is_rejected_with_a_clear_message(samples, rate, message) -> None:
    with pytest.raises(AudioError, match=message):
        Clip(samples, rate)


def test_int16_round_trip_is_exact() -> None:
    pcm = np.arange(-32768, 32768, 7, dtype=np.int16)
    clip = Clip.from_int16(pcm, 8000)
    assert clip.samples.dtype == np.float32
    assert np.array_equal(clip.to_int16(), pcm)


def test_clip_is_immutable() -> None:
    clip = Clip.silence(0.1, 8000)
    with pytest.raises(ValueError):
        clip.samples[0] = 0.5
    with pytest.raises(AttributeError):
        clip.rate = 16000  # type: ignore[misc]


def test_silence_concat_duration_and_levels() -> None:
    tone = np.sin(np.linspace(0, 200 * np.pi, 8000)).astype(np.float32) * 0.5
    clip = Clip.concat(Clip.silence(0.5, 8000), Clip(tone, 8000))
    assert clip.duration_s == pytest.approx(1.5)
    assert clip.slice_s(0.5, 1.5).dbfs() == pytest.approx(20 * np.log10(0.5 / np.sqrt(2)), abs=0.1)
    assert Clip.silence(0.2, 8000).dbfs() == float("-inf")
    with pytest.raises(AudioError, match="one sample rate"):
        Clip.concat(Clip.silence(0.1, 8000), Clip.silence(0.1, 16000))
    with pytest.raises(AudioError, match="no samples"):
        Clip.silence(0.0, 8000)


def test_expect_rate_names_both_rates() -> None:
    with pytest.raises(AudioError, match="expects 16000 Hz audio, got 8000 Hz"):
        Clip.silence(0.1, 8000).expect_rate(16000, "the decoder")


def test_from_float_can_saturate() -> None:
    clip = Clip.from_float(np.array([2.0, -3.0, 0.5]), 8000, clip=True)
    assert clip.samples.tolist() == [1.0, -1.0, 0.5]
    with pytest.raises(AudioError):
        Clip.from_float(np.array([2.0]), 8000)


def test_voice_spec_is_frozen_and_bounded() -> None:
    voice = VoiceSpec(voice="en-gb+klatt3", rate_wpm=150)
    with pytest.raises(ValidationError):
        voice.rate_wpm = 100  # type: ignore[misc]
    with pytest.raises(ValidationError, match="rate_wpm"):
        VoiceSpec(rate_wpm=10)
    with pytest.raises(ValidationError, match="pitch"):
        VoiceSpec(pitch=120)
