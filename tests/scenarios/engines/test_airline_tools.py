"""Lookups, ancillaries, vouchers, refunds and ID schemes of the airline tools."""

from __future__ import annotations

from typing import Any

import pytest

from scenarios.engines.airline.ancillaries import seat_code
from scenarios.engines.airline.compensation import one_year_later
from scenarios.executor import ToolEngine
from tests.scenarios.engines.test_airline_rules import engine, seats, synthetic_db

__all__ = ["engine"]  # the fixture is shared with the rules tests

CONF = {"confirmation_number": "ABC123"}
DIRECT = CONF | {"journey_id": "FL_SK100_20260401"}
CONNECTING = CONF | {"journey_id": "FL_SK200_SK300_20260402"}


def test_get_reservation_authenticates_case_insensitively(engine: ToolEngine) -> None:
    response = engine.execute(
        "get_reservation", {"confirmation_number": "abc123", "last_name": "GARCIA-LOPEZ"}
    )
    assert response["status"] == "success"
    assert engine.db["session"] == {"confirmation_number": "ABC123", "last_name": "garcia-lopez"}
    bookings = response["reservation"]["bookings"]
    # Sorted by first segment date, and enriched from the journey without touching the DB.
    assert [b["journey_id"] for b in bookings] == ["FL_SK100_20260401", "FL_SK200_SK300_20260402"]
    assert bookings[1]["segments"][1]["origin"] == "DFW"
    assert bookings[1]["segments"][1]["scheduled_arrival"] == "14:00"
    stored = engine.db["reservations"]["ABC123"]["bookings"][0]["segments"][1]
    assert "origin" not in stored


def test_get_reservation_failures_do_not_open_a_session(engine: ToolEngine) -> None:
    wrong = engine.execute("get_reservation", CONF | {"last_name": "smith"})
    missing = engine.execute("get_reservation", {"confirmation_number": "ZZZ999", "last_name": "x"})
    assert wrong["error_type"] == "authentication_failed"
    assert missing == {
        "status": "error", "error_type": "not_found", "message": "Reservation ZZZ999 not found"
    }  # fmt: skip
    assert "session" not in engine.db


def test_write_tools_need_no_session(engine: ToolEngine) -> None:
    response = engine.execute("add_baggage_allowance", DIRECT | {"num_bags": 2})
    assert response["status"] == "success" and "session" not in engine.db


def test_flight_status_by_direct_key_and_by_connecting_leg(engine: ToolEngine) -> None:
    direct = engine.execute(
        "get_flight_status", {"flight_number": "SK100", "flight_date": "2026-04-01"}
    )
    leg = engine.execute(
        "get_flight_status", {"flight_number": "SK300", "flight_date": "2026-04-02"}
    )
    none = engine.execute(
        "get_flight_status", {"flight_number": "SK300", "flight_date": "2026-04-03"}
    )
    assert direct["journey"]["journey_id"] == "FL_SK100_20260401"
    assert leg["journey"]["journey_id"] == "FL_SK200_SK300_20260402"
    assert none["error_type"] == "not_found"


def test_disruption_lookup_by_flight_and_date(engine: ToolEngine) -> None:
    info = {"flight_number": "SK100", "date": "2026-04-01", "is_irrops": True}
    engine.db["disruptions"]["SK100_2026-04-01"] = info
    found = engine.execute("get_disruption_info", {"flight_number": "SK100", "date": "2026-04-01"})
    other = engine.execute("get_disruption_info", {"flight_number": "SK100", "date": "2026-04-02"})
    assert found == {"status": "success", "disruption": info}
    assert other["error_type"] == "not_found"
    assert other["message"] == "No disruption info found for flight SK100"


def search(engine: ToolEngine, fare_class: str, count: int = 1) -> dict[str, Any]:
    params = {"origin": "aus", "destination": "lax", "date": "2026-04-01"}
    return engine.execute(
        "search_rebooking_options", params | {"passenger_count": count, "fare_class": fare_class}
    )


