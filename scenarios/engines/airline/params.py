"""Typed parameter models of the airline tools and the reference's validation-error mapping.

Every tool validates its raw ``params`` against one of these models before touching the DB
(EVA spec 2.3). A failure becomes a structured error response, never an exception.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

CONFIRMATION_RE = re.compile(r"^[A-Za-z0-9]{6}$")
FLIGHT_NUMBER_RE = re.compile(r"^[A-Za-z]{2,3}\d{1,4}$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
JOURNEY_ID_RE = re.compile(r"^FL_(?:[A-Za-z]{2,3}\d{1,4}_)+\d{8}$")
PASSENGER_ID_RE = re.compile(r"^PAX\d+$")
AIRPORT_RE = re.compile(r"^[A-Za-z]{3}$")

# Optional strings an LLM fills with a placeholder instead of omitting them.
ABSENT_STRINGS = frozenset({"", ".", "none", "null", "n/a", "na"})

FareClass = Literal["basic_economy", "main_cabin", "premium_economy", "business", "first"]
SearchFareClass = Literal[
    "basic_economy", "main_cabin", "premium_economy", "business", "first", "any"
]
RebookingType = Literal[
    "voluntary",
    "same_day",
    "irrops_cancellation",
    "irrops_delay",
    "irrops_schedule_change",
    "missed_flight_passenger_fault",
    "missed_connection_airline_fault",
]
SeatPreference = Literal["window", "aisle", "middle", "no_preference"]
MealType = Literal[
    "vegetarian",
    "vegan",
    "kosher",
    "halal",
    "gluten_free",
    "diabetic",
    "low_sodium",
    "child",
    "hindu",
    "none",
    "standard",
]
CreditReason = Literal[
    "cancellation_non_refundable",
    "fare_difference_negative",
    "service_recovery",
    "goodwill",
    "downgrade_compensation",
]
VoucherReason = Literal[
    "delay_over_2_hours", "delay_over_4_hours", "cancellation_wait_same_day", "irrops_overnight"
]
RefundType = Literal["full_fare", "partial_fare", "taxes_only", "ancillary_fees"]
CancellationReason = Literal[
    "voluntary", "irrops_refund", "24_hour_rule", "schedule_unacceptable", "medical", "bereavement"
]

# Field -> error_type of the reference (spec 2.3); every other field maps to invalid_parameter.
FIELD_ERROR_TYPES: dict[str, str] = {
    "rebooking_type": "invalid_rebooking_type",
    "new_fare_class": "invalid_fare_class",
    "fare_class": "invalid_fare_class",
    "meal_type": "invalid_meal_type",
    "credit_reason": "invalid_credit_reason",
    "voucher_reason": "invalid_voucher_reason",
    "refund_type": "invalid_refund_type",
    "seat_preference": "invalid_seat_preference",
    "cancellation_reason": "invalid_cancellation_reason",
    "confirmation_number": "invalid_confirmation_number_format",
    "flight_number": "invalid_flight_number_format",
    "flight_date": "invalid_date_format",
    "date": "invalid_date_format",
    "journey_id": "invalid_journey_id_format",
    "new_journey_id": "invalid_journey_id_format",
    "passenger_id": "invalid_passenger_id_format",
    "passenger_ids": "invalid_passenger_id_format",
    "origin": "invalid_airport_code_format",
    "destination": "invalid_airport_code_format",
    "num_bags": "invalid_bag_count",
}

# "must be ..." text and examples appended to the message of a mapped field's error.
FIELD_HINTS: dict[str, tuple[str, str]] = {
    "confirmation_number": ("a 6-character alphanumeric code", "ZK3FFW"),
    "flight_number": ("2-3 letters followed by 1-4 digits", "SK621"),
    "flight_date": ("a date in YYYY-MM-DD format", "2026-03-20"),
    "date": ("a date in YYYY-MM-DD format", "2026-03-20"),
    "journey_id": ("FL_<flight numbers>_<YYYYMMDD>", "FL_SK621_20260320, FL_SK715_SK330_20260908"),
    "new_journey_id": ("FL_<flight numbers>_<YYYYMMDD>", "FL_SK621_20260320"),
    "passenger_id": ("PAX followed by digits", "PAX001"),
    "passenger_ids": ("a list of PAX followed by digits", "['PAX001', 'PAX002']"),
    "origin": ("a 3-letter airport code", "AUS"),
    "destination": ("a 3-letter airport code", "LAX"),
    "num_bags": ("an integer from 0 to 5", "1"),
}


def _matching(pattern: re.Pattern[str], what: str, upper: bool = False) -> AfterValidator:
    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            raise ValueError(f"{what} does not match {pattern.pattern}")
        return value.upper() if upper else value

    return AfterValidator(check)


def _calendar_date(value: str) -> str:
    if not DATE_RE.fullmatch(value):
        raise ValueError("date must be YYYY-MM-DD")
    date.fromisoformat(value)  # rejects 2026-02-30 with a ValueError pydantic reports
    return value


def _absent_to_none(value: Any) -> Any:
    if isinstance(value, str) and value.strip().lower() in ABSENT_STRINGS:
        return None
    return value


ConfirmationNumber = Annotated[str, _matching(CONFIRMATION_RE, "confirmation number", upper=True)]
FlightNumber = Annotated[str, _matching(FLIGHT_NUMBER_RE, "flight number")]
FlightDate = Annotated[str, AfterValidator(_calendar_date)]
JourneyId = Annotated[str, _matching(JOURNEY_ID_RE, "journey id")]
PassengerId = Annotated[str, _matching(PASSENGER_ID_RE, "passenger id")]
AirportCode = Annotated[str, _matching(AIRPORT_RE, "airport code", upper=True)]
OptionalFlightNumber = Annotated[FlightNumber | None, BeforeValidator(_absent_to_none)]
OptionalFareClass = Annotated[FareClass | None, BeforeValidator(_absent_to_none)]


class AirlineParams(BaseModel):
    """Base of every airline parameter model: unknown extra keys are ignored, like the LLM's."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class ConfirmationParams(AirlineParams):
    confirmation_number: ConfirmationNumber = Field(
        description="6-character alphanumeric booking code (upper-cased before lookup)"
    )


