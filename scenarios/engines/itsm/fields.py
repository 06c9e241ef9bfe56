"""Typed parameter fields of the ITSM tools and the reference's validation-error mapping.

Every tool validates its raw ``params`` against a model built from these fields before it
touches the DB (EVA spec 2.3). A failure becomes a structured error response: the first
error on a field of :data:`FIELD_ERROR_TYPES` gets that field's error type and a message
``Invalid <field> '<input>': must be ... (e.g. ...)``; anything else is ``invalid_parameter``.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

# Optional strings an LLM fills with a placeholder instead of omitting them (spec 2.3).
ABSENT_STRINGS = frozenset({"", ".", "none", "null", "n/a", "na"})


class FieldFormat:
    """One identifier format: its regex, the reference's error type and its help text."""

    def __init__(self, pattern: str | None, error_type: str, must_be: str, example: str) -> None:
        self.regex = re.compile(pattern or ".*")
        self.error_type = error_type
        self.must_be = must_be
        self.example = example


EMPLOYEE = FieldFormat(
    r"^EMP\d{6}$", "invalid_employee_id_format", "must be EMP followed by 6 digits", "EMP048271"
)
PHONE = FieldFormat(r"^\d{4}$", "invalid_phone_format", "must be exactly 4 digits", "7294")
OTP = FieldFormat(r"^\d{6}$", "invalid_otp_format", "must be exactly 6 digits", "483920")
MANAGER_CODE = FieldFormat(
    r"^[A-Z0-9]{6}$",
    "invalid_auth_code_format",
    "must be 6 uppercase letters or digits",
    "K4M2P9",
)
TICKET = FieldFormat(
    r"^INC[a-f0-9]{12}$",
    "invalid_ticket_number_format",
    "must be INC followed by a 12-char content hash",
    "INCa7087cd64494",
)
ASSET = FieldFormat(
    r"^AST-[A-Z]{3}-\d{6}$",
    "invalid_asset_tag_format",
    "must be AST-XXX-NNNNNN (3 uppercase letters, 6 digits)",
    "AST-LPT-284719",
)
LICENSE_ASSIGNMENT = FieldFormat(
    r"^LASGN-\d{6}$",
    "invalid_license_assignment_id_format",
    "must be LASGN followed by a dash and 6 digits",
    "LASGN-048271",
)
FLOOR = FieldFormat(
    r"^FL\d{1,2}$", "invalid_floor_code_format", "must be FL plus 1-2 digits", "FL2"
)
ROOM = FieldFormat(
    r"^BLD\d{1,2}-FL\d{1,2}-RM\d{3}$",
    "invalid_room_code_format",
    "must be BLDn-FLn-RMnnn",
    "BLD3-FL2-RM204",
)
DESK = FieldFormat(
    r"^BLD\d{1,2}-FL\d{1,2}-D\d{3}$",
    "invalid_desk_code_format",
    "must be BLDn-FLn-Dnnn",
    "BLD3-FL2-D107",
)
PARKING_SPACE = FieldFormat(
    r"^PZ[A-Z]-\d{3}$",
    "invalid_parking_space_id_format",
    "must be PZ plus a zone letter, a dash and 3 digits",
    "PZA-042",
)
GROUP = FieldFormat(
    r"^GRP-[A-Z]{2,8}$",
    "invalid_group_code_format",
    "must be GRP- followed by 2-8 uppercase letters",
    "GRP-ENGCORE",
)
TEMPLATE = FieldFormat(
    r"^PTPL-[A-Z]{2,5}-\d{2}$",
    "invalid_permission_template_id_format",
    "must be PTPL-ROLE-NN",
    "PTPL-SWE-01",
)
REQUEST = FieldFormat(
    r"^REQ-[A-Z]{2,5}-[a-f0-9]{12}$",
    "invalid_request_id_format",
    "must be REQ-CAT-XXXXXXXXXXXX (CAT plus 12-char content hash)",
    "REQ-HW-6d94147c44a3",
)
CASE = FieldFormat(
    r"^CASE-[A-Z]{2,5}-[a-f0-9]{12}$",
    "invalid_case_id_format",
    "must be CASE-CAT-XXXXXXXXXXXX (CAT plus 12-char content hash)",
    "CASE-ACCT-6d94147c44a3",
)
SECURITY_CASE = FieldFormat(
    r"^SEC-[a-f0-9]{12}$",
    "invalid_security_case_id_format",
    "must be SEC-XXXXXXXXXXXX (12-char content hash)",
    "SEC-6d94147c44a3",
)
DIAGNOSTIC = FieldFormat(
    r"^DIAG-[A-Z0-9]{8}$",
    "invalid_diagnostic_ref_code_format",
    "must be DIAG followed by a dash and 8 alphanumeric characters",
    "DIAG-4KM29X7B",
)
APP_CATALOG = FieldFormat(
    r"^APP-\d{4}$", "invalid_catalog_id_format", "must be APP- followed by 4 digits", "APP-0042"
)
LICENSE_CATALOG = FieldFormat(
    r"^LIC-\d{4}$", "invalid_catalog_id_format", "must be LIC- followed by 4 digits", "LIC-0018"
)
DATE = FieldFormat(
    r"^\d{4}-\d{2}-\d{2}$", "invalid_date_format", "must be a date in YYYY-MM-DD", "2026-08-15"
)
TIME = FieldFormat(
    r"^([01]\d|2[0-3]):[0-5]\d$", "invalid_time_format", "must be 24-hour HH:MM", "09:00"
)
BUILDING = FieldFormat(
    None,
    "invalid_building_code",
    "must be a building code or name (1-60 characters)",
    "BLD3",
)
ZONE = FieldFormat(
    None,
    "invalid_zone_code",
    "must be a parking zone code or name (1-60 characters)",
    "PZA",
)
CAPACITY = FieldFormat(None, "invalid_capacity", "must be an integer from 1 to 50", "8")
DURATION = FieldFormat(None, "invalid_duration", "must be 30, 60 or 90 (days)", "30")

