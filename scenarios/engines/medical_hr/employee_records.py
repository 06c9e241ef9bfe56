"""Employee record tools: profile, onboarding, FMLA leave, I-9, visa dependents."""

from __future__ import annotations

from typing import Any

from scenarios.engines.medical_hr.common import (
    Db,
    Gate,
    Response,
    add_notification,
    case_id,
    employee_not_found,
    error,
    find_employee,
    medical_tool,
    snapshot,
    success,
)
from scenarios.engines.medical_hr.params import (
    DepartmentManagerNotifyParams,
    EmployeeParams,
    FmlaCaseParams,
    HrComplianceNotifyParams,
    I9SubmitParams,
    ImmigrationNotifyParams,
    OnboardingTaskParams,
    VisaDependentParams,
    VisaParams,
)

RECORD_FIELDS = (
    "employee_id",
    "first_name",
    "last_name",
    "department_code",
    "role_code",
    "unit_code",
    "hire_date",
    "employment_status",
)
I9_FIELDS = (
    "verification_action",
    "document_list_type",
    "document_type_code",
    "document_number",
    "document_expiration_date",
    "issuing_country_code",
)


@medical_tool("get_employee_record", EmployeeParams, Gate.EMPLOYEE_OR_OTP)
def get_employee_record(p: EmployeeParams, db: Db, call_index: int) -> Response:
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    return success(employee={field: snapshot(employee.get(field)) for field in RECORD_FIELDS})


@medical_tool("notify_department_manager", DepartmentManagerNotifyParams, Gate.EMPLOYEE_OR_OTP)
def notify_department_manager(
    p: DepartmentManagerNotifyParams, db: Db, call_index: int
) -> Response:
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    add_notification(
        db,
        {
            "recipient": "department_manager",
            "employee_id": p.employee_id,
            "department_code": employee.get("department_code"),
            "case_id": p.case_id,
            "notification_type": p.notification_type,
        },
    )
    return success(
        employee_id=p.employee_id,
        case_id=p.case_id,
        notification_type=p.notification_type,
        message=f"Department manager notified: {p.notification_type}",
    )


def _checklist_tasks(employee: dict[str, Any]) -> dict[str, Any] | None:
    checklist = employee.get("onboarding_checklist")
    if not checklist or not isinstance(checklist, dict):
        return None
    tasks = checklist.get("tasks")
    return tasks if isinstance(tasks, dict) else {}


def _no_checklist(employee_id: str) -> Response:
    return error("checklist_not_found", f"No onboarding checklist found for {employee_id}")


@medical_tool("get_onboarding_checklist", EmployeeParams, Gate.EMPLOYEE_OR_OTP)
def get_onboarding_checklist(p: EmployeeParams, db: Db, call_index: int) -> Response:
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    if _checklist_tasks(employee) is None:
        return _no_checklist(p.employee_id)
    return success(onboarding_checklist=snapshot(employee["onboarding_checklist"]))


@medical_tool("complete_onboarding_task", OnboardingTaskParams, Gate.EMPLOYEE_OR_OTP)
def complete_onboarding_task(p: OnboardingTaskParams, db: Db, call_index: int) -> Response:
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    tasks = _checklist_tasks(employee)
    if tasks is None:
        return _no_checklist(p.employee_id)
    task = tasks.get(p.task_code)
    if not isinstance(task, dict):
        return error("task_not_found", f"Task {p.task_code} is not on the onboarding checklist")
    if task.get("status") == "complete":
        return error("task_already_complete", f"Task {p.task_code} is already complete")
    if str(task.get("completion_code") or "").upper() != p.completion_code.upper():
        return error(
            "invalid_completion_code", f"Completion code for task {p.task_code} does not match"
        )
    task["status"] = "complete"
    remaining = [
        code
        for code, item in tasks.items()
        if isinstance(item, dict) and item.get("status") != "complete"
    ]
    return success(
        employee_id=p.employee_id,
        task_code=p.task_code,
        remaining_tasks=remaining,
        message=f"Task {p.task_code} marked complete. {len(remaining)} task(s) remaining.",
    )


@medical_tool("check_leave_eligibility", EmployeeParams, Gate.OTP)
def check_leave_eligibility(p: EmployeeParams, db: Db, call_index: int) -> Response:
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    fmla = employee.get("fmla_eligibility") or {}
    if not fmla.get("eligible"):
        return error(
            "not_eligible",
            fmla.get("reason") or "Employee is not eligible for FMLA leave",
            months_employed=fmla.get("months_employed"),
            hours_worked_past_year=fmla.get("hours_worked_past_year"),
        )
    return success(
        eligible=True,
        months_employed=fmla.get("months_employed"),
        hours_worked_past_year=fmla.get("hours_worked_past_year"),
        fmla_weeks_remaining=fmla.get("fmla_weeks_remaining"),
        message="Employee is eligible for FMLA leave",
    )


