"""Reading which offered option the caller chose (pure functions)."""

from __future__ import annotations

from typing import Any

from tasks.simulate.reference.choices import features, find_option, heard_choice, same_place

OPTIONS = [
    {"journey_id": "FL_A1", "origin": "BOS", "segments": [{"flight": "A1", "dep": "13:05"}]},
    {"journey_id": "FL_B2", "origin": "BOS", "segments": [{"flight": "B2", "dep": "19:10"}]},
]


def says(value: Any, text: str) -> bool:
    return str(value) in text


def test_options_are_found_and_told_apart_by_what_differs() -> None:
    found = find_option("FL_B2", {"status": "success", "options": OPTIONS})
    assert found is not None and found[1] == 1
    assert find_option("BOS", {"options": OPTIONS}) is None  # in every option: not a choice
    assert ["BOS", "BOS"] not in features(OPTIONS)
    assert ["13:05", "19:10"] in features(OPTIONS)
    assert same_place("FL_B2", OPTIONS[1], OPTIONS[0]) == "FL_A1"


def test_heard_choice_follows_the_heard_words() -> None:
    said = ["the 19:10 one please"]
    assert heard_choice(OPTIONS, 1, said, said, says) == 1
    assert heard_choice(OPTIONS, 1, said, ["the 13:05 one please"], says) == 0
    assert heard_choice(OPTIONS, 1, said, ["that one please"], says) is None
    # A choice the trace's caller did not make by name stays the agent's (the trace's).
    assert heard_choice(OPTIONS, 1, ["yes please"], ["yes please"], says) == 1


def test_same_words_as_the_trace_mean_the_same_choice_even_naming_both() -> None:
    said = ["cancel the 19:10 one and keep the 13:05 one"]
    assert heard_choice(OPTIONS, 1, said, said, says) == 1
    assert heard_choice(OPTIONS, 1, said, ["cancel the 19:10 one"], says) == 1
    assert heard_choice(OPTIONS, 1, said, ["keep the 13:05 one"], says) == 1  # no contradiction
    # A property the trace's caller never named for an option points away from the trace.
    assert heard_choice(OPTIONS, 1, ["the 19:10 one"], ["the 13:05 one"], says) == 0
