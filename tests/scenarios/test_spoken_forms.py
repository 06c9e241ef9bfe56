"""scenarios.spoken_forms: the one home of the spoken number, month and letter forms."""

from __future__ import annotations

import pytest

from scenarios.generate import spoken as generated
from scenarios.spoken_forms import clock_words, number_words, ordinal_words, year_words
from tasks.spoken import speak_date, speak_number, speak_time


@pytest.mark.parametrize(
    ("n", "words"),
    [
        (0, "zero"),
        (19, "nineteen"),
        (40, "forty"),
        (117, "one hundred seventeen"),
        (1250, "one thousand two hundred fifty"),
        (2_000_000_001, "two billion one"),
    ],
)
def test_number_words(n: int, words: str) -> None:
    assert number_words(n) == words == speak_number(n)


def test_ordinals_years_and_clock_times() -> None:
    assert [ordinal_words(n) for n in (1, 12, 25, 30, 100)] == [
        "first",
        "twelfth",
        "twenty fifth",
        "thirtieth",
        "one hundredth",
    ]
    assert [year_words(y) for y in (2026, 2005, 1988, 1905, 1900)] == [
        "twenty twenty six",
        "two thousand five",
        "nineteen eighty eight",
        "nineteen oh five",
        "nineteen hundred",
    ]
    assert clock_words(16, 0) == "four PM" and clock_words(9, 5) == "nine oh five AM"
    with pytest.raises(ValueError, match="negative"):
        number_words(-1)


def test_the_generator_and_the_voice_stack_say_values_alike() -> None:
    assert generated.spoken_date("2026-03-25", with_year=True) == speak_date("2026-03-25")
    assert generated.spoken_time("14:30") == speak_time("14:30") == "two thirty PM"
    assert generated.MONTHS[0] == "January" and generated.WEEKDAYS[6] == "Sunday"
