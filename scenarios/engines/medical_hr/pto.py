"""PTO tools: balances, eligibility and requests.

Which days count depends on the employee's ``schedule_type`` (default ``standard``):
standard = weekdays in the range minus ``org_holidays``; shift = distinct dates of the
employee's shifts in the range.
"""

from __future__ import annotations

import datetime as dt
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
    snapshot,
    success,
)
from scenarios.engines.medical_hr.params import EmployeeParams, PtoParams

BLOCKING_REQUEST_STATUSES = ("pending", "approved")


def schedule_type_of(employee: dict[str, Any]) -> str:
    return str(employee.get("schedule_type") or "standard")


def pto_working_days(db: Db, employee: dict[str, Any], start: str, end: str) -> list[str]:
    """The dates in ``[start, end]`` that consume PTO for this employee, sorted."""
    if schedule_type_of(employee) == "shift":
        return sorted(
            {
                str(shift.get("date"))
                for shift in (db.get("shifts") or {}).values()
                if isinstance(shift, dict)
                and shift.get("employee_id") == employee.get("employee_id")
                and start <= str(shift.get("date")) <= end
            }
        )
    holidays = set(db.get("org_holidays") or [])
    day, last = dt.date.fromisoformat(start), dt.date.fromisoformat(end)
    days: list[str] = []
    while day <= last:
        if day.weekday() < 5 and day.isoformat() not in holidays:
            days.append(day.isoformat())
        day += dt.timedelta(days=1)
    return days


def _insufficient(pto_type: str, required: float, balance: Any) -> Response:
    return error(
        "insufficient_pto_balance",
        f"Insufficient {pto_type} balance: {required} days required but only {balance} available",
        pto_days_required=required,
        current_balance=balance,
    )


def _balance(employee: dict[str, Any], pto_type: str) -> Any:
    return (employee.get("pto_balances") or {}).get(pto_type, 0.0)


def _calendar_conflicts(
    db: Db, employee: dict[str, Any], p: PtoParams, days: list[str]
) -> Response | None:
    blackouts = set(
        (db.get("department_blackout_dates") or {}).get(employee.get("department_code")) or []
    )
    conflicts = [day for day in days if day in blackouts]
    if conflicts:
        return error(
            "blackout_date_conflict",
            f"Requested dates fall on department blackout dates: {conflicts}",
            blackout_dates=conflicts,
        )
    for request in employee.get("pto_requests") or []:
        if (
            isinstance(request, dict)
            and request.get("status") in BLOCKING_REQUEST_STATUSES
            and str(request.get("start_date")) <= p.end_date
            and str(request.get("end_date")) >= p.start_date
        ):
            return error(
                "pto_overlap",
                f"Requested dates overlap existing PTO request {request.get('case_id')}",
                overlapping_case_id=request.get("case_id"),
            )
    return None


@medical_tool("get_pto_balance", EmployeeParams, Gate.EMPLOYEE)
def get_pto_balance(p: EmployeeParams, db: Db, call_index: int) -> Response:
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    schedule = schedule_type_of(employee)
    return success(
        employee_id=p.employee_id,
        pto_balances=snapshot(employee.get("pto_balances") or {}),
        schedule_type=schedule,
        message=f"PTO balances retrieved. Schedule type: {schedule}",
    )


@medical_tool("check_pto_eligibility", PtoParams, Gate.EMPLOYEE)
def check_pto_eligibility(p: PtoParams, db: Db, call_index: int) -> Response:
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    if p.start_date > p.end_date:
        return error(
            "invalid_date_range", f"Start date {p.start_date} is after end date {p.end_date}"
        )
    days = pto_working_days(db, employee, p.start_date, p.end_date)
    required = float(len(days))
    balance = _balance(employee, p.pto_type)
    if required > balance:
        return _insufficient(p.pto_type, required, balance)
    conflict = _calendar_conflicts(db, employee, p, days)
    if conflict is not None:
        return conflict
    remaining = balance - required
    return success(
        eligible=True,
        employee_id=p.employee_id,
        pto_type=p.pto_type,
        schedule_type=schedule_type_of(employee),
        working_days_in_range=days,
        pto_days_required=required,
        current_balance=balance,
        remaining_after=remaining,
        message=f"Eligible. {required} {p.pto_type} day(s) required, {remaining} remaining after.",
    )


@medical_tool("submit_pto_request", PtoParams, Gate.EMPLOYEE)
def submit_pto_request(p: PtoParams, db: Db, call_index: int) -> Response:
    # Only the balance is re-checked at submit time (spec 12.10), not blackouts or overlap.
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    days = pto_working_days(db, employee, p.start_date, p.end_date)
    required = float(len(days))
    balance = _balance(employee, p.pto_type)
    if required > balance:
        return _insufficient(p.pto_type, required, balance)
    remaining = balance - required
    balances = employee.get("pto_balances")
    if not isinstance(balances, dict):
        balances = employee["pto_balances"] = {}
    balances[p.pto_type] = remaining
    new_case = case_id("PTO", p.employee_id)
    requests = employee.get("pto_requests")
    if not isinstance(requests, list):
        requests = employee["pto_requests"] = []
    requests.append(
        {
            "case_id": new_case,
            "pto_type": p.pto_type,
            "start_date": p.start_date,
            "end_date": p.end_date,
            "pto_days_deducted": required,
            "working_days": days,
            "status": "pending",
        }
    )
    return success(
        employee_id=p.employee_id,
        pto_type=p.pto_type,
        start_date=p.start_date,
        end_date=p.end_date,
        working_days=list(days),
        pto_days_deducted=required,
        remaining_balance=remaining,
        case_id=new_case,
        message=f"PTO request submitted. {required} {p.pto_type} day(s) deducted. Case ID: {new_case}",
    )
