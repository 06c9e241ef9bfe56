"""Spec 4.7's silence trimming of an audio judge's track, on planted signals."""

from __future__ import annotations

import numpy as np
import pytest

from tasks.judges.audio import nonsilent_ranges, trim_silence
from tasks.judges.audio_calls import answer_kind

RATE = 8000


def tone(seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (0.2 * np.sin(2 * np.pi * 300 * t)).astype(np.float32)


def quiet(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE), dtype=np.float32)


@pytest.mark.parametrize("tail_s", [4.0, 4.02, 3.5])
def test_long_silences_are_cut_to_the_join_and_the_tail(tail_s: float) -> None:
    """Gaps of 3 s or more go; a tail not a whole scan step long goes with its window
    (it once stayed 'speech' and cost a 3 s join)."""
    track = np.concatenate([quiet(2.0), tone(1.0), quiet(6.0), tone(0.5), quiet(tail_s)])
    assert [(a / RATE, b / RATE) for a, b in nonsilent_ranges(track, RATE)] == [
        (0.0, 3.0),
        (9.0, 9.5),
    ]
    trimmed, cut = trim_silence(track, RATE)
    # [0, 3.1) + 3 s join + [8.9, 9.6) + 0.5 s tail
    assert cut and len(trimmed) / RATE == pytest.approx(3.1 + 3.0 + 0.7 + 0.5)


def test_short_pauses_stay_and_no_speech_is_sent_untrimmed() -> None:
    track = np.concatenate([tone(1.0), quiet(2.9), tone(1.0)])
    assert nonsilent_ranges(track, RATE) == [(0, len(track))]
    silence = quiet(5.0)
    same, cut = trim_silence(silence, RATE)
    assert not cut and same is silence


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('{"explanation": "There is no audio attached.", "turns": []}', "no_audio"),
        (
            '{"turns": [{"turn_id": 1, "explanation": "No audio provided", "rating": 1}]}',
            "no_audio",
        ),
        (
            '{"turns": [{"turn_id": 1, "explanation": "no audio"}, {"turn_id": 2, '
            '"explanation": "clear"}]}',
            "ok",
        ),
        ('{"turns": []}', "empty"),
        ('{"turns": [{"turn_id": 1, "rating": 3}]}', "ok"),
        ("not json at all", "ok"),  # the metric's parser reports it
    ],
)
def test_what_an_answer_says_about_the_audio(text: str, kind: str) -> None:
    assert answer_kind(text) == kind
