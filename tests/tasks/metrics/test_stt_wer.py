from __future__ import annotations

import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks.metrics.context import build_context
from tasks.metrics.stt_wer import compute as stt_wer
from tasks.metrics.stt_wer import strip_tags
from tasks.metrics.wer_normalize import normalize_for_wer, uses_cer
from tasks.spoken import speak_amount, speak_code, speak_number, speak_time
from tests.tasks.metrics.builders import make_record, make_scenario, turn


@pytest.mark.parametrize(
    ("written", "spoken"),
    [
        # Whisper-style rules (the reference's normaliser)
        ("It is 2024", "it is twenty twenty four"),
        ("born in 1988", "born in nineteen eighty eight"),
        ("in 2005", "in two thousand five"),
        ("1994-02-11", "nineteen ninety four, zero two, eleven"),
        ("the 21st of June", "the twenty first of june"),
        ("Room on the 3rd floor", "room on the third floor"),
        ("we're here", "we are here"),
        ("I can't", "i can not"),
        ("That\u2019s 50% off", "that's fifty percent off"),
        ("It was $23.50", "it was twenty three dollars and fifty cents"),
        ("It was €50", "it was fifty euros"),
        ("£20 please", "twenty pounds please"),
        ("50¢", "fifty cents"),
        ("$0.75", "seventy five cents"),
        ("$1,250", "one thousand two hundred fifty dollars"),
        ("3.5 miles", "three point five miles"),
        ("at 3 pm", "at three p.m."),
        ("at 10:00 AM", "at ten a m"),
        ("at 4:30 PM", "at four thirty p m"),
        ("at 9:05am", "at nine oh five am"),
        ("the colour grey", "the color gray"),
        ("Dr. Smith", "doctor smith"),
        ("Um, yes, that's right", "yes that is right"),
        ("Uh I mean, hmm, yes", "i mean yes"),
        ("twenty-five", "twenty five"),
        # evaflow's spelled codes and IDs
        ("My employee ID is EMP048271.", "my employee id is E M P zero four eight two seven one"),
        ("The asset tag is AST-LAP-004512", "the asset tag is A S T dash L A P dash 0 0 4 5 1 2"),
        ("code ZK3FFW", "code Z K three F F W"),
        ("code ZK3FFW", "code Zulu Kilo three Foxtrot Foxtrot Whiskey"),
        ("flight SK621", "flight S K six two one"),
        ("facility TOU-77A", "facility T O U dash seven seven A"),
        ("617-555-0148", "six one seven five five five zero one four eight"),
    ],
)
def test_normaliser_makes_formatting_irrelevant(written: str, spoken: str) -> None:
    assert normalize_for_wer(written) == normalize_for_wer(spoken)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("twenty twenty four", "2024"),
        ("nineteen ninety four, zero two, eleven", "1994 2 11"),
        ("the 21st of June", "the 21st of june"),
        ("we're", "we are"),
        ("3 pm", "3 pm"),
        ("10:00 AM", "10 am"),
        ("€50", "50 euros"),
        ("$12.50", "12.50 dollars"),
        ("one dollar", "one dollar"),
        ("fifty percent", "50 percent"),
        ("ten o'clock", "10 oclock"),
        ("oh I see", "oh i see"),  # the interjection is not a zero
        ("one oh one", "101"),
        ("seven two nine four I think", "7294 i think"),
        ("I need a two hour layover", "i need a 2 hour layover"),
        ("S K six two one", "sk621"),
        # hypothesis (explore profile): a written code that spells a filler is still a code
        ("Um, it is ER", "it is er"),
        ("it is E R", "it is er"),
        # ... and one that spells a number word is a code, not a number (seed 72352)
        ("it is TEN", "it is ten"),
        ("it is T E N", "it is ten"),
        ("it is tango echo november", "it is ten"),
        ("ten bags", "10 bags"),
    ],
)
def test_normaliser_outputs(text: str, expected: str) -> None:
    assert normalize_for_wer(text) == expected


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("€50", "$50"),
        ("fifty euros", "fifty dollars"),
        ("ZK3FFW", "ZK3FFV"),
        ("4:30 PM", "4:30 AM"),
        ("twenty twenty four", "twenty twenty five"),
    ],
)
def test_normaliser_keeps_real_differences(a: str, b: str) -> None:
    assert normalize_for_wer(a) != normalize_for_wer(b)


