"""perturbations.connection: each degradation does what it says, bounded and seeded."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from perturbations.audio import Clip
from perturbations.connection import (
    BandLimitParams,
    ClippingParams,
    CodecParams,
    ConnectionParams,
    GainParams,
    JitterParams,
    PacketLossParams,
    apply_band_limit,
    apply_clipping,
    apply_connection,
    apply_gain,
    apply_jitter_dropouts,
    apply_low_bitrate_codec,
    apply_packet_loss,
)
from perturbations.seeding import make_rng

RATE = 16000


@pytest.fixture(scope="module")
def noise_clip() -> Clip:
    return Clip((np.random.default_rng(0).standard_normal(4 * RATE) * 0.1).astype(np.float32), RATE)


def _band_power(clip: Clip, low: float, high: float) -> float:
    power = np.abs(np.fft.rfft(clip.samples)) ** 2
    freqs = np.fft.rfftfreq(clip.n_samples, 1 / clip.rate)
    return float(power[(freqs >= low) & (freqs < high)].sum())


def test_packet_loss_rate_and_zero_concealment(noise_clip: Clip) -> None:
    params = PacketLossParams(loss_rate=0.2, mean_burst=2, concealment="zero")
    out = apply_packet_loss(noise_clip, params, make_rng(1))
    frames = out.samples.reshape(-1, RATE // 50)
    lost = np.mean(np.all(frames == 0, axis=1))
    assert 0.1 < lost < 0.3


def test_repeat_concealment_fills_lost_frames(noise_clip: Clip) -> None:
    params = PacketLossParams(loss_rate=0.2, concealment="repeat")
    out = apply_packet_loss(noise_clip, params, make_rng(1))
    changed = np.any(out.samples.reshape(-1, 320) != noise_clip.samples.reshape(-1, 320), axis=1)
    assert changed.any()
    silent = np.all(out.samples.reshape(-1, 320) == 0, axis=1)
    assert silent.mean() < 0.02  # lost packets are filled, not silenced


def test_jitter_dropouts_make_silent_gaps(noise_clip: Clip) -> None:
    out = apply_jitter_dropouts(noise_clip, JitterParams(dropouts_per_s=2.0), make_rng(2))
    assert 0 < np.mean(out.samples == 0) < 0.5


def test_band_limit_removes_out_of_band_energy(noise_clip: Clip) -> None:
    out = apply_band_limit(noise_clip, BandLimitParams(), make_rng(0))
    assert _band_power(out, 5000, 8000) < 0.01 * _band_power(noise_clip, 5000, 8000)
    assert _band_power(out, 800, 2500) > 0.5 * _band_power(noise_clip, 800, 2500)


def test_band_limit_rejects_an_empty_band() -> None:
    with pytest.raises(ValueError, match="empty"):
        apply_band_limit(Clip.silence(0.1, 4000), BandLimitParams(low_hz=1990), make_rng(0))


def test_low_bitrate_codec_loses_detail(noise_clip: Clip) -> None:
    out = apply_low_bitrate_codec(noise_clip, CodecParams(bitrate_kbps=8), make_rng(0))
    again = apply_low_bitrate_codec(noise_clip, CodecParams(bitrate_kbps=8), make_rng(5))
    assert out.n_samples == noise_clip.n_samples
    assert out.same_as(again)  # the codec itself is deterministic
    assert _band_power(out, 4000, 8000) < 0.2 * _band_power(noise_clip, 4000, 8000)


def test_clipping_saturates_but_keeps_the_peak(noise_clip: Clip) -> None:
    out = apply_clipping(noise_clip, ClippingParams(ceiling=0.2), make_rng(0))
    peak = np.abs(noise_clip.samples).max()
    assert np.abs(out.samples).max() == pytest.approx(peak, rel=1e-5)
    assert np.mean(np.abs(out.samples) >= peak * 0.999) > 0.05  # many samples flattened


def test_gain_draws_within_bounds(noise_clip: Clip) -> None:
    for seed in range(5):
        out = apply_gain(noise_clip, GainParams(min_gain=0.5, max_gain=1.2), make_rng(seed))
        ratio = out.rms() / noise_clip.rms()
        assert 0.5 - 1e-6 <= ratio <= 1.2 + 1e-6


@pytest.mark.parametrize(
    ("model", "kwargs"),
    [
        (PacketLossParams, {"loss_rate": 0.9}),
        (JitterParams, {"min_ms": 200, "max_ms": 100}),
        (GainParams, {"min_gain": 2, "max_gain": 1}),
        (CodecParams, {"bitrate_kbps": 2}),
        (ClippingParams, {"ceiling": 0}),
        (ConnectionParams, {"packet_loss": {"loss": 0.1}}),
    ],
)
def test_params_are_bounded(model, kwargs) -> None:
    with pytest.raises(ValidationError):
        model(**kwargs)


def test_connection_is_deterministic_in_the_seed(noise_clip: Clip) -> None:
    params = ConnectionParams(clipping=ClippingParams())
    a = apply_connection(noise_clip, params, make_rng("x"))
    b = apply_connection(noise_clip, params, make_rng("x"))
    c = apply_connection(noise_clip, params, make_rng("y"))
    assert a.same_as(b) and not a.same_as(c)
