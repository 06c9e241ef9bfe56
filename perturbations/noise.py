"""Background noise: sources, a looping noise stream, and mixing at a target SNR.

Sources are either generated here and shippable (``white``, ``pink``, ``brown``, ``cafe``,
``street``; ``babble`` is registered by ``tasks.voice.babble`` because it needs our TTS),
or WAV files in a directory the user gives (name = file stem, e.g. the reference
recordings ``coffee_shop.wav``; never committed here).

Levels follow spec section 8.2: speech is mixed with noise whose RMS is the speech level
minus ``snr_db``; ambient noise (what an open mic sends while the caller is silent) has the
level of a reference conversational speech RMS of 3000/32768 (about -21 dBFS) minus ``snr_db``.
The speech level is the RMS of its active 20 ms frames, so pauses do not lower it.
"""

from __future__ import annotations

from collections.abc import Callable
from math import gcd
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evaflow_core.registry import Registry
from perturbations.audio import AudioError, Clip

REFERENCE_SPEECH_RMS = 3000 / 32768
NoiseGenerator = Callable[[float, int, np.random.Generator], np.ndarray]
# ``babble`` needs our TTS, so it comes from ``tasks.voice.babble`` through this group
# (evaflow declares that entry point itself): the default source works wherever
# evaflow is installed, and perturbations never imports tasks.
NOISE_GENERATORS: Registry[NoiseGenerator] = Registry(
    "noise source", entry_point_group="evaflow.noise"
)


class NoiseParams(BaseModel):
    """Which noise, how loud."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = Field(
        default="babble",
        min_length=1,
        description="Generated source name (white, pink, brown, cafe, street, babble) or the "
        "stem of a WAV file in the noise directory.",
    )
    snr_db: float = Field(default=15.0, ge=-5, le=40, description="Speech-to-noise ratio, dB.")
    ambient: bool = Field(
        default=True, description="Also send noise while the caller is silent (open mic)."
    )
    loop_s: float = Field(
        default=30.0, ge=2, le=600, description="Length of a generated noise loop, seconds."
    )


# ----------------------------------------------------------------------------- generators


def _unit_rms(x: np.ndarray) -> np.ndarray:
    rms = float(np.sqrt(np.mean(np.square(x))))
    return x / rms if rms > 0 else x


def _colored(n: int, exponent: float, rate: int, rng: np.random.Generator) -> np.ndarray:
    """Noise with power spectrum ~ 1/f**exponent (0 white, 1 pink, 2 brown)."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1 / rate)
    spectrum *= 1 / np.maximum(freqs, 20.0) ** (exponent / 2)  # no runaway below 20 Hz
    spectrum[0] = 0
    return _unit_rms(np.fft.irfft(spectrum, n))


def _band(x: np.ndarray, low: float, high: float, rate: int) -> np.ndarray:
    from scipy.signal import butter, sosfilt  # lazily: scipy.signal is half a second of import

    high = min(high, 0.45 * rate)
    sos = butter(4, [low, high], btype="bandpass", fs=rate, output="sos")
    return sosfilt(sos, x)


@NOISE_GENERATORS.register("white")
def white_noise(seconds: float, rate: int, rng: np.random.Generator) -> np.ndarray:
    return _unit_rms(rng.standard_normal(round(seconds * rate)))


@NOISE_GENERATORS.register("pink")
def pink_noise(seconds: float, rate: int, rng: np.random.Generator) -> np.ndarray:
    return _colored(round(seconds * rate), 1.0, rate, rng)


@NOISE_GENERATORS.register("brown")
def brown_noise(seconds: float, rate: int, rng: np.random.Generator) -> np.ndarray:
    return _colored(round(seconds * rate), 2.0, rate, rng)


def _slow_envelope(n: int, rate: int, hz: float, depth: float, rng) -> np.ndarray:
    """Random smooth gain around 1 (knots every 1/hz seconds, linear interpolation)."""
    knots = max(2, int(n / rate * hz) + 2)
    values = 1 + depth * (rng.random(knots) * 2 - 1)
    return np.interp(np.arange(n), np.linspace(0, n, knots), values)


@NOISE_GENERATORS.register("cafe")
def cafe_noise(seconds: float, rate: int, rng: np.random.Generator) -> np.ndarray:
    """Room murmur (band-passed pink noise, syllable-rate modulation) plus cup/cutlery
    clinks (short decaying high tones at random times)."""
    n = round(seconds * rate)
    murmur = _band(_colored(n, 1.0, rate, rng), 150, 2500, rate)
    murmur *= _slow_envelope(n, rate, 4.0, 0.5, rng)
    clinks = np.zeros(n)
    for _ in range(rng.poisson(1.5 * seconds)):
        start, length = int(rng.integers(0, n)), int(rate * rng.uniform(0.03, 0.15))
        t = np.arange(min(length, n - start)) / rate
        freq = rng.uniform(2000, min(6000, 0.45 * rate))
        clinks[start : start + t.size] += np.sin(2 * np.pi * freq * t) * np.exp(-t * 40)
    return _unit_rms(_unit_rms(murmur) + 0.6 * clinks)