def test_search_filters_unbookable_cancelled_and_full_journeys(engine: ToolEngine) -> None:
    response = search(engine, "main_cabin")
    ids = [o["journey_id"] for o in response["options"]]
    assert ids == ["FL_SK110_20260401", "FL_SK100_20260401"]  # sorted by departure
    assert response["count"] == 2 and response["message"] == "2 flight(s) found"
    assert response["options"][0]["fare"] == 300.0
    assert response["options"][0]["available_seats"]["main_cabin"] == 5
    assert search(engine, "main_cabin", count=6)["count"] == 0


def test_search_any_picks_cheapest_class_with_enough_seats(engine: ToolEngine) -> None:
    for segment in engine.db["journeys"]["FL_SK110_20260401"]["segments"]:
        segment["available_seats"]["basic_economy"] = 0
    fares = {o["journey_id"]: o["fare"] for o in search(engine, "any")["options"]}
    assert fares == {"FL_SK110_20260401": 300.0, "FL_SK100_20260401": 150.0}


@pytest.mark.parametrize(
    ("fare_class", "passenger_id", "preference", "seat"),
    [
        ("main_cabin", "PAX001", "window", "21A"),
        ("basic_economy", "PAX001", "aisle", "26C"),
        ("premium_economy", "PAX012", "middle", "22B"),
        ("business", "PAX002", "no_preference", "7C"),
        ("first", "PAX1003", "window", "4A"),
    ],
)
def test_seat_code_scheme(fare_class: str, passenger_id: str, preference: str, seat: str) -> None:
    assert seat_code(fare_class, passenger_id, preference) == seat


def test_assign_seat_writes_segment_without_touching_inventory(engine: ToolEngine) -> None:
    params = DIRECT | {"passenger_id": "PAX002", "seat_preference": "aisle"}
    response = engine.execute("assign_seat", params)
    assert response["seat_assigned"] == "22C" and response["flight_number"] == "SK100"
    assert response["message"] == "Seat 22C (aisle) successfully assigned"
    assert engine.db["reservations"]["ABC123"]["bookings"][1]["segments"][0]["seat"] == "22C"
    assert seats(engine, "FL_SK100_20260401", "main_cabin") == [5]


@pytest.mark.parametrize(
    ("mutate", "extra", "error_type"),
    [
        (None, {}, "flight_number_required"),
        (None, {"flight_number": "SK999"}, "flight_not_found"),
        ("seats", {"flight_number": "SK300"}, "no_seats_available"),
        ("types", {"flight_number": "SK300"}, "seat_type_unavailable"),
    ],
)
def test_assign_seat_errors(
    engine: ToolEngine, mutate: str | None, extra: dict[str, Any], error_type: str
) -> None:
    leg = engine.db["journeys"]["FL_SK200_SK300_20260402"]["segments"][1]
    if mutate == "seats":
        leg["available_seats"]["basic_economy"] = 0
    if mutate == "types":
        leg["available_seat_types"]["basic_economy"] = ["aisle"]
    before = engine.final_hash
    params = CONNECTING | {"passenger_id": "PAX001", "seat_preference": "window"} | extra
    assert engine.execute("assign_seat", params)["error_type"] == error_type
    assert engine.final_hash == before


def test_baggage_and_meals_apply_to_one_or_all_segments(engine: ToolEngine) -> None:
    engine.execute("add_baggage_allowance", CONNECTING | {"num_bags": 2})
    engine.execute("add_baggage_allowance", CONNECTING | {"num_bags": 1, "flight_number": "SK300"})
    meal = CONNECTING | {"passenger_id": "PAX001", "meal_type": "vegan", "flight_number": "SK200"}
    response = engine.execute("add_meal_request", meal)
    assert response["message"] == "vegan meal request added"
    legs = engine.db["reservations"]["ABC123"]["bookings"][0]["segments"]
    assert [leg["bags_checked"] for leg in legs] == [2, 1]
    assert [leg["meal_request"] for leg in legs] == ["vegan", None]


