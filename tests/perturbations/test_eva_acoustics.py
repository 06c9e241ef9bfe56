"""perturbations.eva_acoustics: EVA's noise and connection rules (spec 8.2) by name."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.io import wavfile

from perturbations import CONDITIONS, Clip, ConditionSpec, make_channel
from perturbations.audio import AudioError
from perturbations.conditions import combine
from perturbations.eva_acoustics import (
    STATIC,
    EvaConnectionParams,
    EvaNoiseParams,
    _loop,
    degrade_chunk,
    eva_ambient,
    eva_connection,
    eva_noise,
    mix_chunk,
    mulaw_decode,
    mulaw_encode,
    static_chunk,
)
from perturbations.noise import REFERENCE_SPEECH_RMS
from perturbations.seeding import make_rng

RATE = 16000


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x.astype(np.float64)))))


def speech_like(seconds: float = 1.0, seed: int = 0) -> Clip:
    """A voiced tone with a syllable-rate envelope (RMS varies from chunk to chunk)."""
    t = np.arange(round(seconds * RATE)) / RATE
    rng = np.random.default_rng(seed)
    env = 0.2 + 0.8 * np.abs(np.sin(2 * np.pi * 3 * t))
    x = 0.2 * env * np.sin(2 * np.pi * 180 * t) + 0.01 * rng.standard_normal(t.size)
    return Clip(x.astype(np.float32), RATE)


@pytest.mark.parametrize("snr_db", [15.0, 5.0, 30.0])
def test_mixed_chunk_has_the_target_snr(snr_db: float) -> None:
    speech = speech_like(0.1).samples.astype(np.float64)
    noise = np.random.default_rng(1).standard_normal(speech.size) * 7.0
    added = mix_chunk(speech, noise, snr_db) - speech
    measured = 20 * np.log10(rms(speech) / rms(added))
    assert abs(measured - snr_db) < 0.1


def test_static_sigma_follows_the_chunk_and_the_reference_when_silent() -> None:
    speech = speech_like(2.0).samples.astype(np.float64)
    added = static_chunk(speech, 15.0, np.random.default_rng(2)) - speech
    assert abs(20 * np.log10(rms(speech) / rms(added)) - 15.0) < 0.1
    silent = static_chunk(np.zeros(32000), 15.0, np.random.default_rng(3))
    assert rms(silent) == pytest.approx(REFERENCE_SPEECH_RMS * 10 ** (-15 / 20), rel=0.02)


def test_a_silent_noise_chunk_leaves_speech_unchanged() -> None:
    speech = speech_like(0.1).samples.astype(np.float64)
    assert np.array_equal(mix_chunk(speech, np.zeros(speech.size), 15.0), speech)


def test_utterance_snr_holds_per_chunk_over_a_generated_source() -> None:
    clip = speech_like(1.0)
    params = EvaNoiseParams(source="cafe", snr_db=15.0, chunk_ms=100)
    out = eva_noise(clip, params, make_rng(7, "eva_noise", "utterance", 0))
    added = out.samples.astype(np.float64) - clip.samples
    for i in range(0, clip.n_samples, 1600):
        span = slice(i, i + 1600)
        snr = 20 * np.log10(rms(clip.samples[span]) / rms(added[span]))
        assert abs(snr - 15.0) < 0.1


@pytest.mark.parametrize("source", [STATIC, "cafe"])
def test_ambient_frames_have_the_target_rms(source: str) -> None:
    params = EvaNoiseParams(source=source, snr_db=15.0)
    target = REFERENCE_SPEECH_RMS * 10 ** (-15 / 20)
    frames = eva_ambient(RATE, RATE, params, make_rng(1, "gap", 0), 0).samples
    per_frame = [rms(frames[i : i + 320]) for i in range(0, frames.size, 320)]
    # Recording-like sources: every 20 ms frame at the target; static: Gaussian, sigma = target.
    tolerance = 0.3 if source == STATIC else 1e-3
    assert all(abs(r / target - 1) < tolerance for r in per_frame)
    assert rms(frames) == pytest.approx(target, rel=0.02)


def test_ambient_continues_through_a_gap_and_differs_between_gaps() -> None:
    params = EvaNoiseParams(source="cafe")
    whole = eva_ambient(640, RATE, params, make_rng(1, "gap", 0), 0).samples
    first = eva_ambient(320, RATE, params, make_rng(1, "gap", 0), 0).samples
    second = eva_ambient(320, RATE, params, make_rng(1, "gap", 0), 320).samples
    assert np.array_equal(np.concatenate([first, second]), whole)
    other = eva_ambient(640, RATE, params, make_rng(1, "gap", 1), 0).samples
    assert not np.array_equal(whole, other)


def test_mulaw_matches_g711_and_stays_within_its_error_bound() -> None:
    pcm = np.arange(-32768, 32768).astype(np.int16)
    decoded = mulaw_decode(mulaw_encode(pcm)).astype(np.int64)
    in_range = np.abs(pcm.astype(np.int64)) <= 32124  # the largest mu-law value
    err = np.abs(decoded - pcm)[in_range]
    # 4-bit mantissa: half a step is at most 1/32 of the value, plus the 14-bit truncation.
    assert np.all(err <= 8 + np.abs(pcm[in_range].astype(np.int64)) / 32)
    assert len(np.unique(mulaw_encode(pcm))) == 255  # 0x7F and 0xFF both decode to 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        audioop = pytest.importorskip("audioop")  # CPython's G.711, gone in 3.13
    assert mulaw_encode(pcm).tobytes() == audioop.lin2ulaw(pcm.tobytes(), 2)
    codes = np.arange(256, dtype=np.uint8)
    assert mulaw_decode(codes).tobytes() == audioop.ulaw2lin(codes.tobytes(), 2)


def test_packet_loss_zeroes_whole_segments_at_three_percent() -> None:
    params = EvaConnectionParams(mulaw=False, min_gain=1.0, max_gain=1.0, chunk_ms=2000)
    chunk = np.full(320 * 20000, 0.25)  # 20000 segments of 20 ms
    out = degrade_chunk(chunk, RATE, params, np.random.default_rng(4)).reshape(-1, 320)
    lost = np.all(out == 0, axis=1)
    assert np.all(out[~lost] == 0.25)  # survivors untouched, losses exactly zero
    assert lost.mean() == pytest.approx(0.03, abs=0.004)


def test_gain_is_drawn_per_chunk_within_the_range() -> None:
    params = EvaConnectionParams(mulaw=False, loss_rate=0.0, chunk_ms=100)
    clip = Clip(np.full(RATE * 20, 0.5, dtype=np.float32), RATE)
    out = eva_connection(clip, params, np.random.default_rng(5)).samples.reshape(-1, 1600)
    gains = out[:, 0] / 0.5
    assert np.all(out == out[:, :1])  # one gain per 100 ms chunk
    assert gains.min() >= 0.5 - 1e-6 and gains.max() <= 1.2 + 1e-6
    assert gains.max() - gains.min() > 0.5  # drawn, not fixed


def test_loud_speech_is_clipped_after_the_gain() -> None:
    params = EvaConnectionParams(mulaw=False, loss_rate=0.0, min_gain=1.2, max_gain=1.2)
    clip = Clip(np.full(1600, 0.95, dtype=np.float32), RATE)
    assert np.all(eva_connection(clip, params, np.random.default_rng(0)).samples == 1.0)


@pytest.mark.parametrize("name", ["eva-static+eva-connection", "eva-cafe", "accent+eva-connection"])
def test_same_seed_same_bytes_other_seed_differs(name: str) -> None:
    clip = speech_like(0.7)

    def run(seed: int) -> list[bytes]:
        channel = make_channel(name, seed)
        return [channel.speech(clip).samples.tobytes() for _ in range(2)] + [
            channel.ambient(0.2, RATE).samples.tobytes()
        ]

    first, again, other = run(11), run(11), run(12)
    assert first == again
    assert first[0] != first[1]  # each utterance draws its own noise and losses
    assert first[0] != other[0] and first[1] != other[1]
    silent_mic = Clip.silence(0.2, RATE).samples.tobytes()
    if name == "accent+eva-connection":
        assert first[2] == other[2] == silent_mic  # the connection leaves the open mic alone
    else:
        assert first[2] != other[2] and first[2] != silent_mic


def test_named_conditions_resolve_and_combine() -> None:
    static = CONDITIONS.get("eva-static")
    both = CONDITIONS.get("eva-static+eva-connection")
    assert [k.name for k, _ in both.kinds()] == ["eva_noise", "eva_connection"]
    assert static.model_extra == {"eva_noise": EvaNoiseParams(source=STATIC, snr_db=15.0)}
    assert not both.is_clean and both.noise is None and both.connection is None
    assert CONDITIONS.get("accent+eva-connection").accent is not None
    for name in ["eva-cafe", "eva-street", "eva-babble"]:
        assert "not shipped" in CONDITIONS.get(name).description
    assert "exact" in static.description
    ours = combine(CONDITIONS.get("noise"), CONDITIONS.get("eva-connection"))
    assert ours.noise is not None and [k.name for k, _ in ours.kinds()] == ["eva_connection"]
    with pytest.raises(ValueError, match="both set 'eva_noise'"):
        combine(static, CONDITIONS.get("eva-cafe"))


def test_the_connection_degrades_after_the_noise_in_the_channel() -> None:
    clip = speech_like(0.5)
    noisy = make_channel("eva-static", 3).speech(clip)
    both = make_channel("eva-static+eva-connection", 3).speech(clip)
    # Same noise stream in both; the connection then acts on the noisy speech.
    expected = eva_connection(
        noisy, EvaConnectionParams(), make_rng(3, "eva_connection", "utterance", 0)
    )
    assert both.same_as(expected)


def test_the_noise_loop_is_made_with_the_channel_not_mid_call() -> None:
    from perturbations.eva_acoustics import _loop

    _loop.cache_clear()
    channel = make_channel("eva-cafe", 1)
    assert _loop.cache_info().misses == 1
    channel.speech(speech_like(0.3))
    channel.ambient(0.1, RATE)
    assert _loop.cache_info().misses == 1


def test_any_registered_parts_combine_by_name_and_runs_accept_them() -> None:
    from tasks.config import BenchmarkConfig
    from tasks.config_checks import condition_problems

    spec = CONDITIONS.get("accent+noise+eva-connection")
    assert spec.name == "accent+noise+eva-connection" and spec.version == "1+1+1"
    assert spec.accent is not None and spec.noise is not None
    assert [k.name for k, _ in spec.kinds()] == ["eva_connection"]
    assert "eva-cafe+eva-connection" in CONDITIONS and "eva-cafe+nope" not in CONDITIONS
    assert "eva-static+eva-cafe" not in CONDITIONS
    with pytest.raises(ValueError, match="both set 'eva_noise'"):
        CONDITIONS.get("eva-static+eva-cafe")
    ok = BenchmarkConfig(conditions=["eva-cafe+eva-connection", "accent+eva-static"])
    assert condition_problems(ok) == []
    (problem,) = condition_problems(BenchmarkConfig(conditions=["eva-static+eva-cafe"]))
    assert "unknown condition 'eva-static+eva-cafe'" in problem


# ----------------------------------------------------------------------------- user WAVs


def office_condition(source: str = "office") -> ConditionSpec:
    return ConditionSpec.model_validate(
        {"name": "eva-office", "eva_noise": {"source": source, "snr_db": 10.0}}
    )


def peak_hz(clip: Clip) -> float:
    spectrum = np.abs(np.fft.rfft(clip.samples.astype(np.float64)))
    return float(np.fft.rfftfreq(clip.n_samples, 1 / clip.rate)[int(np.argmax(spectrum))])


@pytest.mark.parametrize("channels", [1, 2])
@pytest.mark.parametrize(
    ("file_rate", "dtype"),
    [(8000, np.uint8), (8000, np.int16), (16000, np.int16), (44100, np.int16), (48000, np.int32)],
)
def test_eva_noise_reads_a_users_wav_at_any_rate(
    tmp_path: Path, file_rate: int, dtype: type, channels: int
) -> None:
    """A 500 Hz hum recorded at any rate, mono or stereo, 8/16/32-bit PCM, is the open
    mic's noise at the channel's 16 kHz: still a 500 Hz hum, at the EVA frame level."""
    t = np.arange(2 * file_rate) / file_rate
    tone = 0.5 * np.sin(2 * np.pi * 500 * t)
    if dtype is np.uint8:
        pcm = np.round(tone * 127 + 128).astype(np.uint8)
    else:
        pcm = np.round(tone * np.iinfo(dtype).max).astype(dtype)
    wavfile.write(
        tmp_path / "office.wav",
        file_rate,
        np.stack([pcm] * channels, axis=1) if channels == 2 else pcm,
    )
    _loop.cache_clear()
    channel = make_channel(office_condition(), 3, noise_dir=tmp_path)
    ambient = channel.ambient(1.0, RATE)
    assert abs(peak_hz(ambient) - 500) < 5
    target = REFERENCE_SPEECH_RMS * 10 ** (-10.0 / 20)
    assert rms(ambient.samples) == pytest.approx(target, rel=0.05)
    noisy = channel.speech(speech_like(0.5))
    assert rms(noisy.samples - speech_like(0.5).samples) > 0


def test_a_condition_may_name_its_own_noise_dir(tmp_path: Path) -> None:
    t = np.arange(16000) / 16000
    wavfile.write(
        tmp_path / "hum.wav", 16000, (0.3 * np.sin(2 * np.pi * 300 * t)).astype(np.float32)
    )
    _loop.cache_clear()
    spec = ConditionSpec.model_validate(
        {"name": "hum", "eva_noise": {"source": "hum", "noise_dir": str(tmp_path)}}
    )
    assert abs(peak_hz(make_channel(spec, 1).ambient(1.0, RATE)) - 300) < 5


def test_an_unreadable_noise_wav_fails_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "office.wav").write_bytes(b"RIFF but not really a wave file")
    _loop.cache_clear()
    with pytest.raises(AudioError, match=r"office\.wav"):
        make_channel(office_condition(), 1, noise_dir=tmp_path)  # at set-up, not mid-call
