"""Appointment tools: availability lookup and the three booking flows.

Slots live in ``appointment_availability[type][department][date]`` as ``HH:MM`` lists;
booking removes the chosen slot, so a slot can be booked once.
"""

from __future__ import annotations

from typing import Any

from scenarios.engines.medical_hr.common import (
    Db,
    Gate,
    Response,
    case_id,
    employee_not_found,
    error,
    find_employee,
    find_provider,
    medical_tool,
    provider_case_id,
    provider_not_found,
    success,
)
from scenarios.engines.medical_hr.params import (
    AvailabilityParams,
    CompetencyReviewParams,
    OrientationParams,
    ReturnToWorkParams,
)

MAX_ALTERNATIVE_DATES = 3


def _department_slots(db: Db, appointment_type: str, department: str) -> dict[str, Any]:
    by_type = (db.get("appointment_availability") or {}).get(appointment_type) or {}
    slots = by_type.get(department) or {}
    return slots if isinstance(slots, dict) else {}


def book_slot(
    db: Db, appointment_type: str, department: str, appointment_datetime: str
) -> Response | None:
    """Remove the slot from availability; ``None`` on success, else the error response."""
    day, time = appointment_datetime.split(" ")
    slots = _department_slots(db, appointment_type, department).get(day)
    if not isinstance(slots, list) or time not in slots:
        return error(
            "slot_not_available",
            f"No {appointment_type} slot available at {appointment_datetime} for {department}",
        )
    slots.remove(time)
    return None


def _appointments(record: dict[str, Any]) -> list[dict[str, Any]]:
    appointments = record.get("scheduled_appointments")
    if not isinstance(appointments, list):
        appointments = record["scheduled_appointments"] = []
    return appointments


@medical_tool("check_appointment_availability", AvailabilityParams, Gate.EMPLOYEE_OR_OTP)
def check_appointment_availability(p: AvailabilityParams, db: Db, call_index: int) -> Response:
    by_date = _department_slots(db, p.appointment_type, p.department_code)
    slots = by_date.get(p.preferred_date)
    if isinstance(slots, list) and slots:
        return success(
            date=p.preferred_date,
            available_slots=list(slots),
            message=f"{len(slots)} slot(s) available on {p.preferred_date}",
        )
    later = sorted(day for day, times in by_date.items() if day > p.preferred_date and times)
    alternatives = later[:MAX_ALTERNATIVE_DATES]
    if alternatives:
        message = (
            f"No slots available on {p.preferred_date}. "
            f"Alternative dates with openings: {', '.join(alternatives)}"
        )
    else:
        message = f"No slots available on {p.preferred_date} and no later dates with openings"
    return success(
        date=p.preferred_date,
        available_slots=[],
        alternative_dates=alternatives,
        message=message,
    )


@medical_tool("schedule_orientation_followup", OrientationParams, Gate.EMPLOYEE_OR_OTP)
def schedule_orientation_followup(p: OrientationParams, db: Db, call_index: int) -> Response:
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    failed = book_slot(db, "orientation_followup", p.department_code, p.appointment_datetime)
    if failed is not None:
        return failed
    appointment_id = case_id("ORI", p.employee_id)
    _appointments(employee).append(
        {
            "appointment_id": appointment_id,
            "type": "orientation_followup",
            "department_code": p.department_code,
            "appointment_datetime": p.appointment_datetime,
            "status": "scheduled",
        }
    )
    return success(
        employee_id=p.employee_id,
        department_code=p.department_code,
        appointment_datetime=p.appointment_datetime,
        appointment_id=appointment_id,
        message=(
            f"Orientation follow-up scheduled for {p.appointment_datetime}. "
            f"Appointment ID: {appointment_id}"
        ),
    )


def _leave_end_of_case(employee: dict[str, Any], fmla_case_id: str) -> str | None:
    for record in employee.get("leave_records") or []:
        if isinstance(record, dict) and record.get("case_id") == fmla_case_id:
            return record.get("leave_end_date") or record.get("end_date")
    return None


@medical_tool("schedule_return_to_work_checkin", ReturnToWorkParams, Gate.OTP)
def schedule_return_to_work_checkin(p: ReturnToWorkParams, db: Db, call_index: int) -> Response:
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    # An unknown case id is not an error: the leave-end rule only applies when it exists.
    leave_end = _leave_end_of_case(employee, p.case_id)
    day = p.appointment_datetime.split(" ")[0]
    if leave_end and day < leave_end:
        return error(
            "appointment_before_leave_end",
            f"Return-to-work check-in on {day} is before the leave end date {leave_end}",
        )
    failed = book_slot(db, "return_to_work_checkin", p.department_code, p.appointment_datetime)
    if failed is not None:
        return failed
    appointment_id = case_id("RTW", p.employee_id)
    _appointments(employee).append(
        {
            "appointment_id": appointment_id,
            "type": "return_to_work_checkin",
            "fmla_case_id": p.case_id,
            "appointment_datetime": p.appointment_datetime,
            "status": "scheduled",
        }
    )
    return success(
        employee_id=p.employee_id,
        case_id=p.case_id,
        appointment_datetime=p.appointment_datetime,
        appointment_id=appointment_id,
        message=(
            f"Return-to-work check-in scheduled for {p.appointment_datetime}. "
            f"Appointment ID: {appointment_id}"
        ),
    )


@medical_tool("schedule_competency_review", CompetencyReviewParams, Gate.OTP)
def schedule_competency_review(p: CompetencyReviewParams, db: Db, call_index: int) -> Response:
    provider = find_provider(db, p.npi)
    if provider is None:
        return provider_not_found(p.npi)
    failed = book_slot(db, "competency_review", p.department_code, p.appointment_datetime)
    if failed is not None:
        return failed
    appointment_id = provider_case_id("CMP", provider)
    _appointments(provider).append(
        {
            "appointment_id": appointment_id,
            "type": "competency_review",
            "department_code": p.department_code,
            "appointment_datetime": p.appointment_datetime,
            "status": "scheduled",
        }
    )
    return success(
        npi=p.npi,
        department_code=p.department_code,
        appointment_datetime=p.appointment_datetime,
        appointment_id=appointment_id,
        message=(
            f"Competency review scheduled for {p.appointment_datetime}. "
            f"Appointment ID: {appointment_id}"
        ),
    )
