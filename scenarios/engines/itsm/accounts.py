"""Account tools (spec 2.6): new-hire provisioning and access-group membership changes."""

from __future__ import annotations

import copy
from typing import Literal

from pydantic import Field

from scenarios.engines.itsm.common import (
    MANAGER,
    MANAGER_OTP,
    OTP,
    Json,
    content_hash,
    error,
    find_employee,
    is_error,
    itsm_tool,
    sub_table,
    success,
    table,
    today,
)
from scenarios.engines.itsm.fields import EmployeeId, GroupCode, IsoDate, ItsmParams

EMAIL_DOMAIN = "company.com"
NEW_HIRE_KEYS = (
    "employee_id",
    "first_name",
    "last_name",
    "department_code",
    "role_code",
    "start_date",
)


class EmployeeParams(ItsmParams):
    employee_id: EmployeeId = Field(description="Employee ID, EMP followed by 6 digits")


class NewHireParams(ItsmParams):
    new_hire_employee_id: EmployeeId = Field(description="New hire's employee ID")


class ProvisionParams(ItsmParams):
    manager_employee_id: EmployeeId = Field(description="Requesting manager")
    new_hire_employee_id: EmployeeId = Field(description="New hire")
    department_code: str = Field(min_length=1, description="New hire's department code")
    role_code: str = Field(min_length=1, description="New hire's role code")
    start_date: IsoDate = Field(description="Start date YYYY-MM-DD")
    access_groups: list[GroupCode] = Field(description="Initial access group codes")


class GroupParams(ItsmParams):
    group_code: GroupCode = Field(description="Access group code, GRP-XXXX")


class MembershipChangeParams(EmployeeParams):
    group_code: GroupCode = Field(description="Access group code, GRP-XXXX")
    action: Literal["add", "remove"] = Field(description="Add to or remove from the group")


def eligibility_error(group: Json, department: object, role: object) -> Json | None:
    """Groups may restrict departments and roles; an empty list means unrestricted."""
    departments = list(group.get("eligible_departments") or [])
    roles = list(group.get("eligible_roles") or [])
    if (departments and department not in departments) or (roles and role not in roles):
        return error(
            "group_not_eligible",
            f"{group.get('group_code')} is restricted to departments "
            f"{departments or 'any'} and roles {roles or 'any'} "
            f"(employee: {department}/{role})",
        )
    return None


def _find_group(db: Json, group_code: str) -> Json:
    group = sub_table(db, "access_groups").get(group_code)
    if not isinstance(group, dict):
        return error("not_found", f"Access group {group_code} not found")
    return group


@itsm_tool("lookup_new_hire", NewHireParams, auth=MANAGER)
def lookup_new_hire(p: NewHireParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.new_hire_employee_id)
    if is_error(employee):
        return employee
    if employee.get("employment_status") != "pending_start":
        return error(
            "not_new_hire",
            f"{p.new_hire_employee_id} is not a pending new hire "
            f"(status: {employee.get('employment_status')})",
        )
    return success(employee={key: employee.get(key) for key in NEW_HIRE_KEYS})


