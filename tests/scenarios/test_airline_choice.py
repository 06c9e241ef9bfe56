"""The airline records with two offers and a compound seat-and-meal question."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import scenarios
from scenarios.generate.airline_choice import choose_option
from scenarios.generate.spoken import spoken_time
from scenarios.loader import load_scenario_dir
from scenarios.models import Scenario

PACK_DIR = Path(scenarios.__file__).resolve().parent / "pack"


def _option(journey_id: str, departs: str) -> dict[str, Any]:
    return {"journey_id": journey_id, "segments": [{"scheduled_departure": departs}]}


def test_the_caller_picks_the_earliest_option_it_can_make() -> None:
    options = [_option("late", "19:10"), _option("early", "13:05"), _option("mid", "16:30")]
    assert choose_option(options, "16:30")["journey_id"] == "mid"  # type: ignore[index]
    assert choose_option(options, "14:00")["journey_id"] == "mid"  # type: ignore[index]
    assert choose_option(options, "12:00")["journey_id"] == "early"  # type: ignore[index]
    assert choose_option(options, "19:30") is None


@pytest.fixture(scope="module")
def choice_records() -> list[Scenario]:
    pack = load_scenario_dir(PACK_DIR)
    found = [
        s for s in pack if s.domain == "airline" and "Meal request" in s.user_goal[
            "information_required"]
    ]  # fmt: skip
    assert len(found) == 2
    return found


def _events(scenario: Scenario, kind: str) -> list[dict[str, Any]]:
    return [e for e in scenario.expected_trace if e["event_type"] == kind]


def test_the_agent_asks_seat_and_meal_in_the_turn_that_offers_two_flights(
    choice_records: list[Scenario],
) -> None:
    for scenario in choice_records:
        offer = next(e["utterance"] for e in _events(scenario, "agent_utterance")
                     if "Which one would you like" in e["utterance"])  # fmt: skip
        assert "seat preference" in offer and "meal request" in offer
        assert offer.count(" leaving at ") == 2


def test_the_booked_flight_is_the_one_the_goal_selects_and_the_caller_names(
    choice_records: list[Scenario],
) -> None:
    for scenario in choice_records:
        calls = {e["tool_name"]: e["params"] for e in _events(scenario, "tool_call")}
        responses = {e["tool_name"]: e["response"] for e in _events(scenario, "tool_response")}
        options = responses["search_rebooking_options"]["options"]
        goal = " ".join(scenario.user_goal["decision_tree"]["must_have_criteria"])
        limit = re.search(r"leaves at or after ([a-z ]+ [AP]M)", goal)
        assert limit is not None
        by_time = {spoken_time(o["segments"][0]["scheduled_departure"]): o for o in options}
        chosen = choose_option(options, _clock(limit[1], by_time))
        assert chosen is not None and chosen is not options[0]
        assert calls["rebook_flight"]["new_journey_id"] == chosen["journey_id"]
        said = spoken_time(chosen["segments"][0]["scheduled_departure"])
        answer = next(e["utterance"] for e in _events(scenario, "user_utterance")
                      if "I'll take the" in e["utterance"])  # fmt: skip
        assert said in answer
        info = scenario.user_goal["information_required"]
        assert info["Seat preference"] in answer
        assert info["Meal request"].replace("_", " ") in answer
        assert calls["add_meal_request"]["meal_type"] == info["Meal request"]
        assert calls["issue_meal_voucher"]["voucher_reason"] == "cancellation_wait_same_day"


def _clock(spoken: str, by_time: dict[str, Any]) -> str:
    """The "HH:MM" of a spoken half-hour limit ("two thirty PM" -> "14:30")."""
    for hour in range(24):
        for minute in (0, 30):
            hhmm = f"{hour:02d}:{minute:02d}"
            if spoken_time(hhmm) == spoken:
                return hhmm
    raise AssertionError(f"no clock time for {spoken!r} (offers: {sorted(by_time)})")


def test_one_record_answers_and_says_goodbye_in_the_same_line(
    choice_records: list[Scenario],
) -> None:
    """The held-back shape: the compound answer is the caller's last line, with goodbye,
    and the agent books, sets seat and meal, issues the voucher and closes after it."""
    closing = [s for s in choice_records if s.expected_trace[-1]["event_type"] == "agent_utterance"]
    assert len(closing) == 1
    trace = closing[0].expected_trace
    last_line = max(i for i, e in enumerate(trace) if e["event_type"] == "user_utterance")
    assert "goodbye" in trace[last_line]["utterance"]
    after = [e["tool_name"] for e in trace[last_line:] if e["event_type"] == "tool_call"]
    assert after == ["rebook_flight", "assign_seat", "add_meal_request", "issue_meal_voucher"]
