"""Reading caller values from heard words: content from the words, layout from the format."""

from __future__ import annotations

from datetime import date

import pytest

from tasks.simulate.dialogue.formats import param_format
from tasks.simulate.dialogue.slots import SlotReader, align_span, signature, tokens, value_kind

TODAY = date(2026, 3, 17)
READER = SlotReader(TODAY, {"northlot": "North Surface Lot", "hq": "Headquarters"})


def test_tokens_join_spelled_runs_but_stop_at_pauses() -> None:
    assert tokens("My employee ID is E M P zero six seven five two one.") == [
        "my", "employee", "ID", "is", "EMP067521",
    ]  # fmt: skip
    assert tokens("B L D three, F L three, D three zero two") == ["BLD3", "FL3", "D302"]
    assert tokens("September first, twenty twenty-seven") == ["2027-09-01"]


@pytest.mark.parametrize(
    ("value", "kind"),
    [("2026-03-25", "date"), ("13:00", "time"), ("2026-08-11 10:00", "datetime"),
     (120, "number"), (1.5, "number"), ("ZK3FFW", "text"), (True, "text")],
)  # fmt: skip
def test_value_kinds(value: object, kind: str) -> None:
    assert value_kind(value) == kind


@pytest.mark.parametrize(
    ("value", "intended", "heard", "expected"),
    [
        ("EMP067521", "My ID is E M P zero six seven five two one.",
         "my id is e m p zero six seven five two one", "EMP067521"),
        ("EMP067521", "My ID is E M P zero six seven five two one.",
         "my id is e m p zero six seven five two nine", "EMP067529"),
        ("2026-03-25", "I need to move it to March 25.", "i need to move it to march twenty fifth",
         "2026-03-25"),
        ("1992-11-08", "It is one nine nine two dash one one dash zero eight.",
         "it is one nine nine two dash one one dash zero eight", "1992-11-08"),
        ("HFS-50D", "The code is H F S dash five zero D.", "the code is h f s dash five zero d",
         "HFS-50D"),
        ("KQHK-51F", "It is K Q H K, five one F.", "it is k q h k five one f", "KQHK-51F"),
        ("rodriguez", "ZK3FFW. Last name Rodriguez.", "z k three f f w last name rodriguez",
         "rodriguez"),
        ("FL3", "Check floor 3 instead.", "check floor three instead", "FL3"),
        ("FL3", "Check floor 3 instead.", "check floor four instead", "FL4"),
        ("North Surface Lot", "Parking in the North Lot please.", "parking in the north lot please",
         "North Surface Lot"),
        ("16:00", "Arrive by 4:00 PM.", "arrive by four p m", "16:00"),
        (120, "Keep it under $120.", "keep it under one hundred twenty dollars", 120),
        ("4917", "The last four are four nine one seven.", "the last four are four nine one seven",
         "4917"),
    ],
)  # fmt: skip
def test_values_are_read_from_heard_words(
    value: object, intended: str, heard: str, expected: object
) -> None:
    got = READER.extract_aligned(value, intended, heard)
    assert got is not None
    assert READER.format_like(got, value, None) == expected


def test_a_value_the_caller_never_said_is_not_located() -> None:
    assert READER.locate("EMP067521", tokens("Hi, I need a new laptop.")) == []
    assert READER.extract_aligned("EMP067521", "Hi, I need a new laptop.", "hi") is None


def test_enum_values_map_to_options_or_stay_as_heard() -> None:
    options = ["13_inch", "14_inch", "16_inch"]
    assert READER.format_like("14 inch", "14_inch", options) == "14_inch"
    assert READER.format_like("40 inch", "14_inch", options) == "40 inch"


NAME = param_format("text", "last_name", "Passenger last name for verification")
SMS = param_format("text", "otp_code", "The 6-digit code the caller reads from their SMS.")
DATE = param_format("date", "preferred_date", "Preferred date in YYYY-MM-DD format.")
EMPLOYEE = param_format(
    "text", "employee_id", "In the format EMP followed by 6 digits (e.g. EMP048271)."
)


