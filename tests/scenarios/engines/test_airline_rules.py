"""Fee, fare and booking rules of rebook_flight and cancel_reservation on a synthetic DB."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scenarios.engines.airline.rebooking import change_fee
from scenarios.executor import ToolEngine

CLASSES = ("basic_economy", "main_cabin", "premium_economy", "business", "first")


def segment(flight: str, origin: str, dest: str, dep: str, arr: str, seats: int = 5) -> dict:
    fares = {"basic_economy": 100.0, "main_cabin": 200.0, "premium_economy": 400.0}
    return {
        "flight_number": flight,
        "origin": origin,
        "destination": dest,
        "scheduled_departure": dep,
        "scheduled_arrival": arr,
        "status": "scheduled",
        "available_seats": {c: seats for c in CLASSES},
        "available_seat_types": {c: ["window", "aisle", "middle"] for c in CLASSES}
        | {"business": ["window", "aisle"]},
        "fares": fares | {"business": 900.0, "first": None},
    }


def journey(jid: str, date: str, segs: list[dict], fares: dict, **extra: Any) -> dict:
    return {
        "journey_id": jid,
        "date": date,
        "origin": segs[0]["origin"],
        "destination": segs[-1]["destination"],
        "num_stops": len(segs) - 1,
        "total_duration_minutes": 100 * len(segs),
        "status": "scheduled",
        "bookable": True,
        "fares": fares,
        "segments": segs,
    } | extra


def booked_segment(flight: str, date: str, fare: float) -> dict:
    return {
        "flight_number": flight,
        "date": date,
        "fare_paid": fare,
        "seat": None,
        "bags_checked": 0,
        "meal_request": None,
    }


# (journey id, legs as (flight, origin, destination, departure, arrival), fare overrides, extras)
Leg = tuple[str, str, str, str, str]
JOURNEY_TABLE: list[tuple[str, list[Leg], dict[str, float], dict[str, Any]]] = [
    ("FL_SK100_20260401", [("SK100", "AUS", "LAX", "09:00", "11:00")], {}, {}),
    ("FL_SK110_20260401", [("SK110", "AUS", "LAX", "07:00", "09:00")], {"main_cabin": 300.0}, {}),
    ("FL_SK120_20260401", [("SK120", "AUS", "LAX", "12:00", "14:00")], {}, {"bookable": False}),
    ("FL_SK130_20260401", [("SK130", "AUS", "LAX", "15:00", "17:00")], {}, {}),  # sold out
    ("FL_SK140_20260401", [("SK140", "AUS", "LAX", "18:00", "20:00")], {}, {"status": "cancelled"}),
    (
        "FL_SK200_SK300_20260402",
        [("SK200", "AUS", "DFW", "08:00", "09:00"), ("SK300", "DFW", "BOS", "10:00", "14:00")],
        {"basic_economy": 250.0},
        {},
    ),
    (
        "FL_SK310_20260402",
        [("SK310", "DFW", "BOS", "11:00", "15:00")],
        {"basic_economy": 180.0},
        {},
    ),
    (
        "FL_SK210_SK320_20260402",
        [("SK210", "AUS", "DFW", "06:00", "07:00"), ("SK320", "DFW", "BOS", "08:00", "12:00")],
        {"basic_economy": 230.0},
        {},
    ),
]


def synthetic_journeys() -> dict[str, Any]:
    fares: dict[str, float | None] = {"basic_economy": 150.0, "main_cabin": 260.0}
    fares |= {"premium_economy": 500.0, "business": 1000.0, "first": None}
    journeys = {}
    for jid, legs, fare_overrides, extra in JOURNEY_TABLE:
        day = f"{jid[-8:-4]}-{jid[-4:-2]}-{jid[-2:]}"
        segments = [segment(*leg, seats=0 if leg[0] == "SK130" else 5) for leg in legs]
        journeys[jid] = journey(jid, day, segments, fares | fare_overrides, **extra)
    return journeys


def synthetic_db() -> dict[str, Any]:
    """Two passengers, a direct main-cabin booking and a connecting basic-economy one."""
    connecting = [
        booked_segment("SK200", "2026-04-02", 120.0),
        booked_segment("SK300", "2026-04-02", 130.0),
    ]
    reservation = {
        "confirmation_number": "ABC123",
        "status": "confirmed",
        "fare_type": "non_refundable",
        "passengers": [
            {"passenger_id": "PAX001", "first_name": "ana", "last_name": "garcia"},
            {"passenger_id": "PAX002", "first_name": "luis", "last_name": "Garcia-Lopez"},
        ],
        "bookings": [
            {
                "journey_id": "FL_SK200_SK300_20260402",
                "fare_class": "basic_economy",
                "fare_paid": 250.0,
                "status": "confirmed",
                "segments": connecting,
            },
            {
                "journey_id": "FL_SK100_20260401",
                "fare_class": "main_cabin",
                "fare_paid": 260.0,
                "status": "confirmed",
                "segments": [booked_segment("SK100", "2026-04-01", 260.0)],
            },
        ],
    }
    return {
        "_current_date": "2026-03-20",
        "reservations": {"ABC123": reservation},
        "journeys": synthetic_journeys(),
        "disruptions": {},
        "travel_credits": {},
        "meal_vouchers": {},
        "refunds": {},
    }


@pytest.fixture
def engine() -> ToolEngine:
    return ToolEngine("airline", synthetic_db())


def seats(engine: ToolEngine, jid: str, cls: str) -> list[int]:
    return [s["available_seats"][cls] for s in engine.db["journeys"][jid]["segments"]]


def rebook(engine: ToolEngine, **overrides: Any) -> dict[str, Any]:
    params = {
        "confirmation_number": "ABC123",
        "journey_id": "FL_SK100_20260401",
        "new_journey_id": "FL_SK110_20260401",
        "rebooking_type": "voluntary",
        "waive_change_fee": False,
    } | overrides
    return engine.execute("rebook_flight", params)


@pytest.mark.parametrize(
    ("rebooking_type", "fare_class", "waived", "fee"),
    [
        ("voluntary", "basic_economy", False, 75),
        ("voluntary", "premium_economy", False, 75),
        ("voluntary", "business", False, 0),
        ("voluntary", "first", False, 0),
        ("same_day", "basic_economy", False, 199),
        ("same_day", "main_cabin", False, 75),
        ("same_day", "business", False, 75),
        ("same_day", "basic_economy", True, 0),
        ("irrops_cancellation", "basic_economy", False, 0),
        ("irrops_schedule_change", "main_cabin", False, 0),
        # Spec 12.5: substring-based IRROPS detection charges these like voluntary changes.
        ("missed_connection_airline_fault", "main_cabin", False, 75),
        ("missed_flight_passenger_fault", "business", False, 0),
    ],
)
def test_change_fee_table(rebooking_type: str, fare_class: str, waived: bool, fee: int) -> None:
    assert change_fee(rebooking_type, fare_class, waived) == fee


def test_voluntary_rebook_charges_fee_and_fare_difference(engine: ToolEngine) -> None:
    response = rebook(engine)
    assert response["status"] == "success"
    assert response["message"] == "Successfully rebooked to flight FL_SK110_20260401"
    assert response["cost_summary"] == {
        "original_fare_class": "main_cabin",
        "new_fare_class": "main_cabin",
        "cabin_changed": False,
        "change_fee": 75,
        "fare_difference": 40.0,
        "credit_due": 0,
        "total_collected": 115.0,
        "fee_waived": False,
    }
    bookings = engine.db["reservations"]["ABC123"]["bookings"]
    assert [b["status"] for b in bookings] == ["confirmed", "cancelled", "confirmed"]
    new = bookings[-1]
    assert new["journey_id"] == "FL_SK110_20260401" and new["fare_paid"] == 300.0
    assert new["segments"] == [
        {"flight_number": "SK110", "date": "2026-04-01", "fare_paid": 200.0, "seat": None,
         "bags_checked": 0, "meal_request": None}
    ]  # fmt: skip
    assert engine.db["reservations"]["ABC123"]["status"] == "changed"
    assert seats(engine, "FL_SK110_20260401", "main_cabin") == [4]
    assert seats(engine, "FL_SK100_20260401", "main_cabin") == [6]
    assert response["new_journey"]["segments"][0]["available_seats"]["main_cabin"] == 4


def test_cheaper_cabin_change_gives_credit_and_message_suffix(engine: ToolEngine) -> None:
    response = rebook(engine, new_fare_class="basic_economy", rebooking_type="same_day")
    cost = response["cost_summary"]
    assert response["message"].endswith(" in basic_economy")
    assert cost["cabin_changed"] is True and cost["change_fee"] == 75
    assert cost["fare_difference"] == -110.0 and cost["credit_due"] == 110.0
    assert cost["total_collected"] == 75
    assert seats(engine, "FL_SK110_20260401", "basic_economy") == [4]
    assert seats(engine, "FL_SK100_20260401", "main_cabin") == [6]


def test_irrops_full_rebook_keeps_old_fares_and_collects_nothing(engine: ToolEngine) -> None:
    response = rebook(
        engine,
        journey_id="FL_SK200_SK300_20260402",
        new_journey_id="FL_SK210_SK320_20260402",
        rebooking_type="irrops_delay",
    )
    cost = response["cost_summary"]
    assert cost["change_fee"] == 0 and cost["fee_waived"] is True
    assert cost["fare_difference"] == -20.0 and cost["total_collected"] == 0
    new = engine.db["reservations"]["ABC123"]["bookings"][-1]
    assert new["fare_paid"] == 250.0
    assert [s["fare_paid"] for s in new["segments"]] == [120.0, 130.0]
    assert seats(engine, "FL_SK210_SK320_20260402", "basic_economy") == [4, 4]
    assert seats(engine, "FL_SK200_SK300_20260402", "basic_economy") == [6, 6]


def test_partial_rebook_keeps_other_leg_and_frees_seats_on_every_old_leg(
    engine: ToolEngine,
) -> None:
    response = rebook(
        engine,
        journey_id="FL_SK200_SK300_20260402",
        new_journey_id="FL_SK310_20260402",
        rebooking_type="irrops_cancellation",
        flight_number="SK300",
    )
    assert response["partial_rebook"] is True
    assert response["replaced_segment"] == {
        "flight_number": "SK300", "origin": "DFW", "destination": "BOS", "fare_paid": 130.0
    }  # fmt: skip
    assert [s["flight_number"] for s in response["kept_segments"]] == ["SK200"]
    assert response["cost_summary"]["fare_difference"] == 50.0
    bookings = engine.db["reservations"]["ABC123"]["bookings"]
    new, kept = bookings[-2], bookings[-1]
    # IRROPS partial rebook onto a single-leg journey keeps the replaced leg's fare.
    assert new["fare_paid"] == 130.0 and new["segments"][0]["fare_paid"] == 130.0
    assert kept["journey_id"] == "FL_SK200_SK300_20260402" and kept["status"] == "confirmed"
    assert kept["fare_paid"] == 120.0 and kept["fare_class"] == "basic_economy"
    assert bookings[0]["status"] == "cancelled"
    # Spec 12.7: the old journey gets a seat back on every leg, not just the replaced one.
    assert seats(engine, "FL_SK200_SK300_20260402", "basic_economy") == [6, 6]


def test_rebook_cancels_first_listed_booking_of_old_journey(engine: ToolEngine) -> None:
    bookings = engine.db["reservations"]["ABC123"]["bookings"]
    stale = copy.deepcopy(bookings[1]) | {"status": "cancelled", "fare_paid": 999.0}
    bookings.insert(0, stale)
    response = rebook(engine)
    # Fares come from the live booking, but the first one in list order is the one cancelled.
    assert response["cost_summary"]["fare_difference"] == 40.0
    statuses = [b["status"] for b in engine.db["reservations"]["ABC123"]["bookings"]]
    assert statuses == ["cancelled", "confirmed", "confirmed", "confirmed"]


@pytest.mark.parametrize(
    ("overrides", "error_type"),
    [
        ({"confirmation_number": "ZZZ999"}, "not_found"),
        ({"journey_id": "FL_SK999_20260401"}, "journey_not_found"),
        ({"new_journey_id": "FL_SK999_20260401"}, "flight_not_found"),
        ({"new_journey_id": "FL_SK120_20260401"}, "not_bookable"),
        ({"new_journey_id": "FL_SK130_20260401"}, "no_seats_available"),
        ({"new_fare_class": "first"}, "fare_class_not_available"),
        ({"flight_number": "SK999"}, "flight_not_found"),
    ],
)
def test_rebook_errors_leave_db_untouched(
    engine: ToolEngine, overrides: dict[str, Any], error_type: str
) -> None:
    before = engine.final_hash
    response = rebook(engine, **overrides)
    assert response["status"] == "error" and response["error_type"] == error_type
    assert isinstance(response["message"], str) and response["message"]
    assert engine.final_hash == before


def cancel(engine: ToolEngine, journey_id: str, reason: str) -> dict[str, Any]:
    params = {"confirmation_number": "ABC123", "journey_id": journey_id}
    return engine.execute("cancel_reservation", params | {"cancellation_reason": reason})


@pytest.mark.parametrize("reason", ["voluntary", "medical", "bereavement", "schedule_unacceptable"])
def test_non_refundable_cancellation_gives_credit_minus_fee(
    engine: ToolEngine, reason: str
) -> None:
    response = cancel(engine, "FL_SK100_20260401", reason)
    assert response["is_refundable"] is False and response["cancellation_fee"] == 100
    assert response["refund_amount_eligible"] == 0
    assert response["credit_amount_eligible"] == 160.0
    assert response["reservation_status"] == "active"
    assert engine.db["reservations"]["ABC123"]["status"] == "confirmed"
    assert seats(engine, "FL_SK100_20260401", "main_cabin") == [6]


@pytest.mark.parametrize("reason", ["irrops_refund", "24_hour_rule"])
def test_refundable_reason_refunds_full_fare(engine: ToolEngine, reason: str) -> None:
    response = cancel(engine, "FL_SK200_SK300_20260402", reason)
    assert response["is_refundable"] is True and response["cancellation_fee"] == 0
    assert response["refund_amount_eligible"] == 250.0 and response["credit_amount_eligible"] == 0
    assert seats(engine, "FL_SK200_SK300_20260402", "basic_economy") == [6, 6]


def test_refundable_fare_type_and_fare_from_segments(engine: ToolEngine) -> None:
    reservation = engine.db["reservations"]["ABC123"]
    reservation["fare_type"] = "refundable"
    reservation["bookings"][0]["fare_paid"] = None
    response = cancel(engine, "FL_SK200_SK300_20260402", "voluntary")
    assert response["is_refundable"] is True and response["refund_amount_eligible"] == 250.0


def test_cancelling_every_booking_cancels_reservation_and_repeat_is_rejected(
    engine: ToolEngine,
) -> None:
    cancel(engine, "FL_SK100_20260401", "voluntary")
    last = cancel(engine, "FL_SK200_SK300_20260402", "voluntary")
    assert last["reservation_status"] == "cancelled"
    assert engine.db["reservations"]["ABC123"]["status"] == "cancelled"
    before = engine.final_hash
    again = cancel(engine, "FL_SK100_20260401", "voluntary")
    assert again["error_type"] == "already_cancelled"
    assert engine.final_hash == before