FIELD_FORMATS: dict[str, FieldFormat] = {
    "employee_id": EMPLOYEE,
    "manager_employee_id": EMPLOYEE,
    "new_hire_employee_id": EMPLOYEE,
    "departing_employee_id": EMPLOYEE,
    "approver_employee_id": EMPLOYEE,
    "escalate_to_employee_id": EMPLOYEE,
    "phone_last_four": PHONE,
    "new_phone_last_four": PHONE,
    "otp_code": OTP,
    "manager_auth_code": MANAGER_CODE,
    "ticket_number": TICKET,
    "asset_tag": ASSET,
    "current_asset_tag": ASSET,
    "license_assignment_id": LICENSE_ASSIGNMENT,
    "floor_code": FLOOR,
    "delivery_floor": FLOOR,
    "room_code": ROOM,
    "desk_code": DESK,
    "parking_space_id": PARKING_SPACE,
    "group_code": GROUP,
    "permission_template_id": TEMPLATE,
    "request_id": REQUEST,
    "case_id": CASE,
    "security_case_id": SECURITY_CASE,
    "diagnostic_ref_code": DIAGNOSTIC,
    "preferred_date": DATE,
    "date": DATE,
    "start_date": DATE,
    "effective_date": DATE,
    "review_date": DATE,
    "last_working_day": DATE,
    "start_time": TIME,
    "end_time": TIME,
    "building_code": BUILDING,
    "delivery_building": BUILDING,
    "zone_code": ZONE,
    "min_capacity": CAPACITY,
    "attendee_count": CAPACITY,
    "duration_days": DURATION,
}

# ITSM appends this guidance to errors that concern optional fields the LLM should omit.
FIELD_HINTS: dict[str, str] = {
    "floor_code": "Omit floor_code entirely to search all floors.",
    "duration_days": "Omit duration_days entirely for a permanent license.",
    "laptop_os": "Omit laptop_os entirely for monitor_bundle requests.",
    "laptop_size": "Omit laptop_size entirely for monitor_bundle requests.",
    "monitor_size": "Omit monitor_size entirely for laptop_replacement requests.",
    "current_asset_tag": "Omit current_asset_tag when the device is lost or stolen.",
}


def _matches(fmt: FieldFormat) -> AfterValidator:
    def check(value: str) -> str:
        if not fmt.regex.match(value):
            raise ValueError(f"does not match {fmt.regex.pattern}")
        return value

    return AfterValidator(check)


