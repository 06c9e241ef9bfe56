"""Hardware tools (spec 2.6): assets, entitlement, budget checks, requests and returns."""

from __future__ import annotations

import copy
from typing import Literal

from pydantic import Field, model_validator

from scenarios.engines.itsm.common import (
    Json,
    content_hash,
    error,
    find_employee,
    is_error,
    itsm_tool,
    parse_date,
    plus_days,
    resolve_place,
    sub_table,
    success,
    table,
    today,
    whole_months,
)
from scenarios.engines.itsm.fields import (
    AssetTag,
    EmployeeId,
    FloorCode,
    ItsmParams,
    OptionalAssetTag,
    PlaceName,
    RequestId,
    absent_to_none,
)

RequestType = Literal["laptop_replacement", "monitor_bundle"]
LAPTOP_JUSTIFICATIONS = (
    "end_of_life",
    "performance_degradation",
    "physical_damage",
    "lost_or_stolen",
)
MONITOR_JUSTIFICATIONS = ("new_setup", "replacement")
# Minimum device age in months before a replacement (spec 2.6).
MIN_AGE_MONTHS = {"laptop_replacement": 36, "monitor_bundle": 12}
RETURN_WINDOW_DAYS = 14


class EmployeeParams(ItsmParams):
    employee_id: EmployeeId = Field(description="Employee ID, EMP followed by 6 digits")


class AssetParams(ItsmParams):
    asset_tag: AssetTag = Field(description="Asset tag, AST-XXX-NNNNNN")


class EntitlementParams(EmployeeParams):
    request_type: RequestType = Field(description="Hardware category")


class HardwareRequestParams(EmployeeParams):
    request_type: RequestType = Field(description="Hardware category")
    justification: Literal[
        "end_of_life",
        "performance_degradation",
        "physical_damage",
        "lost_or_stolen",
        "new_setup",
        "replacement",
    ] = Field(description="Reason; laptop and monitor reasons differ")
    delivery_building: PlaceName = Field(description="Building code or name/alias")
    delivery_floor: FloorCode = Field(description="Delivery floor, e.g. FL2")
    current_asset_tag: OptionalAssetTag = Field(None, description="Device being replaced")
    laptop_os: Literal["macos", "windows"] | None = Field(None, description="Laptops only")
    laptop_size: Literal["13_inch", "14_inch", "16_inch"] | None = Field(
        None, description="Laptops only"
    )
    monitor_size: Literal["24_inch", "27_inch", "32_inch"] | None = Field(
        None, description="Monitor bundles only"
    )

    @model_validator(mode="before")
    @classmethod
    def _absent_optionals(cls, data: object) -> object:
        if isinstance(data, dict):
            data = dict(data)
            for key in ("laptop_os", "laptop_size", "monitor_size"):
                if key in data:
                    data[key] = absent_to_none(data[key])
        return data

    @model_validator(mode="after")
    def _fits_request_type(self) -> HardwareRequestParams:
        if self.request_type == "laptop_replacement":
            if self.justification not in LAPTOP_JUSTIFICATIONS:
                raise ValueError(
                    f"justification '{self.justification}' is not valid for laptop_replacement; "
                    f"use one of {', '.join(LAPTOP_JUSTIFICATIONS)}"
                )
            if self.laptop_os is None or self.laptop_size is None:
                raise ValueError("laptop_os and laptop_size are required for laptop_replacement")
            if self.current_asset_tag is None and self.justification != "lost_or_stolen":
                raise ValueError(
                    "current_asset_tag is required for laptop_replacement unless lost_or_stolen"
                )
        else:
            if self.justification not in MONITOR_JUSTIFICATIONS:
                raise ValueError(
                    f"justification '{self.justification}' is not valid for monitor_bundle; "
                    f"use one of {', '.join(MONITOR_JUSTIFICATIONS)}"
                )
            if self.monitor_size is None:
                raise ValueError("monitor_size is required for monitor_bundle")
        return self


class AssetReturnParams(EmployeeParams):
    asset_tag: AssetTag = Field(description="Device to return")
    request_id: RequestId = Field(description="Hardware request the return belongs to")


def _find_asset(db: Json, asset_tag: str) -> Json:
    asset = sub_table(db, "assets").get(asset_tag)
    if not isinstance(asset, dict):
        return error("not_found", f"Asset {asset_tag} not found")
    return asset


@itsm_tool("get_asset_record", AssetParams)
def get_asset_record(p: AssetParams, db: Json, call_index: int) -> Json:
    asset = _find_asset(db, p.asset_tag)
    if is_error(asset):
        return asset
    return success(asset=copy.deepcopy(asset))