def test_standby_positions_and_reservation_entry(engine: ToolEngine) -> None:
    journey = engine.db["journeys"]["FL_SK110_20260401"]
    journey["standby_list"] = [{"confirmation_number": "X", "passenger_id": "PAX9", "position": 1}]
    params = CONF | {"journey_id": "FL_SK110_20260401", "passenger_ids": ["PAX001", "PAX002"]}
    response = engine.execute("add_to_standby", params)
    assert response["standby_list_position"] == 3
    assert [e["position"] for e in journey["standby_list"]] == [1, 2, 3]
    assert engine.db["reservations"]["ABC123"]["standby_list"] == [
        {"journey_id": "FL_SK110_20260401", "passenger_ids": ["PAX001", "PAX002"],
         "position": 3, "status": "pending"}
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("params", "error_type"),
    [
        ({"journey_id": "FL_SK999_20260401", "passenger_ids": ["PAX001"]}, "flight_not_found"),
        ({"journey_id": "FL_SK140_20260401", "passenger_ids": ["PAX001"]}, "flight_cancelled"),
        ({"journey_id": "FL_SK110_20260401", "passenger_ids": ["PAX007"]}, "invalid_passengers"),
    ],
)
def test_standby_errors(engine: ToolEngine, params: dict[str, Any], error_type: str) -> None:
    before = engine.final_hash
    assert engine.execute("add_to_standby", CONF | params)["error_type"] == error_type
    assert engine.final_hash == before


def test_standby_with_unknown_reservation_only_updates_journey(engine: ToolEngine) -> None:
    params = {"confirmation_number": "ZZZ999", "journey_id": "FL_SK110_20260401"}
    response = engine.execute("add_to_standby", params | {"passenger_ids": ["PAX001"]})
    assert response["status"] == "success"
    assert len(engine.db["journeys"]["FL_SK110_20260401"]["standby_list"]) == 1
    assert "ZZZ999" not in engine.db["reservations"]


@pytest.mark.parametrize(
    ("reason", "amount"),
    [
        ("delay_over_2_hours", 12),
        ("delay_over_4_hours", 15),
        ("cancellation_wait_same_day", 15),
        ("irrops_overnight", 25),
    ],
)
def test_meal_voucher_amounts(engine: ToolEngine, reason: str, amount: int) -> None:
    params = CONF | {"passenger_id": "PAX001", "voucher_reason": reason}
    response = engine.execute("issue_meal_voucher", params)
    assert response["amount"] == amount and response["voucher_code"] == "MEAL-ABC123-PAX0"
    assert response["message"] == f"${amount} meal voucher issued with code MEAL-ABC123-PAX0"
    assert engine.db["meal_vouchers"]["MEAL-ABC123-PAX0"]["issued_date"] == "2026-03-20"


def test_voucher_and_credit_codes_collide_across_passengers(engine: ToolEngine) -> None:
    for pid, reason in (("PAX001", "delay_over_2_hours"), ("PAX002", "irrops_overnight")):
        engine.execute("issue_meal_voucher", CONF | {"passenger_id": pid, "voucher_reason": reason})
        credit = {"passenger_id": pid, "amount": 50, "credit_reason": "goodwill"}
        engine.execute("issue_travel_credit", CONF | credit)
    # Spec 12.6: PAX0 / PAX prefixes collide, so the second passenger overwrites the first.
    assert list(engine.db["meal_vouchers"]) == ["MEAL-ABC123-PAX0"]
    assert engine.db["meal_vouchers"]["MEAL-ABC123-PAX0"]["passenger_id"] == "PAX002"
    assert list(engine.db["travel_credits"]) == ["TCABC123PAX"]


