"""Role-change tools (spec 2.6): HR approval check, templates, permission change, 90-day review."""

from __future__ import annotations

import copy
from datetime import timedelta

from pydantic import Field

from scenarios.engines.itsm.common import (
    OTP,
    Json,
    content_hash,
    error,
    find_employee,
    is_error,
    itsm_tool,
    parse_date,
    sub_table,
    success,
    today,
)
from scenarios.engines.itsm.fields import CaseId, EmployeeId, IsoDate, ItsmParams, TemplateId

REVIEW_AFTER_DAYS = 90
REVIEW_TOLERANCE_DAYS = 3


class RoleChangeParams(ItsmParams):
    employee_id: EmployeeId = Field(description="Employee changing role")
    new_role_code: str = Field(min_length=1, description="Role the employee moves to")


class TemplatesParams(ItsmParams):
    role_code: str = Field(min_length=1, description="Role whose templates are wanted")


class PermissionChangeParams(RoleChangeParams):
    permission_template_id: TemplateId = Field(description="Template chosen, PTPL-ROLE-NN")
    effective_date: IsoDate = Field(description="HR-approved effective date YYYY-MM-DD")


class AccessReviewParams(ItsmParams):
    case_id: CaseId = Field(description="Permission change case ID")
    employee_id: EmployeeId = Field(description="Employee whose access is reviewed")
    review_date: IsoDate = Field(description="Review date, 90 days after the change (+/-3)")


def _hr_approval(employee: Json, employee_id: str, new_role: str) -> Json:
    approval = sub_table(employee, "pending_role_approval")
    if not approval.get("approved_by_hr"):
        return error(
            "not_authorized",
            f"No HR-approved role change on file for {employee_id}; contact HR first",
        )
    if approval.get("new_role_code") != new_role:
        return error(
            "role_mismatch",
            f"HR approved a change to {approval.get('new_role_code')}, not {new_role}",
        )
    return approval


@itsm_tool("check_role_change_authorized", RoleChangeParams, auth=OTP)
def check_role_change_authorized(p: RoleChangeParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    approval = _hr_approval(employee, p.employee_id, p.new_role_code)
    if is_error(approval):
        return approval
    return success(
        "Role change authorized by HR",
        employee_id=p.employee_id,
        new_role_code=p.new_role_code,
        hr_case_id=approval.get("hr_case_id"),
        effective_date=approval.get("effective_date"),
    )


@itsm_tool("get_permission_templates", TemplatesParams, auth=OTP)
def get_permission_templates(p: TemplatesParams, db: Json, call_index: int) -> Json:
    templates = {
        key: copy.deepcopy(t)
        for key, t in sub_table(db, "permission_templates").items()
        if isinstance(t, dict) and t.get("role_code") == p.role_code
    }
    if not templates:
        return error("not_found", f"No permission templates for role {p.role_code}")
    return success(role_code=p.role_code, templates=templates)


def _date_error(p: PermissionChangeParams, db: Json, approved: object) -> Json | None:
    if p.effective_date < today(db).isoformat():
        return error("invalid_effective_date", f"Effective date {p.effective_date} is in the past")
    if p.effective_date != approved:
        return error(
            "effective_date_mismatch",
            f"Effective date {p.effective_date} does not match the HR-approved date {approved}",
        )
    return None


@itsm_tool("submit_permission_change", PermissionChangeParams, auth=OTP)
def submit_permission_change(p: PermissionChangeParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    approval = _hr_approval(employee, p.employee_id, p.new_role_code)
    if is_error(approval):
        return approval
    date_problem = _date_error(p, db, approval.get("effective_date"))
    if date_problem is not None:
        return date_problem
    template = sub_table(db, "permission_templates").get(p.permission_template_id)
    if not isinstance(template, dict):
        return error("not_found", f"Permission template {p.permission_template_id} not found")
    if template.get("role_code") != p.new_role_code:
        return error(
            "template_role_mismatch",
            f"Template {p.permission_template_id} is for role {template.get('role_code')}, "
            f"not {p.new_role_code}",
        )
    change: Json = {
        "case_id": None,
        "new_role_code": p.new_role_code,
        "permission_template_id": p.permission_template_id,
        "effective_date": p.effective_date,
        "status": "pending",
    }
    case_id = f"CASE-ACCT-{content_hash(change)}"
    change["case_id"] = case_id
    employee["pending_role_change"] = change
    return success(
        f"Permission change submitted. Case: {case_id}",
        case_id=case_id,
        employee_id=p.employee_id,
        effective_date=p.effective_date,
    )


@itsm_tool("schedule_access_review", AccessReviewParams, auth=OTP)
def schedule_access_review(p: AccessReviewParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    change = sub_table(employee, "pending_role_change")
    if not change.get("case_id"):
        return error("no_pending_change", f"No pending permission change for {p.employee_id}")
    effective = parse_date(change.get("effective_date"))
    review = parse_date(p.review_date)
    target = effective + timedelta(days=REVIEW_AFTER_DAYS) if effective else None
    if target is None or review is None or abs((review - target).days) > REVIEW_TOLERANCE_DAYS:
        expected = target.isoformat() if target else "unknown"
        return error(
            "invalid_review_date",
            f"Review date must be 90 days after the effective date (+/-3 days): {expected}",
        )
    review_id = f"ARVW-{p.case_id[-6:]}"
    change["access_review_id"] = review_id
    change["review_date"] = p.review_date
    return success(
        f"90-day review on {p.review_date}. ID: {review_id}",
        review_id=review_id,
        review_date=p.review_date,
    )
