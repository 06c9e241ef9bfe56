"""Off-boarding tools (spec 2.6): the HR record, access removal and asset recovery."""

from __future__ import annotations

import copy
from typing import Literal

from pydantic import Field

from scenarios.engines.itsm.common import (
    MANAGER,
    MANAGER_OTP,
    Json,
    content_hash,
    error,
    find_employee,
    is_error,
    itsm_tool,
    parse_date,
    plus_days,
    sub_table,
    success,
    table,
    today,
)
from scenarios.engines.itsm.fields import CaseId, EmployeeId, IsoDate, ItsmParams

EMAIL_GRACE_DAYS = 30


class EmployeeParams(ItsmParams):
    employee_id: EmployeeId = Field(description="Departing employee's ID")


class AccessRemovalParams(ItsmParams):
    manager_employee_id: EmployeeId = Field(description="Requesting manager")
    departing_employee_id: EmployeeId = Field(description="Departing employee")
    last_working_day: IsoDate = Field(description="Last working day YYYY-MM-DD")
    removal_scope: Literal["full", "staged"] = Field(description="full now, or staged handoff")


class AssetRecoveryParams(ItsmParams):
    departing_employee_id: EmployeeId = Field(description="Departing employee")
    case_id: CaseId = Field(description="Access removal case ID")
    recovery_method: Literal["shipping_label", "drop_off"] = Field(description="Return method")


def _offboarding_record(db: Json, employee_id: str) -> Json:
    employee = find_employee(db, employee_id)
    if is_error(employee):
        return employee
    record = employee.get("offboarding_record")
    # Every employee carries a blank template; only one HR filled in (a status) counts.
    if not isinstance(record, dict) or record.get("status") is None:
        return error("no_offboarding_record", f"No off-boarding record on file for {employee_id}")
    return record


@itsm_tool("get_offboarding_record", EmployeeParams, auth=MANAGER)
def get_offboarding_record(p: EmployeeParams, db: Json, call_index: int) -> Json:
    record = _offboarding_record(db, p.employee_id)
    if is_error(record):
        return record
    return success(employee_id=p.employee_id, offboarding=copy.deepcopy(record))


@itsm_tool("submit_access_removal", AccessRemovalParams, auth=MANAGER_OTP)
def submit_access_removal(p: AccessRemovalParams, db: Json, call_index: int) -> Json:
    if p.last_working_day < today(db).isoformat():
        return error("date_in_past", f"Last working day {p.last_working_day} is in the past")
    manager = find_employee(db, p.manager_employee_id)
    if is_error(manager):
        return manager
    departing = find_employee(db, p.departing_employee_id)
    if is_error(departing):
        return departing
    if p.departing_employee_id not in (manager.get("direct_reports") or []):
        return error(
            "not_direct_report",
            f"{p.departing_employee_id} is not a direct report of {p.manager_employee_id}",
        )
    record = _offboarding_record(db, p.departing_employee_id)
    if is_error(record):
        return record
    departing["employment_status"] = "terminated"
    departing["system_accounts"] = []
    departing["group_memberships"] = []
    if p.removal_scope == "staged":
        last_day = parse_date(p.last_working_day) or today(db)
        departing["email_preserved_until"] = plus_days(last_day, EMAIL_GRACE_DAYS)
    record["access_removed"] = True
    record["removal_scope"] = p.removal_scope
    # The case is identified by the whole updated record (its own case id blanked).
    case_id = f"CASE-ACCT-{content_hash(record)}"
    record["removal_case_id"] = case_id
    return success(
        f"Access removed. Case: {case_id}",
        case_id=case_id,
        departing_employee_id=p.departing_employee_id,
        removal_scope=p.removal_scope,
    )


@itsm_tool("initiate_asset_recovery", AssetRecoveryParams, auth=MANAGER)
def initiate_asset_recovery(p: AssetRecoveryParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.departing_employee_id)
    if is_error(employee):
        return employee
    assets = [
        a
        for a in sub_table(db, "assets").values()
        if isinstance(a, dict) and a.get("assigned_employee_id") == p.departing_employee_id
    ]
    recovery_id = f"RECV-{p.case_id[-6:]}"
    table(db, "asset_recoveries")[recovery_id] = {
        "recovery_id": recovery_id,
        "case_id": p.case_id,
        "departing_employee_id": p.departing_employee_id,
        "recovery_method": p.recovery_method,
        "assets_to_recover": [a.get("asset_tag") for a in assets],
        "created_date": today(db).isoformat(),
    }
    return success(
        f"Recovery {recovery_id}: {len(assets)} device(s) via {p.recovery_method}",
        recovery_id=recovery_id,
        recovery_method=p.recovery_method,
        assets_to_recover=[
            {k: a.get(k) for k in ("asset_tag", "asset_type", "model")} for a in assets
        ],
    )
