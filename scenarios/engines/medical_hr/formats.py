"""Parameter formats of the medical_hr tools: constrained strings, enums, amounts.

Each constrained type carries a description ("must be ...") and an example that the
validation error message quotes, so an agent can correct its call. Digit classes are
spelled ``[0-9]`` because ``\\d`` would also accept non-ASCII digits.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    StringConstraints,
)


def _calendar_date(value: str) -> str:
    # The pattern only checks the shape; 2026-02-30 must fail too.
    dt.date.fromisoformat(value)
    return value


def _calendar_datetime(value: str) -> str:
    dt.datetime.strptime(value, "%Y-%m-%d %H:%M")
    return value


def _pattern(regex: str, description: str, example: str) -> object:
    """Field metadata for a string that must match ``regex`` (ASCII digits only)."""
    return Field(description=description, examples=[example], pattern=regex)


EmployeeId = Annotated[str, _pattern(r"^EMP[0-9]{6}$", "EMP followed by 6 digits", "EMP048271")]
Npi = Annotated[str, _pattern(r"^[0-9]{10}$", "10 digits, no letters", "1487392045")]
FacilityCode = Annotated[
    str,
    _pattern(
        r"^[A-Z]{2,4}-[0-9]{2}[A-Z]$",
        "2-4 uppercase letters, dash, 2 digits, 1 uppercase letter",
        "MGH-04B",
    ),
]
Pin = Annotated[str, _pattern(r"^[0-9]{4}$", "4 digits", "7291")]
OtpCode = Annotated[str, _pattern(r"^[0-9]{6}$", "6 digits", "483920")]
IsoDate = Annotated[
    str,
    StringConstraints(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"),
    AfterValidator(_calendar_date),
    Field(description="a date in YYYY-MM-DD format", examples=["2026-05-01"]),
]
AppointmentDatetime = Annotated[
    str,
    StringConstraints(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}$"),
    AfterValidator(_calendar_datetime),
    Field(description="a date and time in YYYY-MM-DD HH:MM format", examples=["2026-05-05 09:00"]),
]
DeaNumber = Annotated[
    str, _pattern(r"^[A-Z]{2}[0-9]{7}$", "2 uppercase letters followed by 7 digits", "BK4729183")
]
StateLicenseNumber = Annotated[
    str,
    _pattern(
        r"^[A-Z]{2}-[A-Z]{2,4}-[0-9]{6,8}$",
        "2-letter state code, dash, 2-4 letter license type, dash, 6-8 digits",
        "MA-RN-004821",
    ),
]
ShiftId = Annotated[
    str,
    _pattern(r"^SHF-[0-9]{8}-[0-9]{4}$", "SHF-YYYYMMDD-HHMM", "SHF-20260501-0700"),
]
CaseId = Annotated[
    str,
    _pattern(r"^CASE-[A-Z0-9]{2,6}-[0-9]{6}$", "CASE-PREFIX-6digits", "CASE-LIC-048271"),
]
CompletionCode = Annotated[str, _pattern(r"^[A-Za-z0-9]{4}$", "4 alphanumeric characters", "AB12")]
ClearanceCode = Annotated[
    str,
    _pattern(
        r"^CLR-[A-Z]{2,4}-[0-9]{6}$",
        "CLR, dash, 2-4 uppercase letters, dash, 6 digits",
        "CLR-OCC-048271",
    ),
]
StateCode = Annotated[str, _pattern(r"^[A-Z]{2}$", "a 2-letter US state abbreviation", "CA")]
UnitCode = Annotated[
    str,
    _pattern(
        r"^[A-Z0-9]{1,6}-[A-Z0-9]{1,8}$", "a unit code such as digits+letter-letters", "4B-ICU"
    ),
]
PolicyNumber = Annotated[
    str,
    _pattern(r"^POL-[0-9]{4}-[A-Z0-9]{6}$", "POL-YYYY-XXXXXX", "POL-2025-BK4420"),
]
PrivilegeCode = Annotated[
    str, _pattern(r"^PRV-[A-Z]{2,10}-[0-9]{3}$", "PRV-CATEGORY-3digits", "PRV-CARD-001")
]
DocumentNumber = Annotated[
    str, _pattern(r"^[A-Z0-9]{6,12}$", "6-12 uppercase alphanumeric characters", "A12345678")
]
CountryCode = Annotated[str, _pattern(r"^[A-Z]{2}$", "a 2-letter ISO country code", "US")]
PetitionNumber = Annotated[
    str,
    _pattern(r"^[A-Z]{3}[0-9]{10}$", "3 uppercase letters followed by 10 digits", "WAC2512045678"),
]
PersonName = Annotated[
    str,
    _pattern(r"^[A-Za-z-]{2,30}$", "2-30 characters, letters and hyphens only", "Jean-Luc"),
]
UsdLimit = Annotated[
    int, Field(gt=0, description="a positive whole USD amount", examples=[1000000])
]

Department = Literal[
    "CARDIOLOGY",
    "EMERGENCY",
    "ONCOLOGY",
    "SURGERY",
    "NEUROLOGY",
    "PEDIATRICS",
    "RADIOLOGY",
    "PATHOLOGY",
    "ORTHOPEDICS",
    "OBSTETRICS",
]
AppointmentType = Literal["orientation_followup", "return_to_work_checkin", "competency_review"]
