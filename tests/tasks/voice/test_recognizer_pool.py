"""A pooled recogniser, reset on release, decodes exactly as a newly built one."""

from __future__ import annotations

from pathlib import Path

import pytest

from perturbations import VoiceSpec
from perturbations.audio import Clip
from tasks.voice.recognizer_pool import RecognizerPool, content_key, reset_recognizer
from tasks.voice.stt import Recognizer, SttSpec
from tasks.voice.telephony import WIRE_RATE, telephone_round_trip
from tasks.voice.tts import synthesize

LINES = [
    ("Yes, please book the window seat.", None),
    ("My code is Zulu Kilo three.", "code:LLD"),
    ("No, that is all, thank you.", None),
]


@pytest.fixture(scope="module")
def clips() -> list[Clip]:
    voice = VoiceSpec(voice="en-us")
    return [telephone_round_trip(synthesize(text, voice), WIRE_RATE) for text, _ in LINES]


def decode_all(
    recognizer: Recognizer, clips: list[Clip], lines: list[tuple[str, str | None]] = LINES
) -> list[tuple[str, float | None]]:
    """Each line's words and the decoder's path score (which shows any hidden state)."""
    backend = recognizer._backend
    out = []
    for clip, (_, expect) in zip(clips, lines, strict=True):
        text = recognizer.recognize(clip, expect)
        decoder = backend.grammar_decoder if expect else backend.decoder
        hyp = decoder.hyp()
        out.append((text, hyp.best_score if hyp is not None else None))
    return out


def test_a_released_recogniser_decodes_as_a_new_one(
    corpus: list[str], tmp_path: Path, clips: list[Clip]
) -> None:
    pool = RecognizerPool()
    spec = SttSpec(grammar="codes")

    def build() -> Recognizer:
        return Recognizer(spec, corpus, tmp_path)

    used = pool.checkout("k", build)
    first = decode_all(used, clips)
    again_unreset = decode_all(used, clips)  # what reuse without the reset would give
    pool.release("k", used)
    reused = pool.checkout("k", build)
    assert reused is used and (pool.built, pool.reused) == (1, 1)
    assert decode_all(reused, clips) == first
    assert again_unreset != first  # the decoder's state is real: the test can fail


def test_a_reset_before_a_clip_makes_its_transcript_independent_of_history(
    corpus: list[str], tmp_path: Path, clips: list[Clip]
) -> None:
    """What the real-time speech workers do before each clip (any call's clip can land on
    any worker after other calls' clips)."""
    spec = SttSpec(grammar="codes")
    last = [clips[-1]]
    fresh = Recognizer(spec, corpus, tmp_path)
    alone = decode_all(fresh, last, LINES[-1:])
    used = Recognizer(spec, corpus, tmp_path)
    decode_all(used, clips)
    assert decode_all(used, last, LINES[-1:]) != alone  # history shows without the reset
    assert reset_recognizer(used)
    assert decode_all(used, last, LINES[-1:]) == alone


def test_the_pool_keeps_only_its_idle_limit_and_can_be_switched_off(
    corpus: list[str], tmp_path: Path
) -> None:
    pool = RecognizerPool(idle_limit=1)
    made = [Recognizer(SttSpec(), corpus, tmp_path) for _ in range(2)]
    pool.release("a", made[0])
    pool.release("b", made[1])
    assert pool.checkout("a", lambda: made[1]) is made[1]  # "a" was dropped, built anew
    pool.enabled = False
    pool.release("b", made[0])
    assert pool.checkout("b", lambda: made[0]) is made[0] and pool.reused == 0
    assert content_key("a", "bc") != content_key("ab", "c")
