"""``rebook_flight``: change fees, fare differences and the booking/seat mutations (spec 2.5).

Reference quirks kept on purpose (spec 12.5, 12.7): IRROPS is detected by the substring
"irrops" in the rebooking type, the *first* booking of the old journey in list order is
cancelled, and every old-journey segment gets a seat back even for a partial rebook.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from scenarios.engines.airline.common import (
    Json,
    adjust_seats,
    airline_tool,
    error,
    find_booking,
    find_journey,
    find_reservation,
    is_error,
    journey_segment,
    min_seats,
    segments_for,
    success,
)
from scenarios.engines.airline.params import RebookFlightParams

ECONOMY_CLASSES = frozenset({"basic_economy", "main_cabin", "premium_economy"})
VOLUNTARY_CHANGE_FEE = 75
SAME_DAY_BASIC_FEE = 199
SAME_DAY_FEE = 75


class RebookCost(BaseModel):
    """The money side of one rebooking, as reported in ``cost_summary``."""

    model_config = ConfigDict(frozen=True)
    original_fare_class: str = Field(description="Fare class of the booking being changed")
    new_fare_class: str = Field(description="Fare class of the new booking")
    cabin_changed: bool = Field(description="Whether the fare class changes")
    change_fee: int = Field(description="Change fee charged (0 when waived or IRROPS)")
    fare_difference: Any = Field(description="New fare minus old fare (may be negative)")
    credit_due: Any = Field(description="max(0, -fare_difference)")
    total_collected: Any = Field(description="Fee plus positive fare difference; 0 for IRROPS")
    fee_waived: bool = Field(description="IRROPS or an explicit waiver")


def is_irrops(rebooking_type: str) -> bool:
    return "irrops" in rebooking_type


def change_fee(rebooking_type: str, original_class: str, waived: bool) -> int:
    """Change fee of the reference: same-day basic 199, other changes 75 below business."""
    if waived or is_irrops(rebooking_type):
        return 0
    if rebooking_type == "same_day":
        return SAME_DAY_BASIC_FEE if original_class == "basic_economy" else SAME_DAY_FEE
    return VOLUNTARY_CHANGE_FEE if original_class in ECONOMY_CLASSES else 0


def rebook_cost(
    p: RebookFlightParams, original_class: str, old_fare: Any, new_fare: Any
) -> RebookCost:
    target = p.new_fare_class or original_class
    fee = change_fee(p.rebooking_type, original_class, p.waive_change_fee)
    difference = new_fare - old_fare
    irrops = is_irrops(p.rebooking_type)
    return RebookCost(
        original_fare_class=original_class,
        new_fare_class=target,
        cabin_changed=target != original_class,
        change_fee=fee,
        fare_difference=difference,
        credit_due=max(0, -difference),
        total_collected=0 if irrops else fee + max(0, difference),
        fee_waived=irrops or p.waive_change_fee,
    )


def booking_fare(booking: Json) -> Any:
    """A booking's fare: ``fare_paid``, else the sum of its segments' fares."""
    if booking.get("fare_paid") is not None:
        return booking["fare_paid"]
    return sum(s.get("fare_paid") or 0 for s in booking.get("segments") or [])


@dataclass(frozen=True)
class RebookPlan:
    """Everything a rebooking needs once every check has passed."""

    booking: Json  # the booking whose fares are used (non-cancelled preferred)
    new_journey: Json
    original_class: str
    replaced: Json | None  # the replaced leg of a partial rebook
    old_fare: Any
    new_fare: Any


def _new_segment_fare(
    index: int, segment: Json, target: str, plan: RebookPlan, irrops: bool
) -> Any:
    old_segments = plan.booking.get("segments") or []
    if irrops and plan.replaced is None and index < len(old_segments):
        return old_segments[index].get("fare_paid")
    if irrops and plan.replaced is not None and len(plan.new_journey.get("segments") or []) == 1:
        return plan.replaced.get("fare_paid")
    return (segment.get("fares") or {}).get(target, 0)


def _new_booking(plan: RebookPlan, target: str, irrops: bool) -> Json:
    journey = plan.new_journey
    segments = [
        {
            "flight_number": seg.get("flight_number"),
            "date": journey.get("date"),
            "fare_paid": _new_segment_fare(i, seg, target, plan, irrops),
            "seat": None,
            "bags_checked": 0,
            "meal_request": None,
        }
        for i, seg in enumerate(journey.get("segments") or [])
    ]
    return {
        "journey_id": journey.get("journey_id"),
        "fare_class": target,
        "fare_paid": plan.old_fare if irrops else plan.new_fare,
        "status": "confirmed",
        "segments": segments,
    }


def _kept_segments(booking: Json, flight_number: str) -> list[Json]:
    return [
        copy.deepcopy(s)
        for s in booking.get("segments") or []
        if s.get("flight_number") != flight_number
    ]


def _apply_rebooking(
    p: RebookFlightParams, db: Json, reservation: Json, plan: RebookPlan, cost: RebookCost
) -> list[Json]:
    """Mutate the DB; returns the kept segments of a partial rebook (empty otherwise)."""
    bookings: list[Json] = reservation.setdefault("bookings", [])
    first_old = next(b for b in bookings if b.get("journey_id") == p.journey_id)
    first_old["status"] = "cancelled"
    bookings.append(_new_booking(plan, cost.new_fare_class, is_irrops(p.rebooking_type)))
    kept: list[Json] = []
    if p.flight_number is not None:
        kept = _kept_segments(plan.booking, p.flight_number)
        bookings.append(
            {
                "journey_id": p.journey_id,
                "fare_class": cost.original_fare_class,
                "fare_paid": sum(s.get("fare_paid") or 0 for s in kept),
                "status": "confirmed",
                "segments": copy.deepcopy(kept),
            }
        )
    reservation["status"] = "changed"
    adjust_seats(plan.new_journey, cost.new_fare_class, -1)
    adjust_seats(find_journey(db, p.journey_id), cost.original_fare_class, +1)
    return kept


def plan_rebooking(p: RebookFlightParams, db: Json, booking: Json) -> RebookPlan | Json:
    """The rebooking plan, or the error response of the first check that fails."""
    new_journey = find_journey(db, p.new_journey_id)
    if new_journey is None:
        return error("flight_not_found", f"Flight {p.new_journey_id} not found")
    if new_journey.get("bookable") is False:
        return error("not_bookable", f"Flight {p.new_journey_id} is not bookable")
    original_class = str(booking.get("fare_class"))
    target = p.new_fare_class or original_class
    replaced: Json | None = None
    old_fare = booking_fare(booking)
    if p.flight_number is not None:
        found = segments_for(booking, p.flight_number)
        if isinstance(found, dict):
            return found
        replaced = found[0]
        old_fare = replaced.get("fare_paid")
    new_fare = (new_journey.get("fares") or {}).get(target)
    if new_fare is None:
        return error(
            "fare_class_not_available", f"Fare class {target} not available on {p.new_journey_id}"
        )
    if min_seats(new_journey, target) <= 0:
        return error("no_seats_available", f"No {target} seats available on {p.new_journey_id}")
    return RebookPlan(booking, new_journey, original_class, replaced, old_fare or 0, new_fare)


def _new_journey_view(journey: Json) -> Json:
    segments = copy.deepcopy(journey.get("segments") or [])
    return {
        "journey_id": journey.get("journey_id"),
        "num_stops": journey.get("num_stops"),
        "segments": segments,
        "departure": segments[0].get("scheduled_departure") if segments else None,
        "arrival": segments[-1].get("scheduled_arrival") if segments else None,
        "origin": journey.get("origin"),
        "destination": journey.get("destination"),
    }


def _partial_details(p: RebookFlightParams, db: Json, replaced: Json, kept: list[Json]) -> Json:
    source = journey_segment(db, p.journey_id, replaced.get("flight_number")) or {}
    return {
        "partial_rebook": True,
        "replaced_segment": {
            "flight_number": replaced.get("flight_number"),
            "origin": source.get("origin"),
            "destination": source.get("destination"),
            "fare_paid": replaced.get("fare_paid"),
        },
        "kept_segments": kept,
    }


@airline_tool("rebook_flight", RebookFlightParams)
def rebook_flight(p: RebookFlightParams, db: Json, call_index: int) -> Json:
    reservation = find_reservation(db, p.confirmation_number)
    if is_error(reservation):
        return reservation
    booking = find_booking(reservation, p.journey_id)
    if is_error(booking):
        return booking
    plan = plan_rebooking(p, db, booking)
    if not isinstance(plan, RebookPlan):
        return plan
    cost = rebook_cost(p, plan.original_class, plan.old_fare, plan.new_fare)
    replaced = copy.deepcopy(plan.replaced)
    kept = _apply_rebooking(p, db, reservation, plan, cost)
    message = f"Successfully rebooked to flight {p.new_journey_id}"
    if cost.cabin_changed:
        message += f" in {cost.new_fare_class}"
    response = success(
        message,
        confirmation_number=p.confirmation_number,
        new_journey=_new_journey_view(plan.new_journey),
        cost_summary=cost.model_dump(),
    )
    if replaced is not None:
        response.update(_partial_details(p, db, replaced, kept))
    return response
