"""Authentication tools (spec 2.4) and the live-agent transfer.

Tiers live in ``db["session"]``: ``employee_auth`` (employee id + date of birth),
``provider_auth`` (NPI + facility + PIN) and ``otp_auth`` (SMS code, which needs a
prior ``initiate_otp_auth``). Failed attempts leave the session untouched.
"""

from __future__ import annotations

from scenarios.engines.medical_hr.common import (
    Db,
    Gate,
    Response,
    employee_not_found,
    error,
    find_employee,
    find_provider,
    medical_tool,
    session_of,
    success,
)
from scenarios.engines.medical_hr.params import (
    EmployeeAuthParams,
    EmployeeParams,
    OtpVerifyParams,
    ProviderAuthParams,
    TransferParams,
)


@medical_tool("verify_employee_auth", EmployeeAuthParams, Gate.NONE)
def verify_employee_auth(p: EmployeeAuthParams, db: Db, call_index: int) -> Response:
    employee = find_employee(db, p.employee_id)
    if employee is None or employee.get("date_of_birth") != p.date_of_birth:
        return error(
            "authentication_failed", "Employee ID or date of birth does not match our records"
        )
    session = session_of(db)
    session["employee_auth"] = True
    session["authenticated_employee_id"] = p.employee_id
    return success(
        authenticated=True,
        employee_id=p.employee_id,
        first_name=employee.get("first_name"),
        last_name=employee.get("last_name"),
        message=f"Employee {p.employee_id} authenticated successfully",
    )


@medical_tool("verify_provider_auth", ProviderAuthParams, Gate.NONE)
def verify_provider_auth(p: ProviderAuthParams, db: Db, call_index: int) -> Response:
    provider = find_provider(db, p.npi)
    if (
        provider is None
        or provider.get("facility_code") != p.facility_code
        or provider.get("pin") != p.pin
    ):
        return error(
            "authentication_failed", "NPI, facility code or PIN does not match our records"
        )
    session = session_of(db)
    session["provider_auth"] = True
    session["authenticated_npi"] = p.npi
    session["authenticated_employee_id"] = provider.get("employee_id")
    return success(
        authenticated=True,
        npi=p.npi,
        employee_id=provider.get("employee_id"),
        first_name=provider.get("first_name"),
        last_name=provider.get("last_name"),
        message=f"Provider NPI {p.npi} authenticated successfully",
    )


@medical_tool("initiate_otp_auth", EmployeeParams, Gate.NONE)
def initiate_otp_auth(p: EmployeeParams, db: Db, call_index: int) -> Response:
    # No auth gate here (spec 12.10): any existing employee id gets a code sent.
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    session = session_of(db)
    session["otp_employee_id"] = p.employee_id
    session["otp_issued"] = True
    last_four = employee.get("phone_last_four")
    return success(
        phone_last_four=last_four,
        message=f"OTP sent to number ending in {last_four}. Ask the caller to read the code.",
    )


@medical_tool("verify_otp_auth", OtpVerifyParams, Gate.NONE)
def verify_otp_auth(p: OtpVerifyParams, db: Db, call_index: int) -> Response:
    session = session_of(db)
    if session.get("otp_issued") is not True:
        return error("otp_not_initiated", "No OTP has been sent yet; initiate OTP first")
    employee = find_employee(db, p.employee_id)
    if employee is None:
        return employee_not_found(p.employee_id)
    if employee.get("otp_code") != p.otp_code:
        return error("invalid_otp", "The one-time passcode does not match")
    # The issued flags stay in the session: expected sessions keep them.
    session["otp_auth"] = True
    session["authenticated_employee_id"] = p.employee_id
    return success(
        authenticated=True,
        employee_id=p.employee_id,
        first_name=employee.get("first_name"),
        message=f"OTP verified. Employee {p.employee_id} authenticated successfully.",
    )


@medical_tool("transfer_to_agent", TransferParams, Gate.NONE)
def transfer_to_agent(p: TransferParams, db: Db, call_index: int) -> Response:
    return success(
        employee_id=p.employee_id,
        transfer_reason=p.transfer_reason,
        issue_summary=p.issue_summary,
        transfer_id=f"TRF-{p.employee_id}-{call_index:03d}",
        estimated_wait="2-3 minutes",
        message="Transferring to live agent",
    )
