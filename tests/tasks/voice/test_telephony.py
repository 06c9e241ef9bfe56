"""tasks.voice.telephony: G.711 mu-law bit-exactness, resampling, framing."""

from __future__ import annotations

import numpy as np
import pytest

from perturbations.audio import AudioError, Clip
from tasks.voice.telephony import (
    FRAME_BYTES,
    ULAW_SILENCE,
    frames,
    from_wire,
    resample,
    telephone_round_trip,
    to_wire,
    ulaw_decode,
    ulaw_encode,
)

# The classic G.711 reference code (Sun Microsystems' g711.c, as used by CPython's audioop),
# written out sample by sample so the vectorised implementation is checked against it.
_SEG_UEND = [0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF]


def reference_linear2ulaw(sample16: int) -> int:
    pcm_val = sample16 >> 2  # 16-bit input, 14-bit algorithm
    if pcm_val < 0:
        pcm_val, mask = -pcm_val, 0x7F
    else:
        mask = 0xFF
    pcm_val = min(pcm_val, 32635) + (0x84 >> 2)
    seg = next((i for i, end in enumerate(_SEG_UEND) if pcm_val <= end), 8)
    if seg >= 8:
        return 0x7F ^ mask
    return ((seg << 4) | ((pcm_val >> (seg + 1)) & 0xF)) ^ mask


def reference_ulaw2linear(code: int) -> int:
    code = ~code & 0xFF
    t = ((code & 0x0F) << 3) + 0x84
    t <<= (code & 0x70) >> 4
    return (0x84 - t) if code & 0x80 else (t - 0x84)


def test_encode_is_bit_exact_over_all_int16_values() -> None:
    everything = np.arange(-32768, 32768, dtype=np.int16)
    expected = np.array([reference_linear2ulaw(int(v)) for v in everything], dtype=np.uint8)
    assert np.array_equal(ulaw_encode(everything), expected)


def test_decode_is_bit_exact_for_all_codes() -> None:
    codes = np.arange(256, dtype=np.uint8)
    expected = np.array([reference_ulaw2linear(int(c)) for c in codes], dtype=np.int16)
    assert np.array_equal(ulaw_decode(codes), expected)
    assert np.array_equal(ulaw_decode(codes.tobytes()), expected)
    assert ulaw_decode(bytes([ULAW_SILENCE]))[0] == 0


def test_decode_then_encode_is_identity_on_codes() -> None:
    codes = np.arange(256, dtype=np.uint8)
    round_trip = ulaw_encode(ulaw_decode(codes))
    # 0x7F and 0xFF both decode to 0; every other code survives unchanged.
    assert np.array_equal(round_trip[codes != 0x7F], codes[codes != 0x7F])


def test_codec_input_types_are_checked() -> None:
    with pytest.raises(AudioError, match="int16"):
        ulaw_encode(np.zeros(4, dtype=np.float32))
    with pytest.raises(AudioError, match="uint8"):
        ulaw_decode(np.zeros(4, dtype=np.int16))


def test_resample_keeps_in_band_tones_and_removes_aliases() -> None:
    t = np.arange(16000) / 16000
    tone_in = 0.5 * np.sin(2 * np.pi * 1000 * t)
    alias = 0.5 * np.sin(2 * np.pi * 6000 * t)  # above the 4 kHz Nyquist of 8 kHz audio
    out = resample(Clip((tone_in + alias).astype(np.float32) * 0.9, 16000), 8000)
    assert out.rate == 8000 and out.n_samples == 8000
    spectrum = np.abs(np.fft.rfft(out.samples))
    freqs = np.fft.rfftfreq(out.n_samples, 1 / 8000)
    peak_1k = spectrum[np.argmin(np.abs(freqs - 1000))]
    alias_2k = spectrum[np.argmin(np.abs(freqs - 2000))]  # where 6 kHz would fold to
    assert alias_2k < 0.01 * peak_1k
    with pytest.raises(AudioError, match="positive"):
        resample(out, 0)


def test_wire_round_trip_and_frames() -> None:
    t = np.arange(22050) / 22050
    clip = Clip((0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), 22050)
    payload = to_wire(clip)
    assert len(payload) == 8000
    decoded = from_wire(payload)
    assert decoded.rate == 8000
    back = telephone_round_trip(clip)
    assert back.rate == clip.rate
    snr = 10 * np.log10(
        np.sum(clip.samples**2) / np.sum((clip.samples - back.samples[: clip.n_samples]) ** 2)
    )
    assert snr > 25  # mu-law is roughly 38 dB; resampling edges cost a little
    chunks = frames(payload[:500])
    assert [len(c) for c in chunks] == [FRAME_BYTES] * 4
    assert chunks[-1].endswith(bytes([ULAW_SILENCE]) * 140)
    assert len(frames(payload[:500], pad=False)) == 3


def test_from_wire_rejects_empty_payload() -> None:
    with pytest.raises(AudioError, match="non-empty"):
        from_wire(b"")
