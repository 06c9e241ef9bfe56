"""Security tools (spec 2.6): incident cases for devices, remote wipes and MFA phone changes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from scenarios.engines.itsm.common import (
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
from scenarios.engines.itsm.fields import (
    AssetTag,
    EmployeeId,
    ItsmParams,
    PhoneLastFour,
    SecurityCaseId,
)

LOST_OR_STOLEN = frozenset({"lost", "stolen"})


class SecurityIncidentParams(ItsmParams):
    employee_id: EmployeeId = Field(description="Employee reporting the incident")
    asset_tag: AssetTag = Field(description="Affected device, assigned to the caller")
    incident_type: Literal["lost", "stolen", "suspected_compromise"] = Field(
        description="Kind of incident"
    )


class RemoteWipeParams(ItsmParams):
    asset_tag: AssetTag = Field(description="Device to wipe")
    security_case_id: SecurityCaseId = Field(description="Security case, SEC-<12-char hash>")


class MfaResetParams(ItsmParams):
    employee_id: EmployeeId = Field(description="Employee asking for the change")
    new_phone_last_four: PhoneLastFour = Field(description="Last 4 digits of the new phone")


def _open_case(db: Json, case: Json) -> str:
    case_id = f"SEC-{content_hash({'security_case_id': None, **case})}"
    table(db, "security_cases")[case_id] = {"security_case_id": case_id, **case}
    return case_id


@itsm_tool("report_security_incident", SecurityIncidentParams)
def report_security_incident(p: SecurityIncidentParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    asset = sub_table(db, "assets").get(p.asset_tag)
    if not isinstance(asset, dict):
        return error("not_found", f"Asset {p.asset_tag} not found")
    if asset.get("assigned_employee_id") != p.employee_id:
        return error(
            "asset_not_assigned", f"Asset {p.asset_tag} is not assigned to {p.employee_id}"
        )
    case_id = _open_case(
        db,
        {
            "employee_id": p.employee_id,
            "asset_tag": p.asset_tag,
            "incident_type": p.incident_type,
            "status": "open",
            "created_date": today(db).isoformat(),
        },
    )
    if p.incident_type in LOST_OR_STOLEN:
        asset["lifecycle_status"] = "lost_or_stolen"
    return success(
        f"Security case {case_id} opened for {p.asset_tag}",
        security_case_id=case_id,
        asset_tag=p.asset_tag,
        incident_type=p.incident_type,
    )


@itsm_tool("initiate_remote_wipe", RemoteWipeParams)
def initiate_remote_wipe(p: RemoteWipeParams, db: Json, call_index: int) -> Json:
    case = sub_table(db, "security_cases").get(p.security_case_id)
    if not isinstance(case, dict):
        return error("not_found", f"Security case {p.security_case_id} not found")
    if case.get("asset_tag") != p.asset_tag:
        return error(
            "asset_mismatch",
            f"Security case {p.security_case_id} does not reference asset {p.asset_tag}",
        )
    asset = sub_table(db, "assets").get(p.asset_tag)
    if not isinstance(asset, dict):
        return error("not_found", f"Asset {p.asset_tag} not found")
    wipe_id = f"WIPE-{p.asset_tag[-6:]}"
    now = today(db).isoformat()
    asset["remote_wipe"] = {"wipe_id": wipe_id, "status": "dispatched", "dispatched_date": now}
    asset["status"] = "wiped"
    case["remote_wipe_id"] = wipe_id
    return success(
        f"Remote wipe {wipe_id} dispatched",
        wipe_id=wipe_id,
        asset_tag=p.asset_tag,
        security_case_id=p.security_case_id,
    )


@itsm_tool("submit_mfa_reset", MfaResetParams)
def submit_mfa_reset(p: MfaResetParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    # Reference quirk (spec 2.6): the case is stored although the response is an error.
    case_id = _open_case(
        db,
        {
            "employee_id": p.employee_id,
            "incident_type": "mfa_reset_request",
            "new_phone_last_four": p.new_phone_last_four,
            "status": "requires_in_person",
            "created_date": today(db).isoformat(),
        },
    )
    return error(
        "in_person_required",
        "Phone number changes cannot be made over the phone. The caller must visit IT "
        f"security in person. Case: {case_id}",
        security_case_id=case_id,
    )
