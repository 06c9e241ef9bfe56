"""Parameter validation of the airline tools: error types, messages and absent values."""

from __future__ import annotations

from typing import Any

import pytest

from scenarios.engines.airline.params import FIELD_ERROR_TYPES
from scenarios.executor import ToolEngine
from tests.scenarios.engines.test_airline_rules import synthetic_db

REBOOK = {
    "confirmation_number": "ABC123",
    "journey_id": "FL_SK100_20260401",
    "new_journey_id": "FL_SK110_20260401",
    "rebooking_type": "voluntary",
    "waive_change_fee": False,
}


@pytest.fixture
def engine() -> ToolEngine:
    return ToolEngine("airline", synthetic_db())


@pytest.mark.parametrize(
    ("tool", "params", "error_type"),
    [
        ("get_reservation", {"confirmation_number": "AB12", "last_name": "x"},
         "invalid_confirmation_number_format"),
        ("get_reservation", {"confirmation_number": 123456, "last_name": "x"},
         "invalid_confirmation_number_format"),
        ("get_flight_status", {"flight_number": "S1", "flight_date": "2026-04-01"},
         "invalid_flight_number_format"),
        ("get_flight_status", {"flight_number": "SK1", "flight_date": "04/01/2026"},
         "invalid_date_format"),
        ("get_disruption_info", {"flight_number": "SK1", "date": "2026-02-30"},
         "invalid_date_format"),
        ("search_rebooking_options", {"origin": "AUST", "destination": "LAX",
         "date": "2026-04-01", "passenger_count": 1, "fare_class": "any"},
         "invalid_airport_code_format"),
        ("search_rebooking_options", {"origin": "AUS", "destination": "LAX",
         "date": "2026-04-01", "passenger_count": 1, "fare_class": "economy"},
         "invalid_fare_class"),
        ("rebook_flight", REBOOK | {"rebooking_type": "upgrade"}, "invalid_rebooking_type"),
        ("rebook_flight", REBOOK | {"new_fare_class": "any"}, "invalid_fare_class"),
        ("rebook_flight", REBOOK | {"new_journey_id": "SK110"}, "invalid_journey_id_format"),
        ("add_to_standby", {"confirmation_number": "ABC123", "journey_id": "FL_SK1_20260401",
         "passenger_ids": ["PAX001", "pax2"]}, "invalid_passenger_id_format"),
        ("assign_seat", {"confirmation_number": "ABC123", "journey_id": "FL_SK1_20260401",
         "passenger_id": "PAX001", "seat_preference": "exit_row"}, "invalid_seat_preference"),
        ("add_baggage_allowance", {"confirmation_number": "ABC123",
         "journey_id": "FL_SK1_20260401", "num_bags": 6}, "invalid_bag_count"),
        ("add_baggage_allowance", {"confirmation_number": "ABC123",
         "journey_id": "FL_SK1_20260401", "num_bags": -1}, "invalid_bag_count"),
        ("add_meal_request", {"confirmation_number": "ABC123", "journey_id": "FL_SK1_20260401",
         "passenger_id": "PAX001", "meal_type": "pasta"}, "invalid_meal_type"),
        ("issue_travel_credit", {"confirmation_number": "ABC123", "passenger_id": "PAX001",
         "amount": 10, "credit_reason": "because"}, "invalid_credit_reason"),
        ("issue_meal_voucher", {"confirmation_number": "ABC123", "passenger_id": "PAX001",
         "voucher_reason": "hungry"}, "invalid_voucher_reason"),
        ("cancel_reservation", {"confirmation_number": "ABC123", "journey_id": "FL_SK1_20260401",
         "cancellation_reason": "changed_mind"}, "invalid_cancellation_reason"),
        ("process_refund", {"confirmation_number": "ABC123", "refund_amount": 5,
         "refund_type": "everything"}, "invalid_refund_type"),
    ],
)  # fmt: skip
def test_mapped_fields_get_their_error_type(
    engine: ToolEngine, tool: str, params: dict[str, Any], error_type: str
) -> None:
    before = engine.final_hash
    response = engine.execute(tool, params)
    assert response["status"] == "error" and response["error_type"] == error_type
    assert response["message"].startswith("Invalid ")
    assert engine.final_hash == before


