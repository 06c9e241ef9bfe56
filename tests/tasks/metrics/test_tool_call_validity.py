from __future__ import annotations

import pytest

from tasks.metrics.context import build_context
from tasks.metrics.tool_call_validity import compute as tool_call_validity
from tasks.metrics.tool_call_validity import field_error_types, is_invalid_call
from tests.tasks.metrics.builders import call, make_scenario, text_record


def _err(error_type: str) -> dict:
    return {"status": "error", "error_type": error_type, "message": f"bad: {error_type}"}


def test_no_calls_scores_one() -> None:
    record = text_record(tool_calls=[])
    score = tool_call_validity(build_context(record, make_scenario()))
    assert score.score == 1.0 and score.sub_metrics["num_tool_calls"].score == 0


def test_executor_and_field_errors_are_invalid_business_errors_are_not() -> None:
    calls = [
        call(0, 1, "get_reservation", _err("invalid_confirmation_number_format")),
        call(1, 1, "get_reservation", _err("not_found")),
        call(2, 1, "teleport", _err("tool_not_found")),
        call(3, 1, "get_reservation"),
    ]
    score = tool_call_validity(build_context(text_record(tool_calls=calls), make_scenario()))
    assert score.score == 0.5 and score.normalized_score == 0.5
    assert [e["error_type"] for e in score.details["errors"]] == [
        "invalid_confirmation_number_format",
        "tool_not_found",
    ]
    assert score.sub_metrics["tool_not_found_rate"].score == 0.25
    assert score.sub_metrics["invalid_parameter_rate"].score == 0.0
    assert score.sub_metrics["num_tool_calls"].score == 4


@pytest.mark.parametrize(
    ("domain", "error_type", "invalid"),
    [
        ("itsm", "invalid_employee_id_format", True),  # counted valid by the reference (12.8)
        ("medical_hr", "invalid_npi_format", True),
        ("medical_hr", "invalid_clearance_code", False),  # business rule, not a format
        ("itsm", "invalid_access_level", False),
        ("itsm", "invalid_parameter", True),
        ("airline", "invalid_fare_class", True),
        ("airline", "not_found", False),
        ("medical_hr", None, False),
    ],
)
def test_validation_errors_are_per_domain(
    domain: str, error_type: str | None, invalid: bool
) -> None:
    assert is_invalid_call(domain, error_type) is invalid


def test_domain_maps_come_from_engines() -> None:
    assert "invalid_fare_class" in field_error_types("airline")
    assert field_error_types("unknown_domain") == frozenset()


def test_itsm_record_scored_against_itsm_map() -> None:
    calls = [call(0, 1, "verify_employee_auth", _err("invalid_employee_id_format"))]
    scenario = make_scenario(domain="itsm")
    score = tool_call_validity(build_context(text_record(tool_calls=calls), scenario))
    assert score.score == 0.0
    assert score.sub_metrics["invalid_employee_id_format_rate"].score == 1.0
