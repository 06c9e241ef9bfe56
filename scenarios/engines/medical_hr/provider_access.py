"""Provider access tools: DEA registration transfers and clinical privilege reactivation."""

from __future__ import annotations

from typing import Any

from scenarios.engines.medical_hr.common import (
    Db,
    Gate,
    Response,
    add_notification,
    error,
    find_provider,
    medical_tool,
    provider_case_id,
    provider_not_found,
    snapshot,
    success,
)
from scenarios.engines.medical_hr.params import (
    DeaParams,
    DeaTransferParams,
    EhrAccessParams,
    NpiParams,
    PdmpNotifyParams,
    ReactivateParams,
    ReactivationCheckParams,
)


def _find_dea(
    db: Db, npi: str, dea_number: str
) -> tuple[dict[str, Any], dict[str, Any], None] | tuple[None, None, Response]:
    provider = find_provider(db, npi)
    if provider is None:
        return None, None, provider_not_found(npi)
    registration = provider.get("dea_registration")
    if not isinstance(registration, dict) or registration.get("dea_number") != dea_number:
        return (
            None,
            None,
            error("dea_record_not_found", f"DEA number {dea_number} not found for NPI {npi}"),
        )
    return provider, registration, None


@medical_tool("get_dea_record", DeaParams, Gate.PROVIDER_AND_OTP)
def get_dea_record(p: DeaParams, db: Db, call_index: int) -> Response:
    _, registration, failed = _find_dea(db, p.npi, p.dea_number)
    if failed is not None:
        return failed
    return success(dea_registration=snapshot(registration))


@medical_tool("transfer_dea_registration", DeaTransferParams, Gate.PROVIDER_AND_OTP)
def transfer_dea_registration(p: DeaTransferParams, db: Db, call_index: int) -> Response:
    provider, registration, failed = _find_dea(db, p.npi, p.dea_number)
    if failed is not None:
        return failed
    assert provider is not None and registration is not None
    new_case = provider_case_id("DEA", provider)
    # The current facility/state stay in force until the effective date.
    registration["status"] = "transfer_pending"
    registration["pending_transfer"] = {
        "new_facility_code": p.new_facility_code,
        "new_state_code": p.new_state_code,
        "transfer_reason": p.transfer_reason,
        "effective_date": p.effective_date,
        "transfer_case_id": new_case,
    }
    return success(
        npi=p.npi,
        dea_number=p.dea_number,
        current_facility_code=registration.get("facility_code"),
        current_state_code=registration.get("state_code"),
        new_facility_code=p.new_facility_code,
        new_state_code=p.new_state_code,
        transfer_reason=p.transfer_reason,
        effective_date=p.effective_date,
        case_id=new_case,
        message=(
            "DEA transfer submitted. Current registration unchanged until effective date "
            f"{p.effective_date}. Case ID: {new_case}"
        ),
    )


@medical_tool("notify_pdmp", PdmpNotifyParams, Gate.PROVIDER)
def notify_pdmp(p: PdmpNotifyParams, db: Db, call_index: int) -> Response:
    add_notification(
        db,
        {
            "recipient": "pdmp",
            "npi": p.npi,
            "dea_number": p.dea_number,
            "state_code": p.state_code,
            "facility_code": p.facility_code,
            "notification_type": "dea_transfer",
        },
    )
    return success(
        npi=p.npi,
        dea_number=p.dea_number,
        state_code=p.state_code,
        facility_code=p.facility_code,
        message=f"PDMP notified for state {p.state_code}, facility {p.facility_code}",
    )


def _privileges(provider: dict[str, Any]) -> dict[str, Any] | None:
    privileges = provider.get("privileges")
    return privileges if isinstance(privileges, dict) else None


def _no_privileges(npi: str) -> Response:
    return error("privilege_record_not_found", f"No privilege record found for NPI {npi}")


@medical_tool("get_privilege_record", NpiParams, Gate.OTP)
def get_privilege_record(p: NpiParams, db: Db, call_index: int) -> Response:
    provider = find_provider(db, p.npi)
    if provider is None:
        return provider_not_found(p.npi)
    privileges = _privileges(provider)
    if privileges is None:
        return _no_privileges(p.npi)
    return success(privileges=snapshot(privileges))


@medical_tool("check_reactivation_eligibility", ReactivationCheckParams, Gate.OTP)
def check_reactivation_eligibility(p: ReactivationCheckParams, db: Db, call_index: int) -> Response:
    provider = find_provider(db, p.npi)
    if provider is None:
        return provider_not_found(p.npi)
    if provider.get("clearance_code") != p.clearance_code:
        return error(
            "invalid_clearance_code", "Clearance code does not match occupational health records"
        )
    privilege_list = (_privileges(provider) or {}).get("privilege_list") or []
    suspended = [
        item.get("code")
        for item in privilege_list
        if isinstance(item, dict) and item.get("status") == "suspended"
    ]
    return success(
        eligible=True,
        suspended_privilege_codes=suspended,
        message=(
            f"Clearance verified. {len(suspended)} suspended privilege(s) available for "
            "reactivation"
        ),
    )


@medical_tool("reactivate_privileges", ReactivateParams, Gate.OTP)
def reactivate_privileges(p: ReactivateParams, db: Db, call_index: int) -> Response:
    provider = find_provider(db, p.npi)
    if provider is None:
        return provider_not_found(p.npi)
    privileges = _privileges(provider)
    if privileges is None:
        return _no_privileges(p.npi)
    by_code = {
        item.get("code"): item
        for item in privileges.get("privilege_list") or []
        if isinstance(item, dict)
    }
    activated: list[str] = []
    for code in p.privilege_codes:
        if code not in by_code:
            # Reference quirk (spec 12.10): codes before the unknown one stay activated.
            return error(
                "privilege_not_found",
                f"Privilege {code} not found for NPI {p.npi}",
                activated_privileges=activated,
            )
        by_code[code]["status"] = "active"
        activated.append(code)
    new_case = provider_case_id("PRV", provider)
    privileges["reactivation_case_id"] = new_case
    return success(
        npi=p.npi,
        activated_privileges=activated,
        leave_type_on_record=p.leave_type_on_record,
        case_id=new_case,
        message=f"Privileges reactivated. Case ID: {new_case}",
    )


@medical_tool("update_ehr_access", EhrAccessParams, Gate.OTP)
def update_ehr_access(p: EhrAccessParams, db: Db, call_index: int) -> Response:
    provider = find_provider(db, p.npi)
    if provider is None:
        return provider_not_found(p.npi)
    provider["ehr_access_status"] = p.access_change_type
    provider["ehr_access_case_id"] = p.case_id
    return success(
        npi=p.npi,
        case_id=p.case_id,
        access_change_type=p.access_change_type,
        message=f"EHR access updated to {p.access_change_type}",
    )