@itsm_tool("check_existing_accounts", EmployeeParams, auth=MANAGER)
def check_existing_accounts(p: EmployeeParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    accounts = [a for a in employee.get("system_accounts") or [] if isinstance(a, dict)]
    active = [a for a in accounts if a.get("status") == "active"]
    if active:
        return error("accounts_already_exist", f"{len(active)} active account(s)")
    return success(
        "Ready to provision", employee_id=p.employee_id, existing_accounts=copy.deepcopy(accounts)
    )


def _unique_email(db: Json, new_hire: Json) -> str:
    local = f"{new_hire.get('first_name')}.{new_hire.get('last_name')}".lower()
    taken = {
        str(e.get("email")).lower()
        for e in sub_table(db, "employees").values()
        if isinstance(e, dict) and e.get("email") and e is not new_hire
    }
    candidate, suffix = f"{local}@{EMAIL_DOMAIN}", 2
    while candidate in taken:
        candidate, suffix = f"{local}{suffix}@{EMAIL_DOMAIN}", suffix + 1
    return candidate


@itsm_tool("provision_new_account", ProvisionParams, auth=MANAGER_OTP)
def provision_new_account(p: ProvisionParams, db: Json, call_index: int) -> Json:
    manager = find_employee(db, p.manager_employee_id)
    if is_error(manager):
        return manager
    new_hire = find_employee(db, p.new_hire_employee_id)
    if is_error(new_hire):
        return new_hire
    if p.new_hire_employee_id not in (manager.get("direct_reports") or []):
        return error(
            "not_direct_report",
            f"{p.new_hire_employee_id} is not a direct report of {p.manager_employee_id}",
        )
    for code in p.access_groups:
        group = _find_group(db, code)
        if is_error(group):
            return group
        denied = eligibility_error(group, p.department_code, p.role_code)
        if denied is not None:
            return denied
    email = _unique_email(db, new_hire)
    account: Json = {
        "case_id": None,
        "status": "active",
        "provisioned_date": today(db).isoformat(),
        "access_groups": list(p.access_groups),
    }
    case_id = f"CASE-ACCT-{content_hash(account)}"
    account["case_id"] = case_id
    new_hire["system_accounts"] = [account]
    new_hire["employment_status"] = "active"
    new_hire["email"] = email
    return success(
        f"Provisioned. Case: {case_id}. Email: {email}",
        case_id=case_id,
        new_hire_employee_id=p.new_hire_employee_id,
        email=email,
        access_groups=list(p.access_groups),
    )


@itsm_tool("get_group_memberships", EmployeeParams, auth=OTP)
def get_group_memberships(p: EmployeeParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    memberships = copy.deepcopy(list(employee.get("group_memberships") or []))
    return success(employee_id=p.employee_id, memberships=memberships)


@itsm_tool("get_group_details", GroupParams, auth=OTP)
def get_group_details(p: GroupParams, db: Json, call_index: int) -> Json:
    group = _find_group(db, p.group_code)
    if is_error(group):
        return group
    return success(group=copy.deepcopy(group))


def _add_active_membership(memberships: list[Json], group: Json, code: str, now: str) -> Json:
    entry: Json = {
        "group_code": code,
        "group_name": group.get("name"),
        "status": "active",
        "added_date": now,
        "case_id": None,
    }
    case_id = f"CASE-ACCT-{content_hash(entry)}"
    entry["case_id"] = case_id
    memberships.append(entry)
    return success(
        f"Added to {code}. Case: {case_id}",
        action="add",
        group_code=code,
        case_id=case_id,
        requires_approval=False,
    )


def _add_pending_membership(
    db: Json, memberships: list[Json], group: Json, p: MembershipChangeParams
) -> Json:
    now = today(db).isoformat()
    entry: Json = {
        "group_code": p.group_code,
        "group_name": group.get("name"),
        "status": "pending_approval",
        "case_id": None,
        "request_id": None,
        "requested_date": now,
    }
    request: Json = {
        "request_id": None,
        "case_id": None,
        "employee_id": p.employee_id,
        "group_code": p.group_code,
        "action": "add",
        "status": "pending_approval",
        "requires_manager_approval": True,
        "created_date": now,
    }
    # Entry and request cite each other; IDs are blanked before hashing, so order is free.
    case_id = f"CASE-ACCT-{content_hash(entry)}"
    request_id = f"REQ-ACCT-{content_hash(request)}"
    entry.update(case_id=case_id, request_id=request_id)
    request.update(request_id=request_id, case_id=case_id)
    memberships.append(entry)
    table(db, "requests")[request_id] = request
    return success(
        f"Pending approval. Case: {case_id}. Request: {request_id}",
        action="add",
        group_code=p.group_code,
        case_id=case_id,
        request_id=request_id,
        requires_approval=True,
    )


def _add_membership(db: Json, employee: Json, group: Json, p: MembershipChangeParams) -> Json:
    denied = eligibility_error(group, employee.get("department_code"), employee.get("role_code"))
    if denied is not None:
        return denied
    memberships: list[Json] = employee.setdefault("group_memberships", [])
    if group.get("requires_approval"):
        return _add_pending_membership(db, memberships, group, p)
    return _add_active_membership(memberships, group, p.group_code, today(db).isoformat())


@itsm_tool("submit_group_membership_change", MembershipChangeParams, auth=OTP)
def submit_group_membership_change(p: MembershipChangeParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    group = _find_group(db, p.group_code)
    if is_error(group):
        return group
    memberships = [m for m in employee.get("group_memberships") or [] if isinstance(m, dict)]
    current = next((m for m in memberships if m.get("group_code") == p.group_code), None)
    if p.action == "add":
        if current is not None:
            return error("already_member", f"{p.employee_id} is already in {p.group_code}")
        return _add_membership(db, employee, group, p)
    if current is None:
        return error("not_member", f"{p.employee_id} is not a member of {p.group_code}")
    employee["group_memberships"] = [
        m for m in employee.get("group_memberships") or [] if m is not current
    ]
    case = {"employee_id": p.employee_id, "group_code": p.group_code, "action": "remove"}
    case["created_date"] = today(db).isoformat()
    case_id = f"CASE-ACCT-{content_hash(case)}"
    return success(
        f"Removed from {p.group_code}. Case: {case_id}",
        action="remove",
        group_code=p.group_code,
        case_id=case_id,
        requires_approval=False,
    )
