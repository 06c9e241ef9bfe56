"""Data invariants of spec 1.8 (``evaflow scenarios validate``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scenarios.checks import find_placeholders, validate_scenarios
from scenarios.loader import load_eva_scenarios, load_scenario_dir
from scenarios.models import Scenario
from tests.scenarios.conftest import PACK_DOMAIN

OTHER_LANGUAGES = ["fr", "fr-CA", "es", "de", "hi", "ko"]


def test_eva_data_invariants_hold_without_replay(eva_scenarios: list[Scenario]) -> None:
    assert validate_scenarios(eva_scenarios, replay=False) == []


@pytest.mark.parametrize("domain", ["airline", "itsm", "medical_hr"])
def test_eva_traces_replay_to_expected_db(eva_scenarios: list[Scenario], domain: str) -> None:
    chosen = [s for s in eva_scenarios if s.domain == domain]
    assert [i.model_dump() for i in validate_scenarios(chosen)] == []


@pytest.mark.slow
@pytest.mark.parametrize("lang", OTHER_LANGUAGES)
def test_replay_outcome_is_the_same_in_every_language(eva_root: Path, lang: str) -> None:
    scenarios = load_eva_scenarios(eva_root, lang=lang)
    assert [i.model_dump() for i in validate_scenarios(scenarios)] == []


def test_find_placeholders() -> None:
    value = {"a": ["<FIRST_NAME> at <LOC:East Campus>"], "b": "<b>html</b>", "c": "x < Y >"}
    assert find_placeholders(value) == ["<FIRST_NAME>", "<LOC:East Campus>"]


def _broken(scenario: Scenario, **changes: Any) -> Scenario:
    return scenario.model_copy(update=changes, deep=True)


def test_inconsistent_current_date_is_reported(mini_pack: Path) -> None:
    scenario = load_scenario_dir(mini_pack)[0]
    expected = {**scenario.expected_db, "_current_date": "1999-01-01"}
    issues = validate_scenarios([_broken(scenario, expected_db=expected)], replay=False)
    assert [(i.check, i.field) for i in issues] == [("current_date", "expected_db._current_date")]


def test_leftover_placeholders_are_reported(mini_pack: Path) -> None:
    scenario = load_scenario_dir(mini_pack)[0]
    initial = {**scenario.initial_db, "note": "call <PHONE>"}
    goal = {**scenario.user_goal, "extra": "<LOC:Nowhere>"}
    issues = validate_scenarios([_broken(scenario, initial_db=initial, user_goal=goal)], False)
    found = {(i.check, i.field, i.severity) for i in issues}
    assert found == {
        ("placeholder", "initial_db", "error"),
        ("placeholder", "user_goal", "warning"),
    }


def test_duplicates_and_unknown_tools_are_reported(mini_pack: Path) -> None:
    scenario = load_scenario_dir(mini_pack)[0]
    trace = [
        *scenario.expected_trace,
        {"event_type": "tool_call", "tool_name": "reboot", "params": {}},
    ]
    issues = validate_scenarios([scenario, _broken(scenario, expected_trace=trace)], replay=False)
    assert sorted(i.check for i in issues) == ["duplicate_id", "unknown_tool"]


def test_trace_that_misses_the_expected_db_is_reported(mini_pack: Path, fake_engine: Any) -> None:
    dataset = mini_pack / f"{PACK_DOMAIN}_dataset.json"
    records = json.loads(dataset.read_text())
    records[0]["ground_truth"]["expected_trace"]["trace"] = []
    dataset.write_text(json.dumps(records))
    (issue,) = validate_scenarios(load_scenario_dir(mini_pack))
    assert issue.check == "trace_replay" and "tickets.INC" in issue.message


def test_sound_pack_has_no_issues(mini_pack: Path, fake_engine: Any) -> None:
    assert validate_scenarios(load_scenario_dir(mini_pack)) == []


def test_missing_engine_is_one_issue_per_domain(mini_pack: Path, no_engine: None) -> None:
    scenarios = load_scenario_dir(mini_pack)
    scenarios += [s.model_copy(update={"id": "T2"}) for s in scenarios]
    issues = validate_scenarios(scenarios)
    assert [(i.scenario, i.check) for i in issues] == [(f"{PACK_DOMAIN}/*", "trace_replay")]