def test_mapped_message_quotes_input_and_format_hint(engine: ToolEngine) -> None:
    response = engine.execute("get_reservation", {"confirmation_number": "AB-12", "last_name": "x"})
    assert response["message"] == (
        "Invalid confirmation_number 'AB-12': must be a 6-character alphanumeric code (e.g. ZK3FFW)"
    )


def test_missing_mapped_field_uses_its_error_type(engine: ToolEngine) -> None:
    response = engine.execute("get_reservation", {"last_name": "garcia"})
    assert response["error_type"] == "invalid_confirmation_number_format"
    assert response["message"].startswith("Invalid confirmation_number 'None'")


def test_first_mapped_error_wins_over_earlier_unmapped_ones(engine: ToolEngine) -> None:
    # passenger_count (unmapped) fails before fare_class, but the mapped error is reported.
    params = {"origin": "AUS", "destination": "LAX", "date": "2026-04-01"}
    response = engine.execute(
        "search_rebooking_options", params | {"passenger_count": 0, "fare_class": "cheap"}
    )
    assert response["error_type"] == "invalid_fare_class"


@pytest.mark.parametrize(
    ("tool", "params", "location"),
    [
        ("rebook_flight", {k: v for k, v in REBOOK.items() if k != "waive_change_fee"},
         "waive_change_fee"),
        ("rebook_flight", REBOOK | {"waive_change_fee": "perhaps"}, "waive_change_fee"),
        ("issue_travel_credit", {"confirmation_number": "ABC123", "passenger_id": "PAX001",
         "amount": 0, "credit_reason": "goodwill"}, "amount"),
        ("process_refund", {"confirmation_number": "ABC123", "refund_amount": "lots",
         "refund_type": "taxes_only"}, "refund_amount"),
        ("issue_hotel_voucher", {"confirmation_number": "ABC123", "passenger_id": "PAX001",
         "num_nights": 0}, "num_nights"),
        ("search_rebooking_options", {"origin": "AUS", "destination": "LAX",
         "date": "2026-04-01", "passenger_count": 0, "fare_class": "any"}, "passenger_count"),
        ("transfer_to_agent", {"confirmation_number": "ABC123", "transfer_reason": "x"},
         "issue_summary"),
        ("get_reservation", {"confirmation_number": "ABC123", "last_name": None}, "last_name"),
    ],
)  # fmt: skip
def test_unmapped_fields_are_invalid_parameter(
    engine: ToolEngine, tool: str, params: dict[str, Any], location: str
) -> None:
    response = engine.execute(tool, params)
    assert response["error_type"] == "invalid_parameter"
    assert response["message"].startswith(f"Invalid parameter '{location}': ")
    assert location not in FIELD_ERROR_TYPES


@pytest.mark.parametrize("absent", ["", ".", "none", "NULL", "N/A", "na", None])
def test_absent_optional_strings_mean_omitted(engine: ToolEngine, absent: Any) -> None:
    response = engine.execute(
        "rebook_flight", REBOOK | {"flight_number": absent, "new_fare_class": absent}
    )
    assert response["status"] == "success"
    assert "partial_rebook" not in response
    assert response["cost_summary"]["new_fare_class"] == "main_cabin"


def test_codes_are_upper_cased_and_extra_params_ignored(engine: ToolEngine) -> None:
    search = {"origin": "aus", "destination": "Lax", "date": "2026-04-01", "passenger_count": "2"}
    response = engine.execute(
        "search_rebooking_options", search | {"fare_class": "any", "airline": "SkyWay"}
    )
    assert response["count"] == 2
    refund = {"confirmation_number": "abc123", "refund_amount": 5, "refund_type": "taxes_only"}
    assert engine.execute("process_refund", refund)["refund_id"] == "REF-ABC123-001"


def test_non_dict_params_are_treated_as_empty(engine: ToolEngine) -> None:
    response = engine.execute("get_reservation", ["ABC123", "garcia"])
    assert response["error_type"] == "invalid_confirmation_number_format"
