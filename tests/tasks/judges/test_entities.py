"""Entity finding in caller speech and lenient entity matching."""

from __future__ import annotations

import pytest

from tasks.judges.offline.entities import find_entities, heard_as, proper_nouns, same_entity


def values(text: str) -> dict[str, str]:
    return {e.canonical: e.type for e in find_entities(text)}


def test_spelled_code_and_name() -> None:
    found = values("My confirmation number is Z K three F F W and the last name is Rodriguez.")
    assert found == {"zk3ffw": "code", "rodriguez": "name"}


def test_phonetic_spelling_reads_as_the_symbols() -> None:
    assert "ytm924" in values("It is Y T M nine two four, Y as in Yankee, T as in Tango.")
    assert "ntjbne" in values(
        "N as in November, T as in Tango, J as in Juliett, B as in Bravo, "
        "N as in November, E as in Echo."
    )


def test_dates_times_amounts_seats_and_flights() -> None:
    found = values(
        "Book Skyway four one two on March twenty fifth at eight fifty five a m, seat twenty "
        "one A, under one hundred twenty dollars, gate C one two."
    )
    assert {"skyway 412", "march 25", "8:55", "21a", "120", "c12"} <= set(found)


def test_spoken_email_phone_and_airport_codes() -> None:
    found = values(
        "Email jason dot price at gmail dot com, phone five five five... zero one "
        "four seven. I fly AUS to LAX."
    )
    assert {"jason.price@gmail.com", "5550147", "aus", "lax"} <= set(found)


def test_no_entities_in_small_talk() -> None:
    assert find_entities("Great, thanks. Goodbye!") == []
    assert find_entities("Yes, please go ahead and keep the window seat.") == []


def test_proper_nouns_skip_sentence_starts_and_spelling() -> None:
    assert proper_nouns("Boston is lovely. I fly from Chicago O Hare to New York Kennedy.") == [
        "Chicago O Hare",
        "New York Kennedy",
    ]
    assert proper_nouns("My code is K D D eight C V.") == []


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("Z K three F F W", "ZK3FFW", True),
        ("one hundred twenty dollars", "$120", True),
        ("March twenty fifth", "March 25th", True),
        ("eight fifty five a m", "8:55 a.m.", True),
        ("X T R F three Q (XTRF3Q)", "XTRF3Q", True),
        ("9 AM tomorrow", "nine a m", True),
        ("Skyway 330", "skyway three three zero", True),
        ("ZK3FFW", "ZK3FF", False),
        ("one hundred fifteen dollars", "$150", False),
        ("Nelson", "Nielsen", False),
    ],
)
def test_same_entity(a: str, b: str, same: bool) -> None:
    assert same_entity(a, b) is same


def test_heard_as_exact_and_mishearing() -> None:
    code = next(e for e in find_entities("The code is Z K three F F W.") if e.type == "code")
    assert heard_as(code, "the code is zk3ffw")[0] is True
    assert heard_as(code, "The code is Z-K-3-F-F-W.")[0] is True
    ok, closest = heard_as(code, "the code is ck3ffw")
    assert ok is False and closest == "ck3ffw"


@pytest.mark.parametrize(
    "said",
    [
        "My date of birth is September twenty eighth, nineteen ninety one.",
        "I worked thirteen point five hours on that shift.",
        "It was bought in July twenty twenty three, I think.",
        "Openings on July eighth, twenty twenty-six: ten AM and two PM.",
        "Effective April first, twenty twenty six through March thirty first, twenty twenty seven.",
    ],
)
def test_text_heard_exactly_as_said_keeps_every_entity(said: str) -> None:
    # Entities are read clause by clause; the transcript must be read the same ways.
    for entity in find_entities(said):
        assert heard_as(entity, said)[0], entity


def test_decimal_durations_month_years_and_spoken_flight_numbers() -> None:
    assert values("I worked thirteen point five hours.")["13.5 hours"] == "duration"
    assert values("It is from July twenty twenty three.")["july 2023"] == "month_year"
    assert values("You are on SkyWay two fifty-five today.")["skyway 255"] == "flight_number"
    assert "6:10" not in values("Openings on July eighth, twenty twenty-six: ten AM.")
