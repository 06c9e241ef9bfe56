"""Money and hand-off tools (spec 2.5): credits, vouchers, cancellation, refunds, transfer.

Generated codes follow the reference exactly, collisions included (spec 12.6): meal
vouchers use the first 4 characters of the passenger id, travel credits the first 3,
hotel vouchers only the confirmation number, so later issues overwrite earlier ones.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from scenarios.engines.airline.common import (
    Json,
    adjust_seats,
    airline_tool,
    current_date,
    error,
    find_booking,
    find_journey,
    find_reservation,
    is_error,
    success,
    table,
)
from scenarios.engines.airline.params import (
    CancelReservationParams,
    IssueHotelVoucherParams,
    IssueMealVoucherParams,
    IssueTravelCreditParams,
    ProcessRefundParams,
    TransferToAgentParams,
)
from scenarios.engines.airline.rebooking import booking_fare

CREDIT_VALID_MONTHS = 12
MAX_HOTEL_NIGHTS = 3
MEAL_VOUCHER_AMOUNTS = {
    "delay_over_2_hours": 12,
    "delay_over_4_hours": 15,
    "cancellation_wait_same_day": 15,
    "irrops_overnight": 25,
}
REFUNDABLE_REASONS = frozenset({"irrops_refund", "24_hour_rule"})
NON_REFUNDABLE_CANCELLATION_FEE = 100
REFUND_PROCESSING_DAYS = 7


def one_year_later(iso_date: Any) -> Any:
    """Same calendar day next year (29 February falls back to the 28th)."""
    try:
        day = date.fromisoformat(str(iso_date))
    except ValueError:
        return None
    try:
        return day.replace(year=day.year + 1).isoformat()
    except ValueError:
        return day.replace(year=day.year + 1, day=28).isoformat()


@airline_tool("issue_travel_credit", IssueTravelCreditParams)
def issue_travel_credit(p: IssueTravelCreditParams, db: Json, call_index: int) -> Json:
    reservation = find_reservation(db, p.confirmation_number)
    if is_error(reservation):
        return reservation
    code = f"TC{p.confirmation_number}{p.passenger_id[:3].upper()}"
    issued = current_date(db)
    table(db, "travel_credits")[code] = {
        "credit_code": code,
        "confirmation_number": p.confirmation_number,
        "passenger_id": p.passenger_id,
        "amount": p.amount,
        "credit_reason": p.credit_reason,
        "issued_date": issued,
        "expiry_date": one_year_later(issued),
        "status": "active",
    }
    return success(
        f"${p.amount} travel credit issued with code {code}",
        confirmation_number=p.confirmation_number,
        passenger_id=p.passenger_id,
        credit_code=code,
        amount=p.amount,
        valid_months=CREDIT_VALID_MONTHS,
    )


@airline_tool("issue_hotel_voucher", IssueHotelVoucherParams)
def issue_hotel_voucher(p: IssueHotelVoucherParams, db: Json, call_index: int) -> Json:
    reservation = find_reservation(db, p.confirmation_number)
    if is_error(reservation):
        return reservation
    if p.num_nights > MAX_HOTEL_NIGHTS:
        return error(
            "exceeds_authority",
            f"Hotel voucher for {p.num_nights} nights exceeds agent authority "
            f"(maximum {MAX_HOTEL_NIGHTS} nights)",
        )
    code = f"HOTEL-{p.confirmation_number}"
    table(db, "hotel_vouchers")[code] = {
        "voucher_code": code,
        "confirmation_number": p.confirmation_number,
        "passenger_id": p.passenger_id,
        "num_nights": p.num_nights,
        "issued_date": current_date(db),
        "status": "active",
    }
    return success(
        f"Hotel voucher issued with code {code} for {p.num_nights} nights",
        confirmation_number=p.confirmation_number,
        passenger_id=p.passenger_id,
        voucher_code=code,
        number_of_nights=p.num_nights,
        valid_at="Any hotels in airport area",
    )


@airline_tool("issue_meal_voucher", IssueMealVoucherParams)
def issue_meal_voucher(p: IssueMealVoucherParams, db: Json, call_index: int) -> Json:
    reservation = find_reservation(db, p.confirmation_number)
    if is_error(reservation):
        return reservation
    amount = MEAL_VOUCHER_AMOUNTS[p.voucher_reason]
    code = f"MEAL-{p.confirmation_number}-{p.passenger_id[:4]}"
    table(db, "meal_vouchers")[code] = {
        "voucher_code": code,
        "confirmation_number": p.confirmation_number,
        "passenger_id": p.passenger_id,
        "amount": amount,
        "voucher_reason": p.voucher_reason,
        "issued_date": current_date(db),
        "status": "active",
    }
    return success(
        f"${amount} meal voucher issued with code {code}",
        confirmation_number=p.confirmation_number,
        passenger_id=p.passenger_id,
        voucher_code=code,
        amount=amount,
        valid_at="Airport terminal restaurants",
    )


def cancellation_terms(reason: str, fare_type: Any, fare: Any) -> Json:
    """Refundability, fee and the refund/credit the passenger is eligible for."""
    refundable = reason in REFUNDABLE_REASONS or fare_type == "refundable"
    fee = 0 if refundable else NON_REFUNDABLE_CANCELLATION_FEE
    return {
        "is_refundable": refundable,
        "cancellation_fee": fee,
        "refund_amount_eligible": max(0, fare - fee) if refundable else 0,
        "credit_amount_eligible": 0
        if refundable
        else max(0, fare - NON_REFUNDABLE_CANCELLATION_FEE),
    }


@airline_tool("cancel_reservation", CancelReservationParams)
def cancel_reservation(p: CancelReservationParams, db: Json, call_index: int) -> Json:
    reservation = find_reservation(db, p.confirmation_number)
    if is_error(reservation):
        return reservation
    booking = find_booking(reservation, p.journey_id)
    if is_error(booking):
        return booking
    if booking.get("status") == "cancelled":
        return error("already_cancelled", f"Journey {p.journey_id} is already cancelled")
    terms = cancellation_terms(
        p.cancellation_reason, reservation.get("fare_type"), booking_fare(booking)
    )
    booking["status"] = "cancelled"
    adjust_seats(find_journey(db, p.journey_id), str(booking.get("fare_class")), +1)
    bookings = reservation.get("bookings") or []
    all_cancelled = all(b.get("status") == "cancelled" for b in bookings)
    if all_cancelled:
        reservation["status"] = "cancelled"
    return success(
        f"Journey {p.journey_id} cancelled successfully",
        confirmation_number=p.confirmation_number,
        journey_id=p.journey_id,
        **terms,
        reservation_status="cancelled" if all_cancelled else "active",
    )


@airline_tool("process_refund", ProcessRefundParams)
def process_refund(p: ProcessRefundParams, db: Json, call_index: int) -> Json:
    reservation = find_reservation(db, p.confirmation_number)
    if is_error(reservation):
        return reservation
    refund_id = f"REF-{p.confirmation_number}-{call_index:03d}"
    table(db, "refunds")[refund_id] = {
        "refund_id": refund_id,
        "confirmation_number": p.confirmation_number,
        "refund_amount": p.refund_amount,
        "refund_type": p.refund_type,
        "processing_days": REFUND_PROCESSING_DAYS,
        "initiated_date": current_date(db),
        "status": "processing",
    }
    return success(
        f"${p.refund_amount} refund initiated, processing time "
        f"{REFUND_PROCESSING_DAYS} business days",
        confirmation_number=p.confirmation_number,
        refund_id=refund_id,
        refund_amount=p.refund_amount,
        refund_type=p.refund_type,
        processing_days=REFUND_PROCESSING_DAYS,
    )


@airline_tool("transfer_to_agent", TransferToAgentParams)
def transfer_to_agent(p: TransferToAgentParams, db: Json, call_index: int) -> Json:
    reservation = find_reservation(db, p.confirmation_number)
    if is_error(reservation):
        return reservation
    return success(
        "Transferring to live agent",
        confirmation_number=p.confirmation_number,
        transfer_id=f"TRF-{p.confirmation_number}-{call_index:03d}",
        transfer_reason=p.transfer_reason,
        issue_summary=p.issue_summary,
        estimated_wait="2-3 minutes",
    )