def test_travel_credit_record(engine: ToolEngine) -> None:
    params = CONF | {"passenger_id": "PAX001", "amount": 188, "credit_reason": "goodwill"}
    response = engine.execute("issue_travel_credit", params)
    assert response["amount"] == 188.0 and response["valid_months"] == 12
    assert response["message"] == "$188.0 travel credit issued with code TCABC123PAX"
    record = engine.db["travel_credits"]["TCABC123PAX"]
    assert record["expiry_date"] == "2027-03-20" and record["status"] == "active"


def test_one_year_later_handles_leap_day() -> None:
    assert one_year_later("2028-02-29") == "2029-02-28"
    assert one_year_later("2026-07-15") == "2027-07-15"


def test_hotel_voucher_authority_limit(engine: ToolEngine) -> None:
    base = CONF | {"passenger_id": "PAX001"}
    assert "hotel_vouchers" not in engine.db
    refused = engine.execute("issue_hotel_voucher", base | {"num_nights": 4})
    assert refused["error_type"] == "exceeds_authority" and "hotel_vouchers" not in engine.db
    granted = engine.execute("issue_hotel_voucher", base | {"num_nights": 3})
    assert granted["voucher_code"] == "HOTEL-ABC123" and granted["number_of_nights"] == 3
    assert engine.db["hotel_vouchers"]["HOTEL-ABC123"]["num_nights"] == 3


def test_refund_and_transfer_ids_count_calls_per_tool(engine: ToolEngine) -> None:
    refund = CONF | {"refund_amount": 74.98, "refund_type": "ancillary_fees"}
    first = engine.execute("process_refund", refund)
    engine.execute("transfer_to_agent", {"confirmation_number": "ZZZ999", "transfer_reason": "r",
                                         "issue_summary": "s"})  # fmt: skip
    second = engine.execute("process_refund", refund)
    transfer = engine.execute(
        "transfer_to_agent", CONF | {"transfer_reason": "complaint", "issue_summary": "s"}
    )
    assert first["refund_id"] == "REF-ABC123-001" and second["refund_id"] == "REF-ABC123-002"
    assert first["message"] == "$74.98 refund initiated, processing time 7 business days"
    assert set(engine.db["refunds"]) == {"REF-ABC123-001", "REF-ABC123-002"}
    # The failed transfer (unknown reservation) still counts as call 1 of transfer_to_agent.
    assert transfer["transfer_id"] == "TRF-ABC123-002"
    assert transfer["estimated_wait"] == "2-3 minutes"


@pytest.mark.parametrize(
    ("tool", "params"),
    [
        (
            "issue_travel_credit",
            {"passenger_id": "PAX001", "amount": 5, "credit_reason": "goodwill"},
        ),
        ("issue_hotel_voucher", {"passenger_id": "PAX001", "num_nights": 1}),
        ("issue_meal_voucher", {"passenger_id": "PAX001", "voucher_reason": "delay_over_2_hours"}),
        ("process_refund", {"refund_amount": 10, "refund_type": "taxes_only"}),
        ("transfer_to_agent", {"transfer_reason": "x", "issue_summary": "y"}),
        (
            "cancel_reservation",
            {"journey_id": "FL_SK100_20260401", "cancellation_reason": "medical"},
        ),
    ],
)
def test_unknown_reservation_is_not_found(tool: str, params: dict[str, Any]) -> None:
    engine = ToolEngine("airline", synthetic_db())
    before = engine.final_hash
    response = engine.execute(tool, {"confirmation_number": "ZZZ999"} | params)
    assert response == {
        "status": "error", "error_type": "not_found", "message": "Reservation ZZZ999 not found"
    }  # fmt: skip
    assert engine.final_hash == before


def test_executor_rejects_tools_outside_the_agent_config() -> None:
    engine = ToolEngine("airline", synthetic_db(), ["get_reservation"])
    response = engine.execute(
        "process_refund", CONF | {"refund_amount": 1, "refund_type": "taxes_only"}
    )
    assert response["error_type"] == "tool_not_found"
    assert engine.execute("fly_me_to_the_moon", {})["error_type"] == "tool_not_found"
