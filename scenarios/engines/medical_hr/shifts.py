"""Shift tools: swaps, timesheet corrections and on-call registration."""

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
    medical_tool,
    owned_shift,
    snapshot,
    success,
    today,
)
from scenarios.engines.medical_hr.params import (
    ColleagueCertParams,
    OncallParams,
    OncallRegistrationParams,
    PayrollCorrectionParams,
    ShiftParams,
    ShiftSwapParams,
)

CORRECTABLE_STATUSES = ("logged", "approved")


def unit_requirements(db: Db, unit_code: str) -> list[str] | None:
    required = (db.get("unit_cert_requirements") or {}).get(unit_code)
    return list(required) if isinstance(required, list) else None


def missing_certifications(employee: dict[str, Any], required: list[str]) -> list[str]:
    held = set(employee.get("certifications") or [])
    return sorted(set(required) - held)


def _unit_not_found(unit_code: str) -> Response:
    return error("unit_not_found", f"Unit {unit_code} has no certification requirements on file")


@medical_tool("get_shift_record", ShiftParams, Gate.EMPLOYEE)
def get_shift_record(p: ShiftParams, db: Db, call_index: int) -> Response:
    shift, failed = owned_shift(db, p.employee_id, p.shift_id)
    if failed is not None:
        return failed
    return success(shift=snapshot(shift))


def swap_blocker(shift: dict[str, Any], current_date: str) -> Response | None:
    """Why a shift cannot be swapped, checked in the reference's order."""
    if shift.get("status") == "swapped":
        return error("shift_already_swapped", "Shift has already been swapped")
    if shift.get("status") == "cancelled":
        return error("shift_cancelled", "Shift has been cancelled and cannot be swapped")
    if str(shift.get("date") or "") < current_date:
        return error("shift_in_past", "Shift date has already passed")
    if shift.get("swap_locked"):
        return error("swap_locked", "Shift is within the 24-hour swap lockout window")
    return None


@medical_tool("check_swap_eligibility", ShiftParams, Gate.EMPLOYEE)
def check_swap_eligibility(p: ShiftParams, db: Db, call_index: int) -> Response:
    shift, failed = owned_shift(db, p.employee_id, p.shift_id)
    if failed is not None:
        return failed
    assert shift is not None
    blocked = swap_blocker(shift, today(db))
    if blocked is not None:
        return blocked
    unit = shift.get("unit_code")
    return success(
        eligible=True,
        shift_date=shift.get("date"),
        unit_code=unit,
        required_cert_codes=sorted(unit_requirements(db, str(unit)) or []),
        message="Shift is eligible for swap",
    )


@medical_tool("verify_colleague_certifications", ColleagueCertParams, Gate.EMPLOYEE)
def verify_colleague_certifications(p: ColleagueCertParams, db: Db, call_index: int) -> Response:
    colleague = find_employee(db, p.colleague_employee_id)
    if colleague is None:
        return employee_not_found(p.colleague_employee_id)
    required = unit_requirements(db, p.unit_code)
    if required is None:
        return _unit_not_found(p.unit_code)
    missing = missing_certifications(colleague, required)
    if missing:
        return error(
            "certification_missing",
            f"Colleague {p.colleague_employee_id} is missing: {missing}",
            missing_certs=missing,
        )
    return success(
        colleague_employee_id=p.colleague_employee_id,
        unit_code=p.unit_code,
        certifications_verified=sorted(required),
        message="All required certifications verified",
    )


@medical_tool("confirm_shift_swap", ShiftSwapParams, Gate.EMPLOYEE)
def confirm_shift_swap(p: ShiftSwapParams, db: Db, call_index: int) -> Response:
    # Certifications are deliberately not re-checked here (spec 12.10).
    shift, failed = owned_shift(db, p.employee_id, p.shift_id)
    if failed is not None:
        return failed
    assert shift is not None
    new_case = case_id("SWP", p.employee_id)
    shift.update(
        status="swapped",
        swapped_to_employee_id=p.colleague_employee_id,
        swap_confirmation_id=new_case,
    )
    return success(
        shift_id=p.shift_id,
        original_employee_id=p.employee_id,
        new_employee_id=p.colleague_employee_id,
        unit_code=p.unit_code,
        case_id=new_case,
        message=f"Shift swap confirmed. Case ID: {new_case}",
    )


@medical_tool("get_timesheet_record", ShiftParams, Gate.EMPLOYEE)
def get_timesheet_record(p: ShiftParams, db: Db, call_index: int) -> Response:
    shift, failed = owned_shift(db, p.employee_id, p.shift_id)
    if failed is not None:
        return failed
    return success(shift=snapshot(shift))


def _pay_period_closed() -> Response:
    return error(
        "pay_period_closed", "The pay period for this shift is closed and cannot be corrected"
    )