@itsm_tool("get_employee_assets", EmployeeParams)
def get_employee_assets(p: EmployeeParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    assets = [
        copy.deepcopy(a)
        for a in sub_table(db, "assets").values()
        if isinstance(a, dict) and a.get("assigned_employee_id") == p.employee_id
    ]
    return success(f"{len(assets)} asset(s)", employee_id=p.employee_id, assets=assets)


def _age_error(request_type: str, age: int) -> Json:
    if request_type == "laptop_replacement":
        return error(
            "device_too_new",
            f"Laptop is {age} months old; minimum 36 months for standard replacement. "
            "File a security incident if lost/stolen/damaged.",
        )
    return error(
        "replaced_too_recently",
        f"Monitor is {age} months old; minimum 12 months between monitor replacements.",
    )


@itsm_tool("check_hardware_entitlement", EntitlementParams)
def check_hardware_entitlement(p: EntitlementParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    entitlement = sub_table(employee, "hardware_entitlements").get(p.request_type)
    if not isinstance(entitlement, dict):
        return error("no_entitlement", f"{p.employee_id} is not entitled to {p.request_type}")
    if entitlement.get("pending_request"):
        return error(
            "request_already_pending",
            f"A {p.request_type} request is already pending: {entitlement.get('pending_request_id')}",
        )
    tag = entitlement.get("current_asset_tag")
    asset = sub_table(db, "assets").get(tag) if tag else None
    purchased = parse_date(asset.get("purchase_date")) if isinstance(asset, dict) else None
    age = whole_months(purchased, today(db)) if purchased else None
    if age is not None and age < MIN_AGE_MONTHS[p.request_type]:
        return _age_error(p.request_type, age)
    summary = (
        {k: asset.get(k) for k in ("asset_tag", "model", "os", "size")}
        if isinstance(asset, dict)
        else None
    )
    return success(
        "Eligible",
        employee_id=p.employee_id,
        request_type=p.request_type,
        eligible=True,
        current_asset_tag=tag,
        current_asset=summary,
        device_age_months=age,
    )


@itsm_tool("submit_hardware_request", HardwareRequestParams)
def submit_hardware_request(p: HardwareRequestParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    building = resolve_place(db, p.delivery_building, "building")
    if isinstance(building, dict):
        return building
    laptop = p.request_type == "laptop_replacement"
    request: Json = {
        "request_id": None,
        "employee_id": p.employee_id,
        "request_type": p.request_type,
        "justification": p.justification,
        "current_asset_tag": p.current_asset_tag,
        "monitor_size": None if laptop else p.monitor_size,
        "laptop_os": p.laptop_os if laptop else None,
        "laptop_size": p.laptop_size if laptop else None,
        "delivery_building": building,
        "delivery_floor": p.delivery_floor,
        "status": "submitted",
        "created_date": today(db).isoformat(),
    }
    request_id = f"REQ-HW-{content_hash(request)}"
    request["request_id"] = request_id
    table(db, "requests")[request_id] = request
    entitlement = sub_table(employee, "hardware_entitlements").get(p.request_type)
    if isinstance(entitlement, dict):
        entitlement["pending_request"] = True
        entitlement["pending_request_id"] = request_id
    asset = sub_table(db, "assets").get(p.current_asset_tag or "")
    if p.justification == "lost_or_stolen" and isinstance(asset, dict):
        asset["lifecycle_status"] = "lost_or_stolen"
        asset["status"] = "inactive"
    return success(f"Submitted: {request_id}", request_id=request_id, request_type=p.request_type)


@itsm_tool("initiate_asset_return", AssetReturnParams)
def initiate_asset_return(p: AssetReturnParams, db: Json, call_index: int) -> Json:
    asset = _find_asset(db, p.asset_tag)
    if is_error(asset):
        return asset
    rma = f"RMA-{p.asset_tag[-6:]}"
    deadline = plus_days(today(db), RETURN_WINDOW_DAYS)
    asset["return_authorization"] = {
        "return_auth_id": rma,
        "request_id": p.request_id,
        "return_deadline": deadline,
        "status": "pending_return",
    }
    return success(
        f"RMA {rma}: return by {deadline}",
        asset_tag=p.asset_tag,
        return_auth_id=rma,
        return_deadline=deadline,
    )


def _cost_center(db: Json, employee_id: str) -> Json:
    employee = find_employee(db, employee_id)
    if is_error(employee):
        return employee
    code = employee.get("cost_center_code")
    if not code:
        return error("cc_not_on_file", f"No cost center on file for {employee_id}")
    center = sub_table(db, "cost_centers").get(code)
    if not isinstance(center, dict):
        return error("not_found", f"Cost center {code} not found")
    if center.get("department_code") != employee.get("department_code"):
        return error(
            "department_mismatch",
            f"Cost center {code} belongs to {center.get('department_code')}, "
            f"not {employee.get('department_code')}",
        )
    return center


@itsm_tool("verify_cost_center_budget", EmployeeParams)
def verify_cost_center_budget(p: EmployeeParams, db: Json, call_index: int) -> Json:
    center = _cost_center(db, p.employee_id)
    if is_error(center):
        return center
    code = center.get("cost_center_code")
    if not center.get("has_budget"):
        return error(
            "insufficient_budget",
            f"Cost center {code} has insufficient budget",
            cost_center_code=code,
            remaining_budget_usd=center.get("remaining_budget_usd"),
        )
    return success(
        "Budget verified",
        cost_center_code=code,
        department_code=center.get("department_code"),
        has_budget=True,
        remaining_budget_usd=center.get("remaining_budget_usd"),
    )


@itsm_tool("validate_cost_center", EmployeeParams)
def validate_cost_center(p: EmployeeParams, db: Json, call_index: int) -> Json:
    center = _cost_center(db, p.employee_id)
    if is_error(center):
        return center
    code = center.get("cost_center_code")
    return success(
        f"Cost center {code} validated",
        cost_center_code=code,
        department_code=center.get("department_code"),
        validated=True,
    )
