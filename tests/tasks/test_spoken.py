"""tasks.spoken: speaking entities and reading recognised text back."""

from __future__ import annotations

import datetime as dt
import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks.spoken import (
    entity_heard,
    extract_entities,
    normalize_spoken,
    render_spoken,
    speak_amount,
    speak_code,
    speak_date,
    speak_digits,
    speak_number,
    speak_time,
)
from tasks.spoken.normalize import spoken_spans

ALNUM = string.ascii_uppercase + string.digits
FAST = settings(max_examples=150, deadline=None)


# --------------------------------------------------------------------------- speaking


def test_speak_examples_from_the_contract() -> None:
    assert speak_code("ZK3FFW") == "Z K three F F W"
    assert speak_code("ZK3FFW", "nato") == "Zulu Kilo three Foxtrot Foxtrot Whiskey"
    assert speak_amount("$1,250.50") == "one thousand two hundred fifty dollars and fifty cents"
    assert speak_date("2026-03-25") == "March twenty fifth, twenty twenty six"
    assert speak_time("16:00") == "four PM"
    assert speak_time("09:05") == "nine oh five AM"
    assert speak_number(1250) == "one thousand two hundred fifty"
    assert speak_digits("0148") == "zero one four eight"


def test_speak_edge_forms() -> None:
    assert speak_amount(1) == "one dollar"
    assert speak_amount(0.01) == "one cent"
    assert speak_amount("0.5") == "fifty cents"
    assert speak_time("00:30") == "twelve thirty AM"
    assert speak_time("12:00") == "twelve PM"
    assert speak_date("2005-01-01").endswith("two thousand five")
    assert speak_date("1988-02-17") == "February seventeenth, nineteen eighty eight"
    assert speak_number("3.25") == "three point two five"
    assert speak_code("TOU-77A") == "T O U dash seven seven A"


@pytest.mark.parametrize(
    ("fn", "arg"),
    [
        (speak_code, "ZK$3"),
        (speak_code, ""),
        (speak_date, "25/03/2026"),
        (speak_date, "2026-13-01"),
        (speak_time, "25:00"),
        (speak_time, "4pm"),
        (speak_amount, "twelve"),
        (speak_number, "12a"),
        (speak_digits, "--"),
    ],
)
def test_speak_rejects_bad_values_naming_them(fn, arg) -> None:
    with pytest.raises(ValueError, match=fn.__name__):
        fn(arg)


def test_unknown_code_style_is_an_error() -> None:
    with pytest.raises(ValueError, match="style"):
        speak_code("AB12", "morse")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- round trips


@FAST
@given(st.text(alphabet=ALNUM, min_size=2, max_size=10), st.sampled_from(["letters", "nato"]))
def test_code_round_trip(code: str, style: str) -> None:
    letters = [c for c in code if c.isalpha()]
    # Spelled "A"/"I" with no other letter are the article/pronoun by design ("a two hour
    # wait"); a lone NATO word among digits is a word ("Delta one way").
    if (style == "letters" and set(letters) <= {"A", "I"}) or (
        style == "nato" and len(letters) == 1
    ):
        return
    # Spelled letter by letter, a bare hour + "A M"/"P M" ("one A M", "A one P M") is a
    # time by design; next to more spelled symbols it is a code ("X one A M").
    if style == "letters" and re.fullmatch(r"[AI]?[1-9][AP]M", code):
        return
    assert normalize_spoken(speak_code(code, style)) == code  # type: ignore[arg-type]


@FAST
@given(st.integers(0, 999_999))
def test_employee_id_round_trip(number: int) -> None:
    emp = f"EMP{number:06d}"
    for style in ("letters", "nato"):
        assert normalize_spoken(speak_code(emp, style)) == emp  # type: ignore[arg-type]


@FAST
@given(st.text(alphabet=string.digits, min_size=2, max_size=12))
def test_digits_and_npi_round_trip(digits: str) -> None:
    assert normalize_spoken(speak_digits(digits)) == digits


@FAST
@given(st.integers(0, 10**9))
def test_number_round_trip(n: int) -> None:
    assert normalize_spoken(speak_number(n)) == str(n)


@FAST
@given(st.integers(0, 10_000_000))
def test_amount_round_trip(cents: int) -> None:
    dollars, rest = divmod(cents, 100)
    written = f"${dollars:,}" + (f".{rest:02d}" if rest else "")
    expected = f"${dollars}" + (f".{rest:02d}" if rest else "")
    assert normalize_spoken(speak_amount(written)) == expected
    assert normalize_spoken(written) == expected


@FAST
@given(st.dates(dt.date(1900, 1, 1), dt.date(2099, 12, 31)))
def test_date_round_trip(day: dt.date) -> None:
    iso = day.isoformat()
    assert normalize_spoken(speak_date(iso)) == iso
    assert normalize_spoken(iso) == iso
    assert normalize_spoken(day.strftime("%B %d, %Y")) == iso


@FAST
@given(st.integers(0, 23), st.integers(0, 59))
def test_time_round_trip(hour: int, minute: int) -> None:
    hhmm = f"{hour:02d}:{minute:02d}"
    assert normalize_spoken(speak_time(hhmm)) == hhmm
    assert normalize_spoken(hhmm) == hhmm


@FAST
@given(st.text(alphabet=string.ascii_letters + string.digits + " ,.$:-", max_size=40))
def test_normalize_is_idempotent(text: str) -> None:
    once = normalize_spoken(text)
    assert normalize_spoken(once) == once


# --------------------------------------------------------------------------- recognised text


