"""Enum options said as words are matched back to the schema's options (issue 32, I-9)."""

from __future__ import annotations

import pytest

from tasks.simulate.reference.enums import heard_words, match_option

LISTS = ["LIST_A", "LIST_B", "LIST_C"]
ACTIONS = ["initial_verification", "reverification"]
DOCS = [
    "US_PASSPORT",
    "PERM_RESIDENT_CARD",
    "EAD",
    "DRIVERS_LICENSE",
    "STATE_ID",
    "SSN_CARD",
    "BIRTH_CERT",
]
# Made-up schemas, so the rule is not fitted to the I-9 tool.
SEATS = ["window_seat", "aisle_seat", "middle_seat"]
KINDS = ["hw-fault", "sw-fault", "access_request"]


@pytest.mark.parametrize(
    ("heard", "enum", "option"),
    [
        ("LIST A.", LISTS, "LIST_A"),
        ("list b", LISTS, "LIST_B"),
        ("It's list-c.", LISTS, "LIST_C"),
        ("initial verification.", ACTIONS, "initial_verification"),
        ("Reverification, please.", ACTIONS, "reverification"),
        ("PERM RESIDENT CARD. S R C one two three.", DOCS, "PERM_RESIDENT_CARD"),
        ("a permanent resident card", DOCS, "PERM_RESIDENT_CARD"),
        ("my U.S. passport", DOCS, "US_PASSPORT"),
        ("Driver's license.", DOCS, "DRIVERS_LICENSE"),
        ("my birth certificate", DOCS, "BIRTH_CERT"),
        ("EAD.", DOCS, "EAD"),
        ("an employment authorization document", DOCS, "EAD"),
        ("the passport", DOCS, "US_PASSPORT"),  # its own word, no other option has it
        ("an aisle seat if you have one", SEATS, "aisle_seat"),
        ("Middle seat.", SEATS, "middle_seat"),
        ("it's a SW fault", KINDS, "sw-fault"),
        ("access request", KINDS, "access_request"),
    ],
)
def test_an_option_said_as_words_is_that_option(heard: str, enum: list[str], option: str) -> None:
    assert match_option(heard, enum) == option


@pytest.mark.parametrize(
    ("heard", "enum"),
    [
        ("I'm not sure.", LISTS),
        ("list", LISTS),  # which list?
        ("a card", DOCS),  # the article is not LIST_A's A, and "card" is two options
        ("list a or list b", LISTS),  # two options named alike: ask again
        ("window or aisle seat", SEATS),
        ("the passport, or else my driver's license", DOCS),
        ("anything", None),
    ],
)
def test_no_option_or_an_unclear_one_is_no_answer(heard: str, enum: list[str] | None) -> None:
    assert match_option(heard, enum) is None


def test_words_keep_the_article_sized_letter() -> None:
    assert heard_words("LIST A. U.S.") == ["list", "a", "u", "s"]
