"""Loader: the whole EVA checkout, record selection, both pack layouts, clear errors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from scenarios.dbhash import db_hash
from scenarios.loader import (
    ScenarioError,
    load_agent_config,
    load_eva_scenarios,
    load_scenario_dir,
)
from scenarios.models import Scenario
from scenarios.resolve import current_date_of
from tests.scenarios.conftest import ALIAS, PACK_DOMAIN, make_record, write_pack

EVA_COUNTS = {"airline": 42, "itsm": 68, "medical_hr": 71}


def test_loads_every_eva_record(
    eva_scenarios: list[Scenario], eva_datasets: dict[str, list[dict[str, Any]]]
) -> None:
    counts = Counter(s.domain for s in eva_scenarios)
    assert counts == {domain: len(records) for domain, records in eva_datasets.items()}
    assert len({s.key for s in eva_scenarios}) == len(eva_scenarios)


def test_eva_record_counts_match_the_readme(eva_scenarios: list[Scenario]) -> None:
    assert Counter(s.domain for s in eva_scenarios) == EVA_COUNTS


def test_initial_db_carries_the_current_date(eva_scenarios: list[Scenario]) -> None:
    for scenario in eva_scenarios:
        assert scenario.initial_db["_current_date"] == current_date_of(scenario.current_date_time)


def test_resolved_expected_dbs_hash_like_the_reference(
    eva_scenarios: list[Scenario], eva_reference: dict[str, dict[str, Any]]
) -> None:
    mismatched = [
        s.key
        for s in eva_scenarios
        if db_hash(s.expected_db) != eva_reference[s.domain][s.id]["expected_db_sha256"]
    ]
    assert mismatched == []


def test_trace_params_are_resolved(
    eva_scenarios: list[Scenario], eva_datasets: dict[str, list[dict[str, Any]]]
) -> None:
    raw = {(d, r["id"]): r for d, records in eva_datasets.items() for r in records}
    for scenario in eva_scenarios:
        record = raw[(scenario.domain, scenario.id)]
        romanized = (
            record.get("romanized_culture_overrides", {}).get("en")
            or record["culture_overrides"]["en"]
        )
        text = json.dumps(scenario.expected_trace)
        assert "_ROMANIZED>" not in text and "<LOC:" not in text
        raw_text = json.dumps(record["ground_truth"]["expected_trace"])
        if "<LAST_NAME_ROMANIZED>" in raw_text:
            assert romanized["last_name"].lower() in text


def test_every_scenario_gets_its_domain_agent(eva_scenarios: list[Scenario]) -> None:
    for scenario in eva_scenarios:
        assert scenario.agent.id == f"agent_{scenario.domain}"
        assert scenario.agent.tools


def test_record_selection_by_id_and_key(eva_root: Path) -> None:
    picked = load_eva_scenarios(eva_root, record_ids=["itsm/1", "1.2"])
    assert {s.key for s in picked} >= {"itsm/1", "medical_hr/1.2"}
    assert all(s.id in {"1", "1.2"} for s in picked)


def test_unknown_record_id_is_named(eva_root: Path) -> None:
    with pytest.raises(ScenarioError, match="no-such-record"):
        load_eva_scenarios(eva_root, domains=["airline"], record_ids=["no-such-record"])


def test_unknown_domain_lists_the_valid_ones(eva_root: Path) -> None:
    with pytest.raises(ScenarioError, match="unknown domain 'banking'.*airline, itsm, medical_hr"):
        load_eva_scenarios(eva_root, domains=["banking"])


def test_non_english_goal_uses_alias_translation(eva_root: Path) -> None:
    alias = json.loads((eva_root / "data" / "itsm_aliases" / "headquarters.json").read_text())
    records = json.loads((eva_root / "data" / "itsm_dataset.json").read_text())
    with_loc = [r["id"] for r in records if "<LOC:Headquarters>" in json.dumps(r["user_goal"])]
    assert with_loc, "the ITSM data should use <LOC:Headquarters>"
    scenario = load_eva_scenarios(eva_root, ["itsm"], [with_loc[0]], lang="fr")[0]
    translated = alias["translations"]["fr"][0]
    assert translated in json.dumps(scenario.user_goal, ensure_ascii=False)
    assert scenario.language == "fr"


def test_load_agent_config_reads_tool_schemas(eva_root: Path) -> None:
    agent = load_agent_config(eva_root / "configs" / "agents" / "airline_agent.yaml")
    assert agent.id == "agent_airline"
    assert "get_reservation" in agent.tool_names
    assert {t.tool_type for t in agent.tools} <= {"auth", "read", "write", "system"}


# ---- our own pack format -------------------------------------------------------------


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "eva-layout"])
def test_pack_loads_in_both_layouts(tmp_path: Path, nested: bool) -> None:
    pack = write_pack(tmp_path / "pack", [make_record("T1"), make_record("T2")], nested=nested)
    scenarios = load_scenario_dir(pack, source="builtin")
    assert [s.key for s in scenarios] == [f"{PACK_DOMAIN}/T1", f"{PACK_DOMAIN}/T2"]
    first = scenarios[0]
    assert first.source == "builtin"
    assert first.user_config["name"] == "Ada Lovelace"
    assert first.initial_db["employees"]["EMP000001"]["last_name"] == "lovelace"
    assert "Headquarters" in first.user_goal["high_level_user_goal"]
    assert first.user_goal["starting_utterance"] == "Hi, it's Ada."
    assert first.expected_end_reason == "user_ended_call"


def test_pack_aliases_are_injected_in_both_dbs(mini_pack: Path) -> None:
    scenario = load_scenario_dir(mini_pack, lang="fr")[0]
    merged = ALIAS["base"] + ALIAS["translations"]["fr"]
    want = list(dict.fromkeys(merged))
    for db in (scenario.initial_db, scenario.expected_db):
        assert db["facilities"]["buildings"][0]["name_aliases"] == want
    assert ALIAS["translations"]["fr"][0] in scenario.user_goal["high_level_user_goal"]
    assert scenario.initial_db["employees"]["EMP000001"]["first_name"] == "elodie"


# ---- error messages name file, record and field -------------------------------------


def _dataset(pack: Path) -> Path:
    return pack / f"{PACK_DOMAIN}_dataset.json"


def _rewrite(pack: Path, change: Any) -> None:
    records = json.loads(_dataset(pack).read_text())
    change(records[0])
    _dataset(pack).write_text(json.dumps(records))


def _error(pack: Path, **kwargs: Any) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        load_scenario_dir(pack, **kwargs)
    return info.value


def test_bad_json_names_file_and_position(mini_pack: Path) -> None:
    _dataset(mini_pack).write_text('[{"id": "T1",]')
    error = _error(mini_pack)
    assert error.file == str(_dataset(mini_pack))
    assert "invalid JSON at line 1" in str(error)


def test_missing_field_names_record_and_field(mini_pack: Path) -> None:
    _rewrite(mini_pack, lambda r: r["user_goal"].pop("high_level_user_goal"))
    error = _error(mini_pack)
    assert (error.record_id, error.field) == ("T1", "user_goal.high_level_user_goal")
    assert str(_dataset(mini_pack)) in str(error) and "Field required" in str(error)


def test_missing_scenario_context_is_an_error(mini_pack: Path) -> None:
    _rewrite(mini_pack, lambda r: r.pop("scenario_context"))
    assert _error(mini_pack).field == "scenario_context"


def test_wrong_type_names_field_and_value(mini_pack: Path) -> None:
    _rewrite(mini_pack, lambda r: r.update(user_goal="fix my laptop"))
    error = _error(mini_pack)
    assert error.field == "user_goal"
    assert "fix my laptop" in str(error)


def test_integer_record_id_is_a_type_error(mini_pack: Path) -> None:
    _rewrite(mini_pack, lambda r: r.update(id=7))
    error = _error(mini_pack)
    assert (error.record_id, error.field) == ("#0", "id")


def test_malformed_date_time_is_rejected(mini_pack: Path) -> None:
    _rewrite(mini_pack, lambda r: r.update(current_date_time="March 10"))
    assert _error(mini_pack).field == "current_date_time"


def test_missing_scenario_db_file_is_named(mini_pack: Path) -> None:
    db_file = mini_pack / f"{PACK_DOMAIN}_scenarios" / "T1.json"
    db_file.unlink()
    error = _error(mini_pack)
    assert (error.file, error.record_id) == (str(db_file), "T1")
    assert "file not found" in str(error)


def test_broken_scenario_db_json_is_named(mini_pack: Path) -> None:
    db_file = mini_pack / f"{PACK_DOMAIN}_scenarios" / "T1.json"
    db_file.write_text("{")
    error = _error(mini_pack)
    assert (error.file, error.record_id) == (str(db_file), "T1")


def test_initial_current_date_must_match(mini_pack: Path) -> None:
    db_file = mini_pack / f"{PACK_DOMAIN}_scenarios" / "T1.json"
    db = json.loads(db_file.read_text())
    db["_current_date"] = "2026-01-01"
    db_file.write_text(json.dumps(db))
    error = _error(mini_pack)
    assert (error.file, error.field) == (str(db_file), "_current_date")
    assert "2026-01-01" in str(error) and "2026-03-10" in str(error)


def test_expected_current_date_must_match(mini_pack: Path) -> None:
    def shift(record: dict[str, Any]) -> None:
        record["ground_truth"]["expected_scenario_db"]["_current_date"] = "2026-03-11"

    _rewrite(mini_pack, shift)
    error = _error(mini_pack)
    assert error.field == "ground_truth.expected_scenario_db._current_date"


def test_missing_language_is_named(mini_pack: Path) -> None:
    error = _error(mini_pack, lang="de")
    assert error.field == "culture_overrides.de"


def test_duplicate_record_id_is_rejected(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack", [make_record("T1"), make_record("T1")])
    assert _error(pack).field == "id"


def test_unknown_pack_domain_is_rejected(mini_pack: Path) -> None:
    _dataset(mini_pack).rename(mini_pack / "banking_dataset.json")
    with pytest.raises(ScenarioError, match="unknown domain 'banking'"):
        load_scenario_dir(mini_pack)


def test_missing_agent_config_is_named(mini_pack: Path) -> None:
    agent = mini_pack / "agents" / f"{PACK_DOMAIN}_agent.yaml"
    agent.unlink()
    assert _error(mini_pack).file == str(agent)


def test_bad_agent_tool_type_names_the_field(mini_pack: Path) -> None:
    agent = mini_pack / "agents" / f"{PACK_DOMAIN}_agent.yaml"
    agent.write_text(agent.read_text().replace("tool_type: write", "tool_type: delete", 1))
    error = _error(mini_pack)
    assert error.file == str(agent) and error.field == "tools.0.tool_type"


def test_trace_event_needs_its_fields(mini_pack: Path) -> None:
    _rewrite(mini_pack, lambda r: r["ground_truth"]["expected_trace"]["trace"][1].pop("tool_name"))
    error = _error(mini_pack)
    assert error.field == "ground_truth.expected_trace.trace.1.tool_call.tool_name"