@pytest.mark.parametrize(
    ("heard", "expected"),
    [
        ("twenty five", "25"),
        ("one thousand two hundred", "1200"),
        ("one hundred and five", "105"),
        ("a hundred dollars", "$100"),
        ("fifty cents", "$0.50"),
        ("march twenty fifth", "march 25"),
        ("the fifth of march twenty twenty six", "2026-03-05"),
        ("four thirty p m", "16:30"),
        ("ten o'clock a.m.", "10:00"),
        ("double f seven", "FF7"),
        ("r e q dash one two three four", "REQ1234"),
        ("seven two nine four i think", "7294 i think"),
        ("i need a two hour layover", "i need a 2 hour layover"),
        ("wait a second", "wait a second"),
        ("i'm flying delta one way", "i'm flying delta 1 way"),
        ("oh i see", "oh i see"),
        ("it's the twenty-fifth", "it's the 25th"),
        ("Hello, there!", "hello there"),
    ],
)
def test_normalize_recognised_phrases(heard: str, expected: str) -> None:
    assert normalize_spoken(heard) == expected


def test_normalize_written_forms() -> None:
    written = "It costs $1,250.50 on March 25, 2026 at 4:00 PM; ref TOU-77A, call 617-555-0148."
    assert normalize_spoken(written) == (
        "it costs $1250.50 on 2026-03-25 at 16:00 ref TOU77A call 6175550148"
    )


# --------------------------------------------------------------------------- entities

SENTENCE = (
    "My employee ID is EMP048271, last four digits 7294. Confirmation ZK3FFW, NPI 3615507143, "
    "flight SK621 on 2026-03-25 at 4:00 PM for $120.50. Ticket INC0012345, "
    "email arjun.mehta@company.com, facility TOU-77A, confirmation code is NHNRTO."
)


def test_extract_entities_types_values_and_spans() -> None:
    entities = extract_entities(SENTENCE)
    found = [(e.type, e.value) for e in entities]
    assert found == [
        ("employee_id", "EMP048271"),
        ("digits", "7294"),
        ("code", "ZK3FFW"),
        ("npi", "3615507143"),
        ("flight_number", "SK621"),
        ("date", "2026-03-25"),
        ("time", "16:00"),
        ("amount", "$120.50"),
        ("ticket_id", "INC0012345"),
        ("email", "arjun.mehta@company.com"),
        ("code", "TOU77A"),
        ("code", "NHNRTO"),
    ]
    for entity in entities:
        assert SENTENCE[entity.start : entity.end] == entity.text


def test_plain_words_are_not_entities() -> None:
    assert extract_entities("I need to change my flight, PLEASE, to Austin.") == []


@pytest.mark.parametrize("style", ["letters", "nato"])
def test_rendered_sentence_reads_back_every_entity(style: str) -> None:
    spoken = render_spoken(SENTENCE, style)  # type: ignore[arg-type]
    assert not any(c.isdigit() for c in spoken)
    for entity in extract_entities(SENTENCE):
        if entity.type != "email":  # an email read back as "dot"/"at" words stays words
            assert entity_heard(entity, spoken), entity


def test_entity_heard_is_exact() -> None:
    (code,) = extract_entities("code ZK3FFW")
    assert entity_heard(code, "it is zulu kilo three foxtrot foxtrot whiskey")
    assert not entity_heard(code, "it is zulu kilo three foxtrot foxtrot")


# --------------------------------------------------------------------------- WER spans


def test_spoken_spans_find_times_and_codes_not_numbers() -> None:
    text = "call Z K three F F W at four thirty p m or one A M not twenty twenty four"
    assert spoken_spans(text.split(" ")) == [(1, 7, "ZK3FFW"), (8, 12, "4 30 pm"), (13, 16, "1 am")]
    assert spoken_spans(["seven", "two", "nine", "four", "i", "think"]) == []
    assert spoken_spans(["x", "one", "a", "m"]) == [(0, 4, "X1AM")]


@FAST
@given(st.text(alphabet=ALNUM, min_size=2, max_size=10))
def test_spoken_spans_cover_a_spelled_code_with_a_letter(code: str) -> None:
    letters = [c for c in code if c.isalpha()]
    if set(letters) <= {"A", "I"} or re.fullmatch(r"[AI]?[1-9][AP]M", code):
        return  # the article/pronoun and bare times, as in test_code_round_trip
    words = speak_code(code).lower().split()
    assert spoken_spans(words) == [(0, len(words), code)]


# --------------------------------------------------------------------------- small shapes


def test_a_letter_glued_to_a_number_is_said_as_two_tokens() -> None:
    assert render_spoken("Gate B12, seat 12A.") == "Gate B twelve, seat twelve A."


NUMBER_WORDS = {w for n in range(1000) for w in speak_number(str(n)).replace("-", " ").split()}


@FAST
@given(
    st.text(alphabet=string.ascii_uppercase, min_size=1, max_size=2),
    st.integers(0, 999),
    st.booleans(),
)
def test_no_rendered_token_mixes_a_letter_with_a_number_word(
    letters: str, number: int, letters_first: bool
) -> None:
    token = f"{letters}{number}" if letters_first else f"{number}{letters}"
    spoken = render_spoken(f"go to {token} now")
    for piece in spoken.replace("-", " ").split()[2:-1]:
        # Each token is a number word or spelled capitals, never "Btwelve" / "twelveA".
        assert piece in NUMBER_WORDS or (piece.isalpha() and piece.isupper()), (token, spoken)


def test_the_word_id_is_a_label_not_a_code() -> None:
    found = [(e.type, e.text) for e in extract_entities("Case ID-48213, badge ID-AB12.")]
    assert found == [("digits", "48213"), ("flight_number", "AB12")]
    assert extract_entities("Please have your photo ID and booking ID ready.") == []
