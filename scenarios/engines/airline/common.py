"""Shared plumbing of the airline tools: the tool decorator, responses and DB lookups.

Lookups return either the found object or an error response (a dict with
``status == "error"``), so each tool reads as a straight line of checks.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ValidationError

from evaflow_core.registry import Registry
from scenarios.engines import ToolFn
from scenarios.engines.airline.params import AirlineParams, validation_error_response

P = TypeVar("P", bound=AirlineParams)
Json = dict[str, Any]
Implementation = Callable[[P, Json, int], Json]

AIRLINE_TOOLS: Registry[ToolFn] = Registry("airline tool")

FARE_CLASSES = ("basic_economy", "main_cabin", "premium_economy", "business", "first")


def airline_tool(name: str, model: type[P]) -> Callable[[Implementation[P]], ToolFn]:
    """Register ``name``: validate raw params with ``model``, then run the implementation.

    There is no session gate here: in the airline domain only ``get_reservation`` touches
    the session (it writes it) and no tool checks it (spec 2.4).
    """

    def decorator(impl: Implementation[P]) -> ToolFn:
        @functools.wraps(impl)
        def tool(params: dict[str, Any], db: Json, call_index: int) -> Json:
            raw = params if isinstance(params, dict) else {}
            try:
                parsed = model.model_validate(raw)
            except ValidationError as exc:
                return validation_error_response(exc, raw)
            return impl(parsed, db, call_index)

        AIRLINE_TOOLS.add(name, tool)
        return tool

    return decorator


def success(message: str | None = None, **payload: Any) -> Json:
    response: Json = {"status": "success", **payload}
    if message is not None:
        response["message"] = message
    return response


def error(error_type: str, message: str, **extra: Any) -> Json:
    return {"status": "error", "error_type": error_type, "message": message, **extra}


def is_error(value: Any) -> bool:
    return isinstance(value, dict) and value.get("status") == "error"


def table(db: Json, name: str) -> Json:
    """A top-level dict table, created when a tool writes to it first (e.g. hotel_vouchers)."""
    value = db.get(name)
    if not isinstance(value, dict):
        value = {}
        db[name] = value
    return value


def find_reservation(db: Json, confirmation_number: str) -> Json:
    reservation = (db.get("reservations") or {}).get(confirmation_number)
    if not isinstance(reservation, dict):
        return error("not_found", f"Reservation {confirmation_number} not found")
    return reservation


def find_booking(reservation: Json, journey_id: str) -> Json:
    """First non-cancelled booking of ``journey_id``, else the first booking of it at all."""
    matches = [b for b in reservation.get("bookings") or [] if b.get("journey_id") == journey_id]
    if not matches:
        return error(
            "journey_not_found",
            f"Journey {journey_id} not found in reservation {reservation.get('confirmation_number')}",
        )
    return next((b for b in matches if b.get("status") != "cancelled"), matches[0])


def find_journey(db: Json, journey_id: str) -> Json | None:
    journey = (db.get("journeys") or {}).get(journey_id)
    return journey if isinstance(journey, dict) else None


def segments_for(booking: Json, flight_number: str | None) -> list[Json] | Json:
    """Segments named by ``flight_number``, or every segment when it is omitted."""
    segments: list[Json] = list(booking.get("segments") or [])
    if flight_number is None:
        return segments
    matching = [s for s in segments if s.get("flight_number") == flight_number]
    if not matching:
        return error(
            "flight_not_found",
            f"Flight {flight_number} not found in journey {booking.get('journey_id')}",
        )
    return matching


def single_segment(booking: Json, flight_number: str | None) -> Json:
    """The one segment a per-leg action applies to (spec 2.5 "segment resolution")."""
    found = segments_for(booking, flight_number)
    if isinstance(found, dict):
        return found
    if flight_number is None and len(found) != 1:
        return error(
            "flight_number_required",
            f"Journey {booking.get('journey_id')} has {len(found)} segments; specify flight_number",
        )
    return found[0]


def journey_segment(db: Json, journey_id: str, flight_number: Any) -> Json | None:
    journey = find_journey(db, journey_id)
    if journey is None:
        return None
    return next(
        (s for s in journey.get("segments") or [] if s.get("flight_number") == flight_number),
        None,
    )


def adjust_seats(journey: Json | None, fare_class: str, delta: int) -> None:
    """Add ``delta`` seats of ``fare_class`` on every segment of ``journey``."""
    if journey is None:
        return
    for segment in journey.get("segments") or []:
        seats = segment.setdefault("available_seats", {})
        seats[fare_class] = seats.get(fare_class, 0) + delta


def min_seats(journey: Json, fare_class: str) -> int:
    """Seats bookable end to end: the minimum over the journey's segments (0 when none)."""
    counts = [
        (s.get("available_seats") or {}).get(fare_class, 0) or 0
        for s in journey.get("segments") or []
    ]
    return min(counts) if counts else 0


def current_date(db: Json) -> Any:
    return db.get("_current_date")
