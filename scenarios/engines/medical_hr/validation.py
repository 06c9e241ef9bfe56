"""Parameter validation with the reference's error conventions (spec 2.3).

The first validation error on a field of :data:`FIELD_ERROR_TYPES` (including a missing
required field) becomes that field's ``error_type`` with an "Invalid <field> '<input>'"
message quoting the field's description and example; anything else (unmapped fields) is
``invalid_parameter``.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from scenarios.engines.medical_hr.params import ToolParams

P = TypeVar("P", bound=ToolParams)

_FIELD_GROUPS: dict[str, tuple[str, ...]] = {
    "invalid_employee_id_format": ("employee_id", "colleague_employee_id"),
    "invalid_npi_format": ("npi", "supervising_physician_npi"),
    "invalid_facility_code_format": ("facility_code", "new_facility_code"),
    "invalid_pin_format": ("pin",),
    "invalid_otp_format": ("otp_code",),
    "invalid_date_format": (
        "date_of_birth",
        "preferred_date",
        "effective_date",
        "expiration_date",
        "leave_start_date",
        "leave_end_date",
        "availability_start_date",
        "availability_end_date",
        "blackout_dates",
        "document_expiration_date",
        "dependent_date_of_birth",
        "start_date",
        "end_date",
    ),
    "invalid_datetime_format": ("appointment_datetime",),
    "invalid_dea_number_format": ("dea_number",),
    "invalid_license_number_format": ("state_license_number",),
    "invalid_shift_id_format": ("shift_id",),
    "invalid_case_id_format": ("case_id",),
    "invalid_completion_code_format": ("completion_code",),
    "invalid_clearance_code_format": ("clearance_code",),
    "invalid_state_code_format": ("state_code", "new_state_code"),
    "invalid_unit_code_format": ("unit_code",),
    "invalid_policy_number_format": ("new_policy_number",),
    "invalid_privilege_code_format": ("privilege_codes",),
    "invalid_document_number_format": ("document_number",),
    "invalid_country_code_format": ("issuing_country_code", "dependent_country_of_birth"),
    "invalid_petition_number_format": ("visa_petition_number",),
    "invalid_receipt_number_format": ("uscis_receipt_number",),
    "invalid_name_format": ("dependent_first_name", "dependent_last_name"),
    "invalid_extension_days": ("extension_days",),
    "invalid_corrected_hours": ("corrected_hours",),
    "invalid_coverage_limit": ("per_occurrence_limit_usd", "aggregate_limit_usd"),
    "invalid_department_code": ("department_code",),
    "invalid_appointment_type": ("appointment_type",),
    "invalid_extension_type": ("extension_type",),
    "invalid_notification_type": ("notification_type",),
    "invalid_carrier": ("new_carrier",),
    "invalid_task_code": ("task_code",),
    "invalid_transfer_reason": ("transfer_reason",),
    "invalid_leave_category": ("leave_category",),
    "invalid_correction_type": ("correction_type",),
    "invalid_leave_type": ("leave_type_on_record",),
    "invalid_access_change_type": ("access_change_type",),
    "invalid_oncall_tier": ("oncall_tier",),
    "invalid_verification_action": ("verification_action",),
    "invalid_document_list_type": ("document_list_type",),
    "invalid_document_type_code": ("document_type_code",),
    "invalid_relationship": ("relationship",),
    "invalid_pto_type": ("pto_type",),
}

FIELD_ERROR_TYPES: dict[str, str] = {
    field: error_type for error_type, fields in _FIELD_GROUPS.items() for field in fields
}
"""Parameter name -> error_type returned when that parameter fails validation."""

ABSENT_STRINGS = frozenset({"", ".", "none", "null", "n/a", "na"})
"""Values of optional string parameters that mean "not given" (case-insensitive)."""

OPTIONAL_STRING_FIELDS = frozenset({"supervising_physician_npi"})


def drop_absent_optionals(params: dict[str, Any]) -> dict[str, Any]:
    """Treat placeholder strings in optional string fields as if the field were omitted."""
    cleaned = dict(params)
    for field in OPTIONAL_STRING_FIELDS:
        value = cleaned.get(field)
        if isinstance(value, str) and value.strip().lower() in ABSENT_STRINGS:
            cleaned[field] = None
    return cleaned


def parse_params(model: type[P], params: dict[str, Any]) -> P | dict[str, Any]:
    """The validated model, or the structured error response for the first bad field."""
    try:
        return model.model_validate(drop_absent_optionals(params))
    except ValidationError as exc:
        return validation_error_response(model, exc.errors(include_url=False))


def validation_error_response(
    model: type[ToolParams], errors: list[ErrorDetails]
) -> dict[str, Any]:
    for err in errors:
        field = str(err["loc"][0]) if err["loc"] else ""
        if field in FIELD_ERROR_TYPES:
            return {
                "status": "error",
                "error_type": FIELD_ERROR_TYPES[field],
                "message": _field_message(model, field, err),
            }
    first = errors[0]
    location = ".".join(str(part) for part in first["loc"]) or "params"
    return {
        "status": "error",
        "error_type": "invalid_parameter",
        "message": f"Invalid parameter {location}: {first['msg']}",
    }


def _field_message(model: type[ToolParams], field: str, err: ErrorDetails) -> str:
    info = model.model_fields.get(field)
    missing = err["type"] == "missing"
    head = f"Invalid {field}" if missing else f"Invalid {field} '{err['input']}'"
    hints = ["a value is required"] if missing else []
    if err["type"] == "literal_error":
        hints.append(f"must be one of {(err.get('ctx') or {}).get('expected', '')}")
    elif info is not None and info.description:
        hints.append(f"must be {info.description}")
    text = f"{head}: {'; '.join(hints)}" if hints else head
    if info is not None and info.examples and err["type"] != "literal_error":
        text += f" (e.g. {info.examples[0]})"
    return text