@medical_tool("submit_fmla_case", FmlaCaseParams, Gate.OTP)
def submit_fmla_case(p: FmlaCaseParams, db: Db, call_index: int) -> Response:
    # Eligibility and balance are deliberately not re-checked here (spec 12.10).
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    new_case = case_id("FMLA", p.employee_id)
    records = employee.get("leave_records")
    if not isinstance(records, list):
        records = employee["leave_records"] = []
    records.append(
        {
            "case_id": new_case,
            "leave_category": p.leave_category,
            "leave_start_date": p.leave_start_date,
            "leave_end_date": p.leave_end_date,
            "status": "open",
        }
    )
    return success(
        employee_id=p.employee_id,
        leave_category=p.leave_category,
        leave_start_date=p.leave_start_date,
        leave_end_date=p.leave_end_date,
        case_id=new_case,
        message=f"FMLA case opened. Case ID: {new_case}",
    )


@medical_tool("get_i9_record", EmployeeParams, Gate.EMPLOYEE)
def get_i9_record(p: EmployeeParams, db: Db, call_index: int) -> Response:
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    record = employee.get("i9_record")
    if not isinstance(record, dict):
        return error("i9_record_not_found", f"No I-9 record found for {p.employee_id}")
    return success(i9_record=snapshot(record))


@medical_tool("submit_i9_verification", I9SubmitParams, Gate.EMPLOYEE)
def submit_i9_verification(p: I9SubmitParams, db: Db, call_index: int) -> Response:
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    record = employee.get("i9_record")
    if not isinstance(record, dict):
        record = employee["i9_record"] = {}
    new_case = case_id("I9V", p.employee_id)
    submitted = {field: getattr(p, field) for field in I9_FIELDS}
    record.update(submitted, verification_status="verified", case_id=new_case)
    return success(
        employee_id=p.employee_id,
        **submitted,
        case_id=new_case,
        message=f"I-9 {p.verification_action} completed. Case ID: {new_case}",
    )


@medical_tool("notify_hr_compliance", HrComplianceNotifyParams, Gate.EMPLOYEE)
def notify_hr_compliance(p: HrComplianceNotifyParams, db: Db, call_index: int) -> Response:
    add_notification(
        db,
        {
            "recipient": "hr_compliance",
            "employee_id": p.employee_id,
            "case_id": p.case_id,
            "notification_type": p.notification_type,
        },
    )
    return success(
        employee_id=p.employee_id,
        case_id=p.case_id,
        notification_type=p.notification_type,
        message=f"HR compliance notified: {p.notification_type}",
    )


def _find_visa(
    db: Db, employee_id: str, petition_number: str
) -> tuple[dict[str, Any], None] | tuple[None, Response]:
    employee = find_employee(db, employee_id)
    if employee is None:
        return None, employee_not_found(employee_id)
    record = employee.get("visa_record")
    if not isinstance(record, dict) or record.get("petition_number") != petition_number:
        return None, error(
            "visa_record_not_found", f"Visa petition {petition_number} not found for {employee_id}"
        )
    return record, None


@medical_tool("get_visa_record", VisaParams, Gate.OTP)
def get_visa_record(p: VisaParams, db: Db, call_index: int) -> Response:
    record, failed = _find_visa(db, p.employee_id, p.visa_petition_number)
    if failed is not None:
        return failed
    return success(visa_record=snapshot(record))


@medical_tool("add_visa_dependent", VisaDependentParams, Gate.OTP)
def add_visa_dependent(p: VisaDependentParams, db: Db, call_index: int) -> Response:
    record, failed = _find_visa(db, p.employee_id, p.visa_petition_number)
    if failed is not None:
        return failed
    assert record is not None
    amendment_id = case_id("VISA", p.employee_id)
    dependents = record.get("dependents")
    if not isinstance(dependents, list):
        dependents = record["dependents"] = []
    dependents.append(
        {
            "first_name": p.dependent_first_name,
            "last_name": p.dependent_last_name,
            "relationship": p.relationship,
            "date_of_birth": p.dependent_date_of_birth,
            "country_of_birth": p.dependent_country_of_birth,
            "uscis_receipt_number": p.uscis_receipt_number,
            "amendment_id": amendment_id,
            "status": "pending",
        }
    )
    record["amendment_id"] = amendment_id
    return success(
        employee_id=p.employee_id,
        visa_petition_number=p.visa_petition_number,
        dependent_name=f"{p.dependent_first_name} {p.dependent_last_name}",
        relationship=p.relationship,
        dependent_date_of_birth=p.dependent_date_of_birth,
        dependent_country_of_birth=p.dependent_country_of_birth,
        uscis_receipt_number=p.uscis_receipt_number,
        amendment_id=amendment_id,
        message=(
            f"Dependent added to petition {p.visa_petition_number}. Amendment ID: {amendment_id}"
        ),
    )


@medical_tool("notify_immigration_counsel", ImmigrationNotifyParams, Gate.OTP)
def notify_immigration_counsel(p: ImmigrationNotifyParams, db: Db, call_index: int) -> Response:
    add_notification(
        db,
        {
            "recipient": "immigration_counsel",
            "employee_id": p.employee_id,
            "visa_petition_number": p.visa_petition_number,
            "notification_type": p.notification_type,
        },
    )
    return success(
        employee_id=p.employee_id,
        visa_petition_number=p.visa_petition_number,
        notification_type=p.notification_type,
        message=f"Immigration counsel notified: {p.notification_type}",
    )
