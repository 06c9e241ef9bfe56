"""Golden replay: every reference tool call must give the reference response and final DB."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml

from scenarios.dbhash import db_hash
from scenarios.engines.airline import TOOLS, params
from scenarios.executor import ToolEngine
from scenarios.resolve import resolve_scenario_db, resolve_value


def load_records(eva_root: Path) -> dict[str, dict[str, Any]]:
    records = json.loads((eva_root / "data" / "airline_dataset.json").read_text("utf-8"))
    return {r["id"]: r for r in records}


def load_initial_db(eva_root: Path, record: dict[str, Any]) -> dict[str, Any]:
    """A record's initial DB, built exactly as the brief prescribes (airline has no aliases)."""
    path = eva_root / "data" / "airline_scenarios" / f"{record['id']}.json"
    raw = json.loads(path.read_text("utf-8"))
    return resolve_scenario_db(raw, record, "en", None)


def agent_tools(eva_root: Path) -> list[dict[str, Any]]:
    config = yaml.safe_load((eva_root / "configs" / "agents" / "airline_agent.yaml").read_text())
    return config["tools"]


@pytest.fixture(scope="module")
def golden(eva_root: Path) -> dict[str, Any]:
    return json.loads((eva_root / "reference_replay" / "airline.json").read_text("utf-8"))


def test_replay_reproduces_every_response_and_final_hash(
    eva_root: Path, golden: dict[str, Any]
) -> None:
    records = load_records(eva_root)
    names = [t["id"] for t in agent_tools(eva_root)]
    bad_responses: list[str] = []
    bad_hashes: list[str] = []
    total_calls = 0
    for record_id, entry in golden.items():
        engine = ToolEngine("airline", load_initial_db(eva_root, records[record_id]), names)
        for call in entry["calls"]:
            total_calls += 1
            got = json.loads(json.dumps(engine.execute(call["tool"], call["params"])))
            if got != call["response"]:
                bad_responses.append(f"{record_id} {call['tool']} {call['params']}")
        if engine.final_hash != entry["final_db_sha256"]:
            bad_hashes.append(record_id)
    assert total_calls > 0
    assert bad_responses == [], f"{len(bad_responses)}/{total_calls} responses differ"
    assert bad_hashes == [], f"{len(bad_hashes)}/{len(golden)} final DB hashes differ"


def test_final_hash_equals_expected_db_hash(eva_root: Path, golden: dict[str, Any]) -> None:
    records = load_records(eva_root)
    for record_id, entry in golden.items():
        record = records[record_id]
        expected = resolve_value(record["ground_truth"]["expected_scenario_db"], record, "en")
        expected["_current_date"] = record["current_date_time"].split(" ", 1)[0]
        assert db_hash(expected) == entry["expected_db_sha256"] == entry["final_db_sha256"]


def test_engine_implements_exactly_the_yaml_tools(eva_root: Path) -> None:
    assert sorted(t["id"] for t in agent_tools(eva_root)) == sorted(TOOLS)


MODEL_OF_TOOL: dict[str, type[params.AirlineParams]] = {
    "get_reservation": params.GetReservationParams,
    "get_flight_status": params.GetFlightStatusParams,
    "get_disruption_info": params.GetDisruptionInfoParams,
    "search_rebooking_options": params.SearchRebookingParams,
    "rebook_flight": params.RebookFlightParams,
    "add_to_standby": params.AddToStandbyParams,
    "assign_seat": params.AssignSeatParams,
    "add_baggage_allowance": params.AddBaggageParams,
    "add_meal_request": params.AddMealRequestParams,
    "issue_travel_credit": params.IssueTravelCreditParams,
    "issue_hotel_voucher": params.IssueHotelVoucherParams,
    "issue_meal_voucher": params.IssueMealVoucherParams,
    "cancel_reservation": params.CancelReservationParams,
    "process_refund": params.ProcessRefundParams,
    "transfer_to_agent": params.TransferToAgentParams,
}


def literal_values(annotation: Any) -> set[Any]:
    """Every Literal value reachable inside an annotation (Optional/Annotated unwrapped)."""
    if typing.get_origin(annotation) is typing.Literal:
        return set(typing.get_args(annotation))
    values: set[Any] = set()
    for arg in typing.get_args(annotation):
        values |= literal_values(arg)
    return values


def test_parameter_models_match_yaml_parameters_and_enums(eva_root: Path) -> None:
    for tool in agent_tools(eva_root):
        fields = MODEL_OF_TOOL[tool["id"]].model_fields
        required = {p["name"] for p in tool.get("required_parameters") or []}
        optional = {p["name"] for p in tool.get("optional_parameters") or []}
        assert {n for n, f in fields.items() if f.is_required()} == required, tool["id"]
        assert {n for n, f in fields.items() if not f.is_required()} == optional, tool["id"]
        for param in (tool.get("required_parameters") or []) + (
            tool.get("optional_parameters") or []
        ):
            if "enum" in param:
                allowed = literal_values(fields[param["name"]].annotation)
                assert allowed == set(param["enum"]), (tool["id"], param["name"])


def _name_in(db: dict[str, Any], english_db: dict[str, Any], english_name: str) -> str:
    """The same passenger's last name in another language's DB (matched by position)."""
    for conf, reservation in english_db["reservations"].items():
        for i, passenger in enumerate(reservation["passengers"]):
            if passenger["last_name"].lower() == english_name.lower():
                return db["reservations"][conf]["passengers"][i]["last_name"]
    return english_name


def test_replay_outcome_is_the_same_in_every_language(
    eva_root: Path, golden: dict[str, Any]
) -> None:
    """Spec 1.8: statuses and final-vs-expected hashes do not depend on the run language."""
    records = load_records(eva_root)
    checked = 0
    for record_id, entry in golden.items():
        record = records[record_id]
        english_db = load_initial_db(eva_root, record)
        for lang in record["culture_overrides"]:
            raw = json.loads(
                (eva_root / "data" / "airline_scenarios" / f"{record_id}.json").read_text("utf-8")
            )
            db = resolve_scenario_db(raw, record, lang, None)
            expected = resolve_value(record["ground_truth"]["expected_scenario_db"], record, lang)
            expected["_current_date"] = db["_current_date"]
            engine = ToolEngine("airline", db)
            for call in entry["calls"]:
                params_ = dict(call["params"])
                if call["tool"] == "get_reservation":
                    # Upper-cased native-script names must still authenticate.
                    params_["last_name"] = _name_in(db, english_db, params_["last_name"]).upper()
                status = engine.execute(call["tool"], params_)["status"]
                assert status == call["response"]["status"], (record_id, lang, call["tool"])
            assert engine.final_hash == db_hash(expected), (record_id, lang)
            checked += 1
    assert checked > len(golden)
