from __future__ import annotations

import pytest

from tasks.metrics.context import build_context
from tasks.metrics.stt_wer import compute as stt_wer
from tasks.metrics.stt_wer import strip_tags
from tasks.metrics.wer_normalize import normalize_for_wer, uses_cer
from tests.tasks.metrics.builders import make_record, make_scenario, turn


@pytest.mark.parametrize(
    ("written", "spoken"),
    [
        ("My employee ID is EMP048271.", "my employee id is E M P zero four eight two seven one"),
        ("The asset tag is AST-LAP-004512", "the asset tag is A S T dash L A P dash 0 0 4 5 1 2"),
        ("It was $23.50", "it was twenty three dollars and fifty cents"),
        ("The date is 2026-03-21", "the date is march twenty first twenty twenty six"),
        ("That\u2019s 50% off", "that's fifty percent off"),
        ("Um, yes, that's right", "yes that's right"),
        ("Room on the 3rd floor", "room on the third floor"),
    ],
)
def test_normaliser_makes_formatting_irrelevant(written: str, spoken: str) -> None:
    assert normalize_for_wer(written) == normalize_for_wer(spoken)


def test_normaliser_steps() -> None:
    assert normalize_for_wer("that\\u2019s it") == "thats it"  # escaped apostrophe
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