def test_schema_formats_come_from_examples_and_counted_phrases() -> None:
    assert EMPLOYEE.shape == "LLLDDDDDD" and EMPLOYEE.fits("emp123456")
    assert not EMPLOYEE.fits("emp12345") and not EMPLOYEE.fits("emq12345x")
    assert SMS.shape == "DDDDDD" and NAME.shape is None and NAME.name
    confirmation = param_format("text", "confirmation_number", "6-character alphanumeric code")
    assert confirmation.shape == "XXXXXX" and confirmation.fits("63ffev")


def test_answers_prefer_spelled_tokens_of_the_right_shape() -> None:
    candidates = READER.extract_candidates("It's Rodrigues, R O D R I G U E Z.", NAME)
    assert candidates[0] == "RODRIGUEZ"
    assert READER.extract_candidates("The code is four eight two nine one three.", SMS) == [
        "482913"
    ]
    window = READER.extract_candidates("on march twenty fifth", DATE)[0]
    assert READER.format_like(window, "2026-03-25", None) == "2026-03-25"


def test_two_value_shaped_windows_rank_by_format_and_spelling_not_the_trace_value() -> None:
    # Both heard codes are EMP + 6 digits; the trace's letters would pick the second (the
    # one the golden trace holds), a deployed agent cannot: the spelled one comes first.
    heard = "emp 123 456 or maybe E M P six five four three two one"
    assert READER.extract_candidates(heard, EMPLOYEE)[0] == "EMP654321"
    # A plain name said twice: the whole answer, not a piece sized like the secret.
    assert READER.extract_candidates("De La Cruz.", NAME)[0] == "de la cruz"
    # A schema enum option said as words wins over a spelled code in the same answer.
    kinds = ["US_PASSPORT", "EAD"]
    code = param_format("text", "document_type_code", "The document type.")
    answer = "US PASSPORT. J two O seven S three."
    assert READER.extract_candidates(answer, code)[0] == "J2O7S3"
    assert READER.extract_candidates(answer, code, kinds)[0] == "US PASSPORT"
    floor = param_format("text", "floor", "The floor (e.g. FL2).")
    assert READER.extract_candidates("floor 3", floor)[0] == "floor 3"


def test_domain_alias_is_rendered_as_its_canonical_name() -> None:
    assert READER.format_like("hq", "Headquarters", None) == "Headquarters"
    # An alias of another place is that place's name, not the trace's value.
    assert READER.format_like("north lot", "Headquarters", None) == "North Surface Lot"


def test_dates_without_a_year_take_the_next_occurrence() -> None:
    assert READER.format_like("march 10", "2026-03-10", None) == "2026-03-10"
    assert READER.format_like("january 5", "2027-01-05", None) == "2027-01-05"


def test_alignment_maps_windows_through_substitutions() -> None:
    src = ["my", "code", "is", "ZK3FFW", "thanks"]
    assert align_span(src, ["my", "code", "is", "ZK3FSW", "thanks"], 3, 4) == (3, 4)
    assert align_span(src, ["um", "my", "code", "is", "ZK3FFW", "thanks"], 3, 4) == (4, 5)
    assert signature("El-Amin") == "elamin"


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("Yes, that's the one.", False),
        ("I need another one today, but not too early.", False),
        ("One of them is fine.", False),
        ("I have one checked bag.", True),
        ("Just one passenger.", True),
    ],
)
def test_the_pronoun_one_is_not_the_number_one(line: str, found: bool) -> None:
    """A caller's "that's the one" does not give a passenger count of 1 (the agent would
    otherwise wait to hear a 1 there, and ask for it when the recogniser drops the word)."""
    assert bool(READER.locate(1, tokens(line))) is found
