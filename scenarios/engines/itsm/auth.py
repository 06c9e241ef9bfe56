"""Identity tools (spec 2.4): the three verification tiers, the employee record and transfers."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from scenarios.engines.itsm.common import (
    NO_AUTH,
    Json,
    auth_required,
    error,
    find_employee,
    is_error,
    itsm_tool,
    session,
    success,
)
from scenarios.engines.itsm.fields import (
    EmployeeId,
    ItsmParams,
    ManagerAuthCode,
    OtpCode,
    PhoneLastFour,
)

EMPLOYEE_RECORD_KEYS = (
    "employee_id",
    "first_name",
    "last_name",
    "department_code",
    "role_code",
    "hire_date",
    "employment_status",
    "building_code",
    "floor_code",
    "manager_employee_id",
)


class EmployeeParams(ItsmParams):
    employee_id: EmployeeId = Field(description="Employee ID, EMP followed by 6 digits")


class VerifyEmployeeParams(EmployeeParams):
    phone_last_four: PhoneLastFour = Field(description="Last 4 digits of the phone on file")


class VerifyOtpParams(EmployeeParams):
    otp_code: OtpCode = Field(description="6-digit code the caller reads from the SMS")


class VerifyManagerParams(VerifyEmployeeParams):
    manager_auth_code: ManagerAuthCode = Field(description="6-character manager auth code")


class TransferParams(EmployeeParams):
    transfer_reason: Literal[
        "caller_requested",
        "policy_exception_needed",
        "unable_to_resolve",
        "complaint_escalation",
        "technical_issue",
    ] = Field(description="Why the call goes to a live agent")
    issue_summary: str = Field(description="Context for the live agent")


@itsm_tool("verify_employee_auth", VerifyEmployeeParams, auth=NO_AUTH)
def verify_employee_auth(p: VerifyEmployeeParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    if str(employee.get("phone_last_four")) != p.phone_last_four:
        return error("authentication_failed", "Phone number does not match our records")
    state = session(db)
    state["employee_auth"] = True
    state["authenticated_employee_id"] = p.employee_id
    return success(
        f"Employee {p.employee_id} authenticated",
        authenticated=True,
        employee_id=p.employee_id,
        first_name=employee.get("first_name"),
        last_name=employee.get("last_name"),
    )


@itsm_tool("verify_manager_auth", VerifyManagerParams, auth=NO_AUTH)
def verify_manager_auth(p: VerifyManagerParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    if str(employee.get("phone_last_four")) != p.phone_last_four:
        return error("authentication_failed", "Phone number does not match our records")
    if employee.get("manager_auth_code") != p.manager_auth_code:
        return error("authentication_failed", "Manager authorization code does not match")
    if not employee.get("is_manager"):
        return error("not_authorized", f"Employee {p.employee_id} is not a manager")
    state = session(db)
    state["employee_auth"] = True
    state["authenticated_employee_id"] = p.employee_id
    state["manager_auth"] = True
    state["manager_employee_id"] = p.employee_id
    return success(
        "Standard + manager auth confirmed",
        confirmed=True,
        employee_id=p.employee_id,
        first_name=employee.get("first_name"),
        last_name=employee.get("last_name"),
        department_code=employee.get("department_code"),
        direct_reports=list(employee.get("direct_reports") or []),
    )


@itsm_tool("initiate_otp_auth", EmployeeParams, auth=NO_AUTH)
def initiate_otp_auth(p: EmployeeParams, db: Json, call_index: int) -> Json:
    state = session(db)
    if not (state.get("employee_auth") or state.get("manager_auth")):
        return auth_required("employee_auth")
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    phone = str(employee.get("phone_last_four"))
    state["otp_employee_id"] = p.employee_id
    state["otp_issued"] = True
    return success(f"OTP sent to ***{phone}", phone_last_four=phone)


@itsm_tool("verify_otp_auth", VerifyOtpParams, auth=NO_AUTH)
def verify_otp_auth(p: VerifyOtpParams, db: Json, call_index: int) -> Json:
    state = session(db)
    # Reference quirk (spec 12.10): the OTP need not have been issued for this employee.
    if not state.get("otp_issued"):
        return error("otp_not_initiated", "No OTP has been issued; call initiate_otp_auth first")
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    if str(employee.get("otp_code")) != p.otp_code:
        return error("authentication_failed", "OTP code does not match")
    state["otp_auth"] = True
    state.pop("otp_employee_id", None)
    state.pop("otp_issued", None)
    return success("OTP verified", authenticated=True, employee_id=p.employee_id)


@itsm_tool("get_employee_record", EmployeeParams)
def get_employee_record(p: EmployeeParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    return success(employee={key: employee.get(key) for key in EMPLOYEE_RECORD_KEYS})


@itsm_tool("transfer_to_agent", TransferParams, auth=NO_AUTH)
def transfer_to_agent(p: TransferParams, db: Json, call_index: int) -> Json:
    return success(
        "Transferring",
        employee_id=p.employee_id,
        transfer_id=f"TRF-{p.employee_id}-{call_index:03d}",
        transfer_reason=p.transfer_reason,
        estimated_wait="2-3 minutes",
    )