class GetReservationParams(ConfirmationParams):
    last_name: str = Field(description="Passenger last name, compared case-insensitively")


class GetFlightStatusParams(AirlineParams):
    flight_number: FlightNumber = Field(description="Flight number, e.g. SK621")
    flight_date: FlightDate = Field(description="Flight date YYYY-MM-DD")


class GetDisruptionInfoParams(AirlineParams):
    flight_number: FlightNumber = Field(description="Flight number, e.g. SK621")
    date: FlightDate = Field(description="Flight date YYYY-MM-DD")


class SearchRebookingParams(AirlineParams):
    origin: AirportCode = Field(description="Origin airport code (upper-cased)")
    destination: AirportCode = Field(description="Destination airport code (upper-cased)")
    date: FlightDate = Field(description="Travel date YYYY-MM-DD")
    passenger_count: int = Field(ge=1, description="Seats needed in the fare class")
    fare_class: SearchFareClass = Field(description="Fare class, or 'any' for the cheapest")


class JourneyParams(ConfirmationParams):
    journey_id: JourneyId = Field(description="Journey id of a booking in the reservation")


class RebookFlightParams(JourneyParams):
    new_journey_id: JourneyId = Field(description="Journey id of the replacement journey")
    rebooking_type: RebookingType = Field(description="Why the passenger is rebooked")
    waive_change_fee: bool = Field(description="Agent-authorised change-fee waiver")
    new_fare_class: OptionalFareClass = Field(None, description="Target class; omit to keep")
    flight_number: OptionalFlightNumber = Field(None, description="Leg to replace (partial)")


class AddToStandbyParams(JourneyParams):
    passenger_ids: list[PassengerId] = Field(description="Passengers to put on standby")


class AssignSeatParams(JourneyParams):
    passenger_id: PassengerId = Field(description="Passenger identifier, e.g. PAX001")
    seat_preference: SeatPreference = Field(description="Seat type wanted")
    flight_number: OptionalFlightNumber = Field(None, description="Segment of a multi-leg trip")


class AddBaggageParams(JourneyParams):
    num_bags: int = Field(ge=0, le=5, description="Checked bags, 0-5")
    flight_number: OptionalFlightNumber = Field(None, description="One segment; omit for all")


class AddMealRequestParams(JourneyParams):
    passenger_id: PassengerId = Field(description="Passenger identifier, e.g. PAX001")
    meal_type: MealType = Field(description="Special meal code")
    flight_number: OptionalFlightNumber = Field(None, description="One segment; omit for all")


class PassengerParams(ConfirmationParams):
    passenger_id: PassengerId = Field(description="Passenger identifier, e.g. PAX001")


class IssueTravelCreditParams(PassengerParams):
    amount: float = Field(gt=0, allow_inf_nan=False, description="Credit amount in USD")
    credit_reason: CreditReason = Field(description="Why the credit is issued")


class IssueHotelVoucherParams(PassengerParams):
    num_nights: int = Field(ge=1, description="Nights covered by the voucher")


class IssueMealVoucherParams(PassengerParams):
    voucher_reason: VoucherReason = Field(description="Delay/disruption tier of the voucher")


class CancelReservationParams(JourneyParams):
    cancellation_reason: CancellationReason = Field(description="Why the journey is cancelled")


class ProcessRefundParams(ConfirmationParams):
    refund_amount: float = Field(gt=0, allow_inf_nan=False, description="Amount to refund")
    refund_type: RefundType = Field(description="What the refund covers")


class TransferToAgentParams(ConfirmationParams):
    transfer_reason: str = Field(description="Why the call is transferred")
    issue_summary: str = Field(description="Summary of the issue for the live agent")


def _error(error_type: str, message: str) -> dict[str, Any]:
    return {"status": "error", "error_type": error_type, "message": message}


def _mapped_field_error(field: str, err: ErrorDetails, params: dict[str, Any]) -> dict[str, Any]:
    value = params.get(field) if err["type"] == "missing" else err.get("input")
    message = f"Invalid {field} '{value}'"
    hint = FIELD_HINTS.get(field)
    if hint is not None:
        message += f": must be {hint[0]} (e.g. {hint[1]})"
    return _error(FIELD_ERROR_TYPES[field], message)


def validation_error_response(exc: ValidationError, params: dict[str, Any]) -> dict[str, Any]:
    """The reference's error response for a failed parameter validation (spec 2.3)."""
    errors = exc.errors(include_url=False)
    for err in errors:
        field = err["loc"][0] if err["loc"] else None
        if isinstance(field, str) and field in FIELD_ERROR_TYPES:
            return _mapped_field_error(field, err, params)
    first = errors[0]
    location = ".".join(str(part) for part in first["loc"]) or "params"
    return _error("invalid_parameter", f"Invalid parameter '{location}': {first['msg']}")
