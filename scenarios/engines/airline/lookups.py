"""Read tools of the airline domain (spec 2.5): reservation, flight status, disruptions, search."""

from __future__ import annotations

import copy
from typing import Any

from scenarios.engines.airline.common import (
    FARE_CLASSES,
    Json,
    airline_tool,
    error,
    find_reservation,
    is_error,
    journey_segment,
    min_seats,
    success,
)
from scenarios.engines.airline.params import (
    GetDisruptionInfoParams,
    GetFlightStatusParams,
    GetReservationParams,
    SearchRebookingParams,
)

SEARCHABLE_STATUSES = frozenset({"scheduled", "on_time", "delayed"})
ENRICHED_SEGMENT_KEYS = ("origin", "destination", "scheduled_departure", "scheduled_arrival")


def _booking_sort_key(booking: Json) -> tuple[str, str]:
    segments = booking.get("segments") or [{}]
    return (str(segments[0].get("date") or ""), str(booking.get("journey_id") or ""))


def _enriched_reservation(db: Json, reservation: Json) -> Json:
    """Deep copy with each booked segment's route and schedule read from its journey."""
    view = copy.deepcopy(reservation)
    for booking in view.get("bookings") or []:
        for segment in booking.get("segments") or []:
            source = journey_segment(db, booking.get("journey_id"), segment.get("flight_number"))
            if source is not None:
                segment.update({k: source.get(k) for k in ENRICHED_SEGMENT_KEYS})
    if isinstance(view.get("bookings"), list):
        view["bookings"].sort(key=_booking_sort_key)
    return view


@airline_tool("get_reservation", GetReservationParams)
def get_reservation(p: GetReservationParams, db: Json, call_index: int) -> Json:
    reservation = find_reservation(db, p.confirmation_number)
    if is_error(reservation):
        return reservation
    wanted = p.last_name.lower()
    names = [str(x.get("last_name") or "").lower() for x in reservation.get("passengers") or []]
    if wanted not in names:
        return error(
            "authentication_failed",
            f"Last name '{p.last_name}' does not match reservation {p.confirmation_number}",
        )
    db["session"] = {"confirmation_number": p.confirmation_number, "last_name": wanted}
    return success(reservation=_enriched_reservation(db, reservation))


def _journey_on(db: Json, flight_number: str, flight_date: str) -> Json | None:
    journeys: Json = db.get("journeys") or {}
    direct = journeys.get(f"FL_{flight_number}_{flight_date.replace('-', '')}")
    if isinstance(direct, dict):
        return direct
    # A connecting journey's id names all its legs, so fall back to a scan by leg.
    for journey in journeys.values():
        if journey.get("date") == flight_date and any(
            s.get("flight_number") == flight_number for s in journey.get("segments") or []
        ):
            return journey
    return None


@airline_tool("get_flight_status", GetFlightStatusParams)
def get_flight_status(p: GetFlightStatusParams, db: Json, call_index: int) -> Json:
    journey = _journey_on(db, p.flight_number, p.flight_date)
    if journey is None:
        return error("not_found", f"Flight {p.flight_number} on {p.flight_date} not found")
    return success(journey=copy.deepcopy(journey))


@airline_tool("get_disruption_info", GetDisruptionInfoParams)
def get_disruption_info(p: GetDisruptionInfoParams, db: Json, call_index: int) -> Json:
    disruption = (db.get("disruptions") or {}).get(f"{p.flight_number}_{p.date}")
    if not isinstance(disruption, dict):
        return error("not_found", f"No disruption info found for flight {p.flight_number}")
    return success(disruption=copy.deepcopy(disruption))


def _option_fare(journey: Json, fare_class: str, seats: dict[str, int], needed: int) -> Any:
    fares: Json = journey.get("fares") or {}
    if fare_class != "any":
        return fares.get(fare_class)
    priced = [fares[c] for c in FARE_CLASSES if seats[c] >= needed and fares.get(c) is not None]
    return min(priced) if priced else None


def _search_option(journey: Json, fare_class: str, needed: int) -> Json | None:
    """The search result for ``journey``, or None when it cannot seat ``needed`` passengers."""
    seats = {c: min_seats(journey, c) for c in FARE_CLASSES}
    wanted = FARE_CLASSES if fare_class == "any" else (fare_class,)
    if not any(seats[c] >= needed for c in wanted):
        return None
    segments = copy.deepcopy(journey.get("segments") or [])
    return {
        "journey_id": journey.get("journey_id"),
        "origin": journey.get("origin"),
        "destination": journey.get("destination"),
        "num_stops": journey.get("num_stops"),
        "total_duration_minutes": journey.get("total_duration_minutes"),
        "segments": segments,
        "departure_time": segments[0].get("scheduled_departure") if segments else None,
        "arrival_time": segments[-1].get("scheduled_arrival") if segments else None,
        "available_seats": seats,
        "fare": _option_fare(journey, fare_class, seats, needed),
    }


@airline_tool("search_rebooking_options", SearchRebookingParams)
def search_rebooking_options(p: SearchRebookingParams, db: Json, call_index: int) -> Json:
    options: list[Json] = []
    for journey in (db.get("journeys") or {}).values():
        if (
            journey.get("origin") != p.origin
            or journey.get("destination") != p.destination
            or journey.get("date") != p.date
            or journey.get("status") not in SEARCHABLE_STATUSES
            or not journey.get("bookable", True)
        ):
            continue
        option = _search_option(journey, p.fare_class, p.passenger_count)
        if option is not None:
            options.append(option)
    options.sort(key=lambda o: str(o["departure_time"] or ""))
    return success(f"{len(options)} flight(s) found", options=options, count=len(options))
