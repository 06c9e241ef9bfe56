"""Fuzz: arbitrary tool names and parameters never crash the engine or corrupt the DB.

The airline spec documents no tool that mutates the DB before returning an error (unlike
medical HR's ``reactivate_privileges``), so every error must leave the hash and the
session exactly as they were.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scenarios.engines.airline import TOOLS, params
from scenarios.executor import ToolEngine
from tests.scenarios.engines.test_airline_conformance import (
    MODEL_OF_TOOL,
    literal_values,
    load_initial_db,
    load_records,
)

FUZZ_RECORD = "1.1.5"  # two bookings, several journeys: exercises most lookups
PARAM_NAMES = sorted(
    {name for model in vars(params).values() if isinstance(model, type)
     and issubclass(model, params.AirlineParams) for name in model.model_fields}
)  # fmt: skip
ENUM_VALUES = [
    "voluntary", "same_day", "irrops_delay", "missed_connection_airline_fault", "main_cabin",
    "basic_economy", "first", "any", "window", "aisle", "no_preference", "vegan", "none",
    "goodwill", "irrops_overnight", "full_fare", "medical", "24_hour_rule",
]  # fmt: skip


def field_pools(db: dict[str, Any]) -> dict[str, list[Any]]:
    """Real identifiers from the DB per field, so fuzzed calls reach the business rules."""
    reservations = db["reservations"].values()
    journeys = db["journeys"].values()
    legs = [s for j in journeys for s in j["segments"]]
    pools: dict[str, list[Any]] = {
        "confirmation_number": [c for r in reservations for c in (r["confirmation_number"],
                                r["confirmation_number"].lower())] + ["ZZZ999"],
        "last_name": [p["last_name"] for r in reservations for p in r["passengers"]] + ["doe"],
        "journey_id": [j["journey_id"] for j in journeys] + ["FL_SK999_20260101"],
        "flight_number": [s["flight_number"] for s in legs] + ["SK999"],
        "date": [j["date"] for j in journeys] + ["2030-01-01"],
        "origin": [j["origin"] for j in journeys] + ["xyz"],
        "passenger_id": ["PAX001", "PAX002", "PAX999"],
    }  # fmt: skip
    pools["new_journey_id"] = pools["journey_id"]
    pools["flight_date"] = pools["date"]
    pools["destination"] = [j["destination"] for j in journeys] + pools["origin"]
    return pools


def field_value(name: str, annotation: Any, pools: dict[str, list[Any]]) -> st.SearchStrategy:
    """A plausible value for one parameter (junk is mixed in by ``perturbed``)."""
    if name in pools:
        return st.sampled_from(pools[name])
    if name == "passenger_ids":
        return st.lists(st.sampled_from(pools["passenger_id"]), min_size=1, max_size=3)
    if enum := literal_values(annotation):
        return st.sampled_from(sorted(enum))
    if name == "waive_change_fee":
        return st.booleans()
    if name in ("amount", "refund_amount"):
        return st.floats(min_value=-5, max_value=2000) | st.integers(-5, 2000)
    if name in ("passenger_count", "num_bags", "num_nights"):
        return st.integers(min_value=-1, max_value=7)
    return st.text(max_size=20)


@st.composite
def plausible_call(draw: st.DrawFn, pools: dict[str, list[Any]]) -> tuple[str, Any]:
    """A known tool with mostly well-formed params, then keys dropped, added or garbled."""
    tool = draw(st.sampled_from(sorted(MODEL_OF_TOOL)))
    fields = MODEL_OF_TOOL[tool].model_fields
    raw = {n: draw(field_value(n, f.annotation, pools)) for n, f in fields.items()}
    for name in draw(st.lists(st.sampled_from(sorted(fields)), max_size=2, unique=True)):
        if draw(st.booleans()):
            del raw[name]
        else:
            raw[name] = draw(junk_values())
    raw |= draw(st.dictionaries(st.sampled_from(PARAM_NAMES), junk_values(), max_size=1))
    return tool, raw


def junk_values() -> st.SearchStrategy[Any]:
    scalar = st.one_of(
        st.sampled_from(ENUM_VALUES),
        st.none(),
        st.booleans(),
        st.integers(min_value=-10, max_value=2000),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=12),
    )
    return scalar | st.lists(scalar, max_size=3) | st.dictionaries(st.text(max_size=5), scalar)


def random_call() -> st.SearchStrategy[tuple[str, Any]]:
    """Any tool name (mostly unknown ones) with any parameter payload at all."""
    names = st.one_of(st.sampled_from(sorted(TOOLS)), st.text(max_size=15))
    param_dicts = st.dictionaries(
        st.one_of(st.sampled_from(PARAM_NAMES), st.text(max_size=8)), junk_values(), max_size=7
    )
    raw = st.one_of(param_dicts, st.none(), st.lists(st.integers(), max_size=2), st.text())
    return st.tuples(names, raw)


@pytest.fixture(scope="module")
def fuzz_db(eva_root: Path) -> dict[str, Any]:
    return load_initial_db(eva_root, load_records(eva_root)[FUZZ_RECORD])


def check_response(response: Any) -> None:
    assert isinstance(response, dict)
    assert response["status"] in ("success", "error")
    json.dumps(response, allow_nan=False)  # must be serialisable for logs and the tool bridge
    if response["status"] == "error":
        assert isinstance(response["error_type"], str) and response["error_type"]
        assert isinstance(response["message"], str) and response["message"]
        # Every failure is a handled one: nothing falls through to the executor's guard.
        assert response["error_type"] != "execution_error", response


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_random_calls_never_crash_or_mutate_on_error(
    fuzz_db: dict[str, Any], data: st.DataObject
) -> None:
    call = plausible_call(field_pools(fuzz_db)) | random_call()
    calls = data.draw(st.lists(call, min_size=1, max_size=5))
    engine = ToolEngine("airline", fuzz_db, sorted(TOOLS))
    for name, raw in calls:
        before_hash = engine.final_hash
        before_session = copy.deepcopy(engine.db.get("session"))
        response = engine.execute(name, raw)
        check_response(response)
        if response["status"] == "error":
            assert engine.final_hash == before_hash, (name, raw, response)
            assert engine.db.get("session") == before_session
        if name not in TOOLS:
            assert response["error_type"] == "tool_not_found"


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    amount=st.floats(allow_nan=True, allow_infinity=True) | st.integers() | st.text(max_size=6),
    nights=st.integers(min_value=-3, max_value=10) | st.floats() | st.none(),
)
def test_numeric_edges_are_validated(fuzz_db: dict[str, Any], amount: Any, nights: Any) -> None:
    engine = ToolEngine("airline", fuzz_db)
    conf = next(iter(fuzz_db["reservations"]))
    base = {"confirmation_number": conf, "passenger_id": "PAX001"}
    credit = engine.execute(
        "issue_travel_credit", base | {"amount": amount, "credit_reason": "goodwill"}
    )
    check_response(credit)
    if credit["status"] == "success":
        assert math.isfinite(credit["amount"]) and credit["amount"] > 0
    hotel = engine.execute("issue_hotel_voucher", base | {"num_nights": nights})
    check_response(hotel)
    if hotel["status"] == "success":
        assert 1 <= hotel["number_of_nights"] <= 3
