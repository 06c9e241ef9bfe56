"""tasks.voice.tts and the eSpeak NG binding."""

from __future__ import annotations

import importlib.util
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from evaflow_core.registry import UnknownNameError
from perturbations.accent import ENGLISH_ACCENTS, VOICE_VARIANTS
from perturbations.audio import VoiceSpec
from tasks.voice.espeak import VoiceNotFoundError, english_voices, resolve_voice, variants
from tasks.voice.tts import ESPEAK_RATE, TTS_ENGINES, TtsError, synthesize


def test_all_english_accents_and_variants_exist() -> None:
    assert set(ENGLISH_ACCENTS) <= set(english_voices())
    assert set(VOICE_VARIANTS) - {""} <= set(variants())


def test_language_codes_resolve_to_voice_files() -> None:
    assert resolve_voice("en-gb") == "en"  # the file is called "en", not "en-gb"
    assert resolve_voice("en-gb-scotland+klatt3") == "en-GB-scotland+klatt3"
    assert resolve_voice("EN-US+m3") == "en-US+m3"


def test_unknown_voices_and_variants_are_named() -> None:
    with pytest.raises(VoiceNotFoundError, match="en-westindies.*en-029"):
        resolve_voice("en-westindies")
    with pytest.raises(VoiceNotFoundError, match="variant 'm99'.*klatt3"):
        resolve_voice("en-us+m99")


@pytest.mark.parametrize("voice", ENGLISH_ACCENTS)
def test_every_accent_speaks(voice: str) -> None:
    clip = synthesize("Thank you", VoiceSpec(voice=voice))
    assert clip.rate == ESPEAK_RATE and 0.3 < clip.duration_s < 3 and clip.dbfs() > -40


def test_every_variant_speaks() -> None:
    for variant in VOICE_VARIANTS[1:]:
        assert synthesize("yes", VoiceSpec(voice=f"en-us+{variant}")).dbfs() > -45, variant


def test_prosody_changes_the_audio() -> None:
    text = "I need to change my flight to March twenty fifth"
    slow = synthesize(text, VoiceSpec(rate_wpm=110))
    fast = synthesize(text, VoiceSpec(rate_wpm=260))
    gaps = synthesize(text, VoiceSpec(rate_wpm=260, word_gap_ms=100))
    assert slow.duration_s > 1.5 * fast.duration_s
    assert gaps.duration_s > fast.duration_s + 0.3


def test_synthesis_is_deterministic_and_thread_safe() -> None:
    texts = [f"Request number {i}, please hold" for i in range(8)]
    voices = [VoiceSpec(voice=v) for v in ("en-us+klatt3", "en-gb+f2")]
    sequential = [synthesize(t, voices[i % 2]).samples.tobytes() for i, t in enumerate(texts)]
    with ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(lambda it: synthesize(it[1], voices[it[0] % 2]), enumerate(texts)))
    assert [c.samples.tobytes() for c in parallel] == sequential


def test_empty_text_and_unknown_engine() -> None:
    with pytest.raises(ValueError, match="empty"):
        synthesize("   ")
    with pytest.raises(UnknownNameError, match="espeak"):
        synthesize("hi", engine="festival")
    assert {"espeak", "piper"} <= set(TTS_ENGINES.names())


@pytest.mark.skipif(importlib.util.find_spec("piper") is not None, reason="piper installed")
def test_piper_without_the_extra_says_how_to_install() -> None:
    with pytest.raises(TtsError, match=r"evaflow\[piper\]"):
        synthesize("hi", VoiceSpec(voice="/models/en_US-lessac-medium.onnx"), engine="piper")


def test_output_is_valid_float_audio() -> None:
    clip = synthesize("Zulu Kilo three")
    assert clip.samples.dtype == np.float32 and np.abs(clip.samples).max() <= 1.0


@pytest.mark.parametrize("voice", ["en-gb-scotland", "en-us+f2", "en-us+m3", "en-029+klatt3"])
def test_same_text_same_bytes_whatever_came_before(voice: str) -> None:
    first = synthesize("Request number one, thanks", VoiceSpec(voice=voice))
    synthesize("Something loud and different first!", VoiceSpec(voice="en-gb+m2", rate_wpm=220))
    again = synthesize("Request number one, thanks", VoiceSpec(voice=voice))
    assert first.same_as(again)
