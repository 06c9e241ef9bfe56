"""perturbations.noise: sources, SNR mixing, ambient level, noise files."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.io import wavfile

from perturbations.audio import AudioError, Clip
from perturbations.noise import (
    NOISE_GENERATORS,
    REFERENCE_SPEECH_RMS,
    NoiseParams,
    ambient_clip,
    apply_background_noise,
    load_noise,
    noise_names,
    speech_level,
)
from perturbations.seeding import make_rng

RATE = 16000
GENERATED = ["white", "pink", "brown", "cafe", "street"]


@pytest.fixture(scope="module")
def speechlike() -> Clip:
    """Syllable-modulated tone bursts with pauses, at about -20 dBFS."""
    t = np.arange(2 * RATE) / RATE
    carrier = np.sin(2 * np.pi * 220 * t) + 0.5 * np.sin(2 * np.pi * 660 * t)
    envelope = (np.sin(2 * np.pi * 3 * t) > 0).astype(float)
    envelope[RATE // 2 : RATE] = 0  # a pause must not lower the speech level
    return Clip((0.1 * carrier * envelope).astype(np.float32), RATE)


@pytest.mark.parametrize("source", GENERATED)
def test_generated_noise_mixes_at_the_target_snr(speechlike: Clip, source: str) -> None:
    for snr in (20.0, 5.0):
        mixed = apply_background_noise(
            speechlike, NoiseParams(source=source, snr_db=snr), make_rng(1)
        )
        noise = mixed.samples.astype(np.float64) - speechlike.samples
        level = speech_level(speechlike)
        assert level is not None
        measured = 20 * np.log10(level / np.sqrt(np.mean(noise**2)))
        assert measured == pytest.approx(snr, abs=0.5), source


@pytest.mark.parametrize("source", GENERATED)
def test_generators_are_seeded_and_unit_rms(source: str) -> None:
    a = NOISE_GENERATORS.get(source)(3.0, RATE, make_rng(7))
    b = NOISE_GENERATORS.get(source)(3.0, RATE, make_rng(7))
    c = NOISE_GENERATORS.get(source)(3.0, RATE, make_rng(8))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert a.size == 3 * RATE
    assert np.sqrt(np.mean(a**2)) == pytest.approx(1.0, rel=1e-6)


def test_colored_noise_spectra_tilt_as_named() -> None:
    def low_high_ratio(x: np.ndarray) -> float:
        power = np.abs(np.fft.rfft(x)) ** 2
        freqs = np.fft.rfftfreq(x.size, 1 / RATE)
        return power[(freqs > 100) & (freqs < 500)].mean() / power[freqs > 4000].mean()

    ratios = [
        low_high_ratio(NOISE_GENERATORS.get(s)(4.0, RATE, make_rng(0))) for s in GENERATED[:3]
    ]
    assert ratios[0] < 2 < ratios[1] < ratios[2]  # white flat, pink tilted, brown more


def test_ambient_level_follows_the_reference(speechlike: Clip) -> None:
    noise = load_noise("white", 2.0, RATE, make_rng(0))
    amb = ambient_clip(noise, RATE, snr_db=15.0)
    assert amb.rms() == pytest.approx(REFERENCE_SPEECH_RMS * 10 ** (-15 / 20), rel=0.01)


def test_noise_files_from_a_directory(tmp_path, speechlike: Clip) -> None:
    tone = (np.sin(np.arange(22050) / 22050 * 2 * np.pi * 100) * 8000).astype(np.int16)
    wavfile.write(tmp_path / "hum.wav", 22050, np.stack([tone, tone], axis=1))  # stereo 22 kHz
    assert "hum" in noise_names(tmp_path)
    mixed = apply_background_noise(
        speechlike, NoiseParams(source="hum", snr_db=10), make_rng(0), tmp_path
    )
    assert mixed.rate == RATE and mixed.n_samples == speechlike.n_samples


def test_reference_noise_recordings(eva_root, speechlike: Clip) -> None:
    noise_dir = eva_root / "assets" / "noise"
    for name in noise_names(noise_dir):
        if (noise_dir / f"{name}.wav").exists():
            params = NoiseParams(source=name, snr_db=10)
            mixed = apply_background_noise(speechlike, params, make_rng(3), noise_dir)
            assert not mixed.same_as(speechlike)


def test_unknown_source_lists_valid_names(tmp_path) -> None:
    with pytest.raises(AudioError, match="unknown noise source 'jungle'.*white"):
        load_noise("jungle", 1.0, RATE, make_rng(0), tmp_path)


def test_unreadable_noise_file_is_named(tmp_path) -> None:
    (tmp_path / "broken.wav").write_bytes(b"not a wav")
    with pytest.raises(AudioError, match="broken.wav"):
        load_noise("broken", 1.0, RATE, make_rng(0), tmp_path)