def test_a_wrong_code_letter_is_one_word_error() -> None:
    rec = _record([("my code is ZK3FFW", "my code is Z K three F F V")])
    assert stt_wer(build_context(rec, make_scenario())).score == round(1 / 4, 3)


def test_normaliser_steps() -> None:
    assert normalize_for_wer("that\\u2019s it") == "that is it"  # escaped apostrophe
    assert normalize_for_wer("Hello, World!") == "hello world"
    assert normalize_for_wer("code 007") == "code 7"
    assert normalize_for_wer("the 3 rd floor") == "the 3rd floor"
    assert normalize_for_wer("a well-known fact") == "a well known fact"
    assert normalize_for_wer("T O U dash seventy", "fr") == "tou seventy"
    assert uses_cer("ja") and uses_cer("zh-CN") and not uses_cer("en")


def test_strip_tags() -> None:
    assert strip_tags("[user interrupts] hello [pause] there") == "hello there"


def _record(pairs: list[tuple[str, str]]):
    turns = [turn(0, "assistant", "hello", "hello")]
    for i, (ref, hyp) in enumerate(pairs, start=1):
        turns += [turn(i, "user", ref, hyp), turn(i, "assistant", "ok", "ok")]
    return make_record(turns, mode="audio")


def test_corpus_level_rate_and_error_lists() -> None:
    rec = _record([("my last name is doe", "my last name is dough"), ("yes please", "yes")])
    score = stt_wer(build_context(rec, make_scenario()))
    # 1 substitution + 1 deletion over 7 reference words.
    assert score.score == round(2 / 7, 3)
    assert score.normalized_score == round(1 - 2 / 7, 3)
    assert score.details["per_turn"]["1"]["substitutions"] == [
        {"expected": "doe", "actual": "dough"}
    ]
    assert score.details["per_turn"]["2"]["deletions"] == ["please"]
    assert score.details["reference_units"] == 7
    assert score.sub_metrics["substitution_rate"].score == round(1 / 7, 4)
    assert score.sub_metrics["insertion_rate"].score == 0.0


def test_pairs_with_an_empty_side_are_dropped() -> None:
    rec = _record([("hello there", ""), ("[pause]", "uh"), ("good morning", "good morning")])
    score = stt_wer(build_context(rec, make_scenario()))
    assert score.score == 0.0 and score.details["num_turns"] == 1


def test_no_comparable_turn_is_an_error() -> None:
    rec = _record([("hello there", "")])
    score = stt_wer(build_context(rec, make_scenario()))
    assert score.error is not None and score.score == 0.0


def test_cer_for_character_languages() -> None:
    rec = _record([("こんにちは", "こんにちわ")])
    score = stt_wer(build_context(rec, make_scenario(language="ja")))
    assert score.details["use_cer"] is True and score.score == round(1 / 5, 3)
    assert "cer" in score.details


FAST = settings(max_examples=100, deadline=None)


@FAST
@given(st.text(alphabet=string.ascii_uppercase + string.digits, min_size=2, max_size=10))
def test_spelled_code_meets_written_code(code: str) -> None:
    letters = [c for c in code if c.isalpha()]
    if set(letters) <= {"A", "I"} or re.fullmatch(r"[AI]?[1-9][AP]M", code):
        return  # the article/pronoun and bare times (see test_spoken.test_code_round_trip)
    # A lone NATO word among digits is a word by design ("Delta one way").
    for style in ("letters", "nato") if len(letters) > 1 else ("letters",):
        spoken = speak_code(code, style)  # type: ignore[arg-type]
        assert normalize_for_wer(f"it is {spoken}") == normalize_for_wer(f"it is {code}")


@FAST
@given(st.integers(0, 10**9), st.integers(0, 10_000_000), st.integers(0, 23), st.integers(0, 59))
def test_spoken_numbers_amounts_and_times_meet_written(n: int, cents: int, h: int, m: int) -> None:
    assert normalize_for_wer(speak_number(n)) == normalize_for_wer(str(n))
    amount = f"${cents // 100:,}.{cents % 100:02d}"
    assert normalize_for_wer(speak_amount(amount)) == normalize_for_wer(amount)
    hour12 = h % 12 or 12
    written = f"{hour12}:{m:02d} {'PM' if h >= 12 else 'AM'}"
    assert normalize_for_wer(speak_time(f"{h:02d}:{m:02d}")) == normalize_for_wer(written)