def _calendar_date(value: str) -> str:
    if not DATE.regex.match(value):
        raise ValueError("date must be YYYY-MM-DD")
    date.fromisoformat(value)  # rejects 2026-02-30 with a ValueError pydantic reports
    return value


def absent_to_none(value: Any) -> Any:
    if isinstance(value, str) and value.strip().lower() in ABSENT_STRINGS:
        return None
    return value


def _duration(value: Any) -> Any:
    value = absent_to_none(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return value


def _allowed_duration(value: int | None) -> int | None:
    if value is not None and value not in (30, 60, 90):
        raise ValueError("duration_days must be 30, 60 or 90")
    return value


EmployeeId = Annotated[str, _matches(EMPLOYEE)]
PhoneLastFour = Annotated[str, _matches(PHONE)]
OtpCode = Annotated[str, _matches(OTP)]
ManagerAuthCode = Annotated[str, _matches(MANAGER_CODE)]
TicketNumber = Annotated[str, _matches(TICKET)]
AssetTag = Annotated[str, _matches(ASSET)]
LicenseAssignmentId = Annotated[str, _matches(LICENSE_ASSIGNMENT)]
FloorCode = Annotated[str, _matches(FLOOR)]
RoomCode = Annotated[str, _matches(ROOM)]
DeskCode = Annotated[str, _matches(DESK)]
ParkingSpaceId = Annotated[str, _matches(PARKING_SPACE)]
GroupCode = Annotated[str, _matches(GROUP)]
TemplateId = Annotated[str, _matches(TEMPLATE)]
RequestId = Annotated[str, _matches(REQUEST)]
CaseId = Annotated[str, _matches(CASE)]
SecurityCaseId = Annotated[str, _matches(SECURITY_CASE)]
DiagnosticRef = Annotated[str, _matches(DIAGNOSTIC)]
AppCatalogId = Annotated[str, _matches(APP_CATALOG)]
LicenseCatalogId = Annotated[str, _matches(LICENSE_CATALOG)]
IsoDate = Annotated[str, AfterValidator(_calendar_date)]
ClockTime = Annotated[str, _matches(TIME)]
PlaceName = Annotated[str, Field(min_length=1, max_length=60)]
Capacity = Annotated[int, Field(gt=0, le=50)]
OptionalFloorCode = Annotated[FloorCode | None, BeforeValidator(absent_to_none)]
OptionalAssetTag = Annotated[AssetTag | None, BeforeValidator(absent_to_none)]
OptionalPlaceName = Annotated[PlaceName | None, BeforeValidator(absent_to_none)]
DurationDays = Annotated[int | None, BeforeValidator(_duration), AfterValidator(_allowed_duration)]


class ItsmParams(BaseModel):
    """Base of every ITSM parameter model: unknown extra keys are ignored, like the LLM's."""

    model_config = ConfigDict(extra="ignore", frozen=True)


def _error(error_type: str, message: str) -> dict[str, Any]:
    return {"status": "error", "error_type": error_type, "message": message}


def _with_hint(message: str, field: str | None) -> str:
    hint = FIELD_HINTS.get(field) if field else None
    return f"{message} {hint}" if hint else message


def _mapped_field_error(field: str, err: ErrorDetails, params: dict[str, Any]) -> dict[str, Any]:
    fmt = FIELD_FORMATS[field]
    value = params.get(field) if err["type"] == "missing" else err.get("input")
    message = f"Invalid {field} '{value}': {fmt.must_be} (e.g. {fmt.example})"
    return _error(fmt.error_type, _with_hint(message, field))


def validation_error_response(exc: ValidationError, params: dict[str, Any]) -> dict[str, Any]:
    """The reference's error response for a failed parameter validation (spec 2.3)."""
    errors = exc.errors(include_url=False)
    for err in errors:
        field = err["loc"][0] if err["loc"] else None
        if isinstance(field, str) and field in FIELD_FORMATS:
            return _mapped_field_error(field, err, params)
    first = errors[0]
    location = ".".join(str(part) for part in first["loc"]) or "params"
    message = f"Invalid parameter '{location}': {first['msg']}"
    hinted = next((f for f in FIELD_HINTS if f in message), None)
    return _error("invalid_parameter", _with_hint(message, hinted))