def correction_blocker(shift: dict[str, Any], current_date: str) -> Response | None:
    """Why a payroll correction cannot be filed, checked in the reference's order."""
    if shift.get("correction_status") == "pending":
        return error(
            "correction_already_pending", "A payroll correction is already pending for this shift"
        )
    period_end = shift.get("pay_period_end_date")
    if shift.get("pay_period_closed") or (period_end and str(period_end) < current_date):
        return _pay_period_closed()
    if shift.get("status") not in CORRECTABLE_STATUSES:
        return error("shift_not_logged", "Shift has not been logged yet and cannot be corrected")
    return None


@medical_tool("check_correction_eligibility", ShiftParams, Gate.EMPLOYEE)
def check_correction_eligibility(p: ShiftParams, db: Db, call_index: int) -> Response:
    shift, failed = owned_shift(db, p.employee_id, p.shift_id)
    if failed is not None:
        return failed
    assert shift is not None
    blocked = correction_blocker(shift, today(db))
    if blocked is not None:
        return blocked
    return success(
        eligible=True,
        shift_id=p.shift_id,
        logged_hours=shift.get("hours_logged"),
        message="Shift is eligible for payroll correction",
    )


@medical_tool("submit_payroll_correction", PayrollCorrectionParams, Gate.EMPLOYEE)
def submit_payroll_correction(p: PayrollCorrectionParams, db: Db, call_index: int) -> Response:
    shift, failed = owned_shift(db, p.employee_id, p.shift_id)
    if failed is not None:
        return failed
    assert shift is not None
    period_end = shift.get("pay_period_end_date")
    if not period_end:
        return error("pay_period_not_set", "This shift has no pay period end date on file")
    if str(period_end) < today(db):
        return _pay_period_closed()
    new_case = case_id("PAY", p.employee_id)
    shift.update(
        corrected_hours=p.corrected_hours,
        correction_type=p.correction_type,
        correction_case_id=new_case,
        correction_status="pending",
    )
    return success(
        employee_id=p.employee_id,
        shift_id=p.shift_id,
        correction_type=p.correction_type,
        corrected_hours=p.corrected_hours,
        pay_period_end_date=period_end,
        case_id=new_case,
        message=f"Payroll correction submitted. Case ID: {new_case}",
    )


@medical_tool("get_oncall_schedule", OncallParams, Gate.EMPLOYEE)
def get_oncall_schedule(p: OncallParams, db: Db, call_index: int) -> Response:
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    schedule = employee.get("oncall_schedule") or {"registrations": []}
    return success(
        employee_id=p.employee_id, unit_code=p.unit_code, oncall_schedule=snapshot(schedule)
    )


@medical_tool("check_oncall_eligibility", OncallParams, Gate.EMPLOYEE)
def check_oncall_eligibility(p: OncallParams, db: Db, call_index: int) -> Response:
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    if employee.get("employment_status") == "on_leave":
        return error(
            "employee_on_leave", "Employee is on leave and cannot register for on-call shifts"
        )
    required = unit_requirements(db, p.unit_code)
    if required is None:
        return _unit_not_found(p.unit_code)
    missing = missing_certifications(employee, required)
    if missing:
        return error(
            "certification_missing",
            f"Missing certifications for unit {p.unit_code}: {missing}",
            missing_certs=missing,
        )
    return success(
        eligible=True,
        employee_id=p.employee_id,
        unit_code=p.unit_code,
        message="Employee is eligible to register for on-call on this unit",
    )


@medical_tool("register_oncall_availability", OncallRegistrationParams, Gate.EMPLOYEE)
def register_oncall_availability(p: OncallRegistrationParams, db: Db, call_index: int) -> Response:
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    start, end = p.availability_start_date, p.availability_end_date
    if start > end:
        return error("invalid_date_range", f"Availability start {start} is after end {end}")
    outside = [day for day in p.blackout_dates if not start <= day <= end]
    if outside:
        return error(
            "blackout_outside_window",
            f"Blackout dates {outside} fall outside the availability window {start} to {end}",
            invalid_blackout_dates=outside,
        )
    registration_id = case_id("ONC", p.employee_id)
    schedule = employee.get("oncall_schedule")
    if not isinstance(schedule, dict):
        schedule = employee["oncall_schedule"] = {}
    schedule.setdefault("registrations", []).append(
        {
            "registration_id": registration_id,
            "unit_code": p.unit_code,
            "availability_start_date": start,
            "availability_end_date": end,
            "oncall_tier": p.oncall_tier,
            "blackout_dates": list(p.blackout_dates),
            "status": "registered",
        }
    )
    return success(
        employee_id=p.employee_id,
        unit_code=p.unit_code,
        availability_start_date=start,
        availability_end_date=end,
        oncall_tier=p.oncall_tier,
        blackout_dates=list(p.blackout_dates),
        registration_id=registration_id,
        message=f"On-call availability registered. Registration ID: {registration_id}",
    )