@NOISE_GENERATORS.register("street")
def street_noise(seconds: float, rate: int, rng: np.random.Generator) -> np.ndarray:
    """Traffic rumble (brown noise), engine hum harmonics, and passing cars (swells)."""
    n = round(seconds * rate)
    t = np.arange(n) / rate
    rumble = _colored(n, 2.0, rate, rng)
    base = rng.uniform(40, 90)
    hum = sum(np.sin(2 * np.pi * base * k * t + rng.uniform(0, 6.3)) / k for k in range(1, 6))
    hum = _unit_rms(hum * _slow_envelope(n, rate, 0.3, 0.4, rng))
    cars = np.zeros(n)
    for _ in range(rng.poisson(seconds / 6)):
        centre, width = rng.uniform(0, seconds), rng.uniform(1.0, 3.0)
        cars += np.exp(-(((t - centre) / width) ** 2))
    hiss = _band(rng.standard_normal(n), 300, 3000, rate)
    return _unit_rms(rumble + 0.4 * hum + 0.8 * _unit_rms(hiss) * cars)


# ----------------------------------------------------------------------------- files


def _read_wav(path: Path, rate: int) -> np.ndarray:
    from scipy.io import wavfile
    from scipy.signal import resample_poly

    try:
        file_rate, data = wavfile.read(path)
    except (ValueError, OSError) as exc:
        raise AudioError(f"cannot read noise file {path}: {exc}") from exc
    if data.dtype == np.uint8:  # 8-bit WAV PCM is unsigned, silence at 128
        data = data.astype(np.float64) - 128.0
    data = np.asarray(data, dtype=np.float64)
    if data.ndim == 2:
        data = data.mean(axis=1)
    if data.size == 0:
        raise AudioError(f"noise file {path} is empty")
    if file_rate != rate:
        g = gcd(rate, file_rate)
        data = resample_poly(data, rate // g, file_rate // g)
    return _unit_rms(data)


def noise_names(noise_dir: Path | str | None = None) -> list[str]:
    """Generated sources plus WAV stems available in ``noise_dir``."""
    names = set(NOISE_GENERATORS.names())
    if noise_dir is not None and Path(noise_dir).is_dir():
        names |= {p.stem for p in Path(noise_dir).glob("*.wav")}
    return sorted(names)


def load_noise(
    source: str, seconds: float, rate: int, rng: np.random.Generator, noise_dir=None
) -> np.ndarray:
    """Unit-RMS noise samples for ``source`` (file in ``noise_dir`` wins over a generator)."""
    if noise_dir is not None:
        path = Path(noise_dir) / f"{source}.wav"
        if path.is_file():
            return _read_wav(path, rate)
    if source not in NOISE_GENERATORS:
        hint = (
            " (evaflow's 'evaflow.noise' entry point; is evaflow installed?)"
            if source == "babble"
            else ""
        )
        raise AudioError(
            f"unknown noise source {source!r}{hint}; valid: {', '.join(noise_names(noise_dir))}"
        )
    return NOISE_GENERATORS.get(source)(seconds, rate, rng)


# ----------------------------------------------------------------------------- mixing


class NoiseStream:
    """A looping noise source with one cursor, shared by speech mixing and ambient frames."""

    def __init__(self, samples: np.ndarray, rate: int, start: int = 0) -> None:
        if samples.size == 0:
            raise AudioError("noise stream needs at least one sample")
        self.samples, self.rate, self.cursor = samples, rate, start % samples.size

    def take(self, n: int) -> np.ndarray:
        idx = (self.cursor + np.arange(n)) % self.samples.size
        self.cursor = int((self.cursor + n) % self.samples.size)
        return self.samples[idx]


def speech_level(clip: Clip) -> float | None:
    """RMS of the active 20 ms frames (within 40 dB of the loudest, above -60 dBFS)."""
    frame = max(1, clip.rate // 50)
    usable = clip.samples[: clip.n_samples // frame * frame].astype(np.float64)
    if usable.size == 0:
        usable = clip.samples.astype(np.float64)
        frame = usable.size
    power = np.mean(np.square(usable.reshape(-1, frame)), axis=1)
    active = power[(power > 1e-6) & (power > power.max() * 1e-4)]
    return float(np.sqrt(active.mean())) if active.size else None


def mix_at_snr(clip: Clip, noise: np.ndarray, snr_db: float) -> Clip:
    """``clip`` plus ``noise`` scaled so that its RMS is the speech level minus ``snr_db``.

    The noise segment is normalised by its own RMS (spec 8.2: per chunk), so the SNR holds
    even for sources whose level wanders (brown noise, passing cars, a crying baby).
    """
    level = speech_level(clip) or REFERENCE_SPEECH_RMS
    segment = noise[: clip.n_samples]
    rms = float(np.sqrt(np.mean(np.square(segment))))
    if rms == 0:
        return clip
    mixed = clip.samples + segment / rms * level * 10 ** (-snr_db / 20)
    return Clip(np.clip(mixed, -1, 1).astype(np.float32), clip.rate)


def ambient_clip(noise: np.ndarray, rate: int, snr_db: float) -> Clip:
    """Open-mic noise alone, at the reference speech level minus ``snr_db``. ``noise`` comes
    from a unit-RMS loop and is not renormalised, so short ambient frames keep the source's
    natural rise and fall."""
    scaled = noise * REFERENCE_SPEECH_RMS * 10 ** (-snr_db / 20)
    return Clip(np.clip(scaled, -1, 1).astype(np.float32), rate)


def apply_background_noise(
    clip: Clip, params: NoiseParams, rng: np.random.Generator, noise_dir=None
) -> Clip:
    """Mix noise into ``clip`` at ``params.snr_db`` from a random point of the source."""
    source = load_noise(
        params.source, max(params.loop_s, clip.duration_s), clip.rate, rng, noise_dir
    )
    stream = NoiseStream(source, clip.rate, int(rng.integers(0, source.size)))
    return mix_at_snr(clip, stream.take(clip.n_samples), params.snr_db)
