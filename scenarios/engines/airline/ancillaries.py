"""Per-booking extras (spec 2.5): standby, seats, bags and special meals."""

from __future__ import annotations

from scenarios.engines.airline.common import (
    Json,
    airline_tool,
    error,
    find_booking,
    find_journey,
    find_reservation,
    is_error,
    journey_segment,
    segments_for,
    single_segment,
    success,
)
from scenarios.engines.airline.params import (
    AddBaggageParams,
    AddMealRequestParams,
    AddToStandbyParams,
    AssignSeatParams,
)

# First row of each cabin; a passenger's seat row is this plus their PAX number (mod 1000).
BASE_ROW = {
    "basic_economy": 25,
    "main_cabin": 20,
    "premium_economy": 10,
    "business": 5,
    "first": 1,
}
SEAT_LETTER = {"window": "A", "middle": "B", "aisle": "C", "no_preference": "C"}
ALL_SEAT_TYPES = ("window", "aisle", "middle")


@airline_tool("add_to_standby", AddToStandbyParams)
def add_to_standby(p: AddToStandbyParams, db: Json, call_index: int) -> Json:
    journey = find_journey(db, p.journey_id)
    if journey is None:
        return error("flight_not_found", f"Flight {p.journey_id} not found")
    if journey.get("status") == "cancelled":
        return error("flight_cancelled", f"Flight {p.journey_id} is cancelled")
    # The reference tolerates an unknown reservation here: only the journey list is updated.
    reservation = (db.get("reservations") or {}).get(p.confirmation_number)
    if isinstance(reservation, dict):
        known = {x.get("passenger_id") for x in reservation.get("passengers") or []}
        unknown = [pid for pid in p.passenger_ids if pid not in known]
        if unknown:
            return error(
                "invalid_passengers",
                f"Passengers not found in reservation {p.confirmation_number}: "
                + ", ".join(unknown),
            )
    standby: list[Json] = journey.setdefault("standby_list", [])
    position = len(standby) + len(p.passenger_ids)
    for passenger_id in p.passenger_ids:
        standby.append(
            {
                "confirmation_number": p.confirmation_number,
                "passenger_id": passenger_id,
                "position": len(standby) + 1,
            }
        )
    if isinstance(reservation, dict):
        reservation.setdefault("standby_list", []).append(
            {
                "journey_id": p.journey_id,
                "passenger_ids": list(p.passenger_ids),
                "position": position,
                "status": "pending",
            }
        )
    return success(
        f"Added {len(p.passenger_ids)} passenger(s) to standby list",
        confirmation_number=p.confirmation_number,
        journey_id=p.journey_id,
        standby_list_position=position,
    )


def seat_code(fare_class: str, passenger_id: str, preference: str) -> str:
    """Deterministic seat, e.g. PAX001 main_cabin window -> 21A (spec 2.5)."""
    number = int(passenger_id[len("PAX") :][-3:])
    return f"{BASE_ROW.get(fare_class, BASE_ROW['main_cabin']) + number}{SEAT_LETTER[preference]}"


def _seat_problem(
    db: Json, p: AssignSeatParams, fare_class: str, flight_number: str
) -> Json | None:
    source = journey_segment(db, p.journey_id, flight_number)
    if source is None:
        return None
    if ((source.get("available_seats") or {}).get(fare_class) or 0) <= 0:
        return error(
            "no_seats_available", f"No {fare_class} seats available on flight {flight_number}"
        )
    offered = (source.get("available_seat_types") or {}).get(fare_class, ALL_SEAT_TYPES)
    if p.seat_preference != "no_preference" and p.seat_preference not in offered:
        return error(
            "seat_type_unavailable",
            f"{p.seat_preference} seat not available in {fare_class} on flight {flight_number}",
        )
    return None


@airline_tool("assign_seat", AssignSeatParams)
def assign_seat(p: AssignSeatParams, db: Json, call_index: int) -> Json:
    reservation = find_reservation(db, p.confirmation_number)
    if is_error(reservation):
        return reservation
    booking = find_booking(reservation, p.journey_id)
    if is_error(booking):
        return booking
    segment = single_segment(booking, p.flight_number)
    if is_error(segment):
        return segment
    fare_class = str(booking.get("fare_class"))
    flight_number = str(segment.get("flight_number"))
    problem = _seat_problem(db, p, fare_class, flight_number)
    if problem is not None:
        return problem
    seat = seat_code(fare_class, p.passenger_id, p.seat_preference)
    segment["seat"] = seat
    return success(
        f"Seat {seat} ({p.seat_preference}) successfully assigned",
        confirmation_number=p.confirmation_number,
        passenger_id=p.passenger_id,
        journey_id=p.journey_id,
        flight_number=flight_number,
        seat_assigned=seat,
        preference=p.seat_preference,
        fare_class=fare_class,
    )


def _target_segments(p: AddBaggageParams | AddMealRequestParams, db: Json) -> list[Json] | Json:
    reservation = find_reservation(db, p.confirmation_number)
    if is_error(reservation):
        return reservation
    booking = find_booking(reservation, p.journey_id)
    if is_error(booking):
        return booking
    return segments_for(booking, p.flight_number)


@airline_tool("add_baggage_allowance", AddBaggageParams)
def add_baggage_allowance(p: AddBaggageParams, db: Json, call_index: int) -> Json:
    segments = _target_segments(p, db)
    if isinstance(segments, dict):
        return segments
    for segment in segments:
        segment["bags_checked"] = p.num_bags
    return success(
        f"Baggage allowance set to {p.num_bags} checked bag(s)",
        confirmation_number=p.confirmation_number,
        journey_id=p.journey_id,
        bags_checked=p.num_bags,
    )


@airline_tool("add_meal_request", AddMealRequestParams)
def add_meal_request(p: AddMealRequestParams, db: Json, call_index: int) -> Json:
    segments = _target_segments(p, db)
    if isinstance(segments, dict):
        return segments
    for segment in segments:
        segment["meal_request"] = p.meal_type
    return success(
        f"{p.meal_type} meal request added",
        confirmation_number=p.confirmation_number,
        passenger_id=p.passenger_id,
        journey_id=p.journey_id,
        meal_type=p.meal_type,
    )
