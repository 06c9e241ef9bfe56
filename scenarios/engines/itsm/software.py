"""Software tools (spec 2.6): catalog lookups, access requests, licenses and renewals."""

from __future__ import annotations

import copy
from typing import Literal

from pydantic import Field

from scenarios.engines.itsm.common import (
    EMPLOYEE_OTP,
    Json,
    catalog_section,
    content_hash,
    error,
    find_catalog_entry,
    find_employee,
    is_error,
    itsm_tool,
    parse_date,
    plus_days,
    success,
    table,
    today,
)
from scenarios.engines.itsm.fields import (
    AppCatalogId,
    DurationDays,
    EmployeeId,
    ItsmParams,
    LicenseAssignmentId,
    LicenseCatalogId,
)

# A license may be renewed from 30 days before to 14 days after it expires.
RENEWAL_OPENS_DAYS = 30
RENEWAL_GRACE_DAYS = 14
RENEWAL_TERM_DAYS = 365


class EmployeeParams(ItsmParams):
    employee_id: EmployeeId = Field(description="Employee ID, EMP followed by 6 digits")


class ApplicationParams(ItsmParams):
    application_name: str = Field(min_length=1, description="Application name as spoken")


class LicenseNameParams(ItsmParams):
    license_name: str = Field(min_length=1, description="License product name as spoken")


class AccessRequestParams(EmployeeParams):
    catalog_id: AppCatalogId = Field(description="Application catalog id, APP-NNNN")
    access_level: Literal["read_only", "standard", "admin"] = Field(description="Access level")


class LicenseRequestParams(EmployeeParams):
    catalog_id: LicenseCatalogId = Field(description="License catalog id, LIC-NNNN")
    duration_days: DurationDays = Field(None, description="30/60/90 for temporary; omit else")


class RenewalParams(EmployeeParams):
    license_assignment_id: LicenseAssignmentId = Field(description="License assignment to renew")


@itsm_tool("get_application_details", ApplicationParams)
def get_application_details(p: ApplicationParams, db: Json, call_index: int) -> Json:
    found = find_catalog_entry(db, "applications", p.application_name)
    if found is None:
        return error("not_found", f"Application '{p.application_name}' not found in catalog")
    catalog_id, application = found
    return success(catalog_id=catalog_id, application=copy.deepcopy(application))


@itsm_tool("get_license_catalog_item", LicenseNameParams)
def get_license_catalog_item(p: LicenseNameParams, db: Json, call_index: int) -> Json:
    found = find_catalog_entry(db, "licenses", p.license_name)
    if found is None:
        return error("not_found", f"License '{p.license_name}' not found in catalog")
    catalog_id, license_item = found
    return success(catalog_id=catalog_id, license=copy.deepcopy(license_item))


@itsm_tool("submit_access_request", AccessRequestParams, auth=EMPLOYEE_OTP)
def submit_access_request(p: AccessRequestParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    application = catalog_section(db, "applications").get(p.catalog_id)
    if not isinstance(application, dict):
        return error("not_found", f"Application {p.catalog_id} not found in catalog")
    levels = list(application.get("available_access_levels") or [])
    if p.access_level not in levels:
        return error(
            "invalid_access_level",
            f"{application.get('name')} does not offer '{p.access_level}' access; "
            f"available: {', '.join(levels)}",
        )
    needs_approval = bool(application.get("requires_manager_approval"))
    request: Json = {
        "request_id": None,
        "employee_id": p.employee_id,
        "catalog_id": p.catalog_id,
        "application_name": application.get("name"),
        "access_level": p.access_level,
        "status": "pending_approval" if needs_approval else "approved",
        "requires_manager_approval": needs_approval,
        "created_date": today(db).isoformat(),
    }
    request_id = f"REQ-SW-{content_hash(request)}"
    request["request_id"] = request_id
    table(db, "requests")[request_id] = request
    outcome = "pending approval" if needs_approval else "auto-approved"
    return success(
        f"{request_id} ({outcome})",
        request_id=request_id,
        application_name=application.get("name"),
        access_level=p.access_level,
        requires_approval=needs_approval,
    )


@itsm_tool("submit_license_request", LicenseRequestParams)
def submit_license_request(p: LicenseRequestParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    if not isinstance(catalog_section(db, "licenses").get(p.catalog_id), dict):
        return error("not_found", f"License {p.catalog_id} not found in catalog")
    request: Json = {
        "request_id": None,
        "employee_id": p.employee_id,
        "catalog_id": p.catalog_id,
        "status": "submitted",
        "created_date": today(db).isoformat(),
    }
    if p.duration_days is None:
        request["request_type"] = "license_request"
    else:
        request["request_type"] = "temporary_license"
        request["duration_days"] = p.duration_days
        request["expiration_date"] = plus_days(today(db), p.duration_days)
    request_id = f"REQ-SW-{content_hash(request)}"
    request["request_id"] = request_id
    table(db, "requests")[request_id] = request
    if p.duration_days is None:
        return success(
            f"License request: {request_id}",
            request_id=request_id,
            catalog_id=p.catalog_id,
            license_type="permanent",
        )
    return success(
        f"Temp license: {request_id}. Expires {request['expiration_date']}.",
        request_id=request_id,
        catalog_id=p.catalog_id,
        license_type="temporary",
        duration_days=p.duration_days,
        expiration_date=request["expiration_date"],
    )


@itsm_tool("get_employee_licenses", EmployeeParams)
def get_employee_licenses(p: EmployeeParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    licenses = copy.deepcopy(list(employee.get("software_licenses") or []))
    return success(employee_id=p.employee_id, licenses=licenses)


@itsm_tool("submit_license_renewal", RenewalParams)
def submit_license_renewal(p: RenewalParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    assignment = next(
        (
            lic
            for lic in employee.get("software_licenses") or []
            if isinstance(lic, dict) and lic.get("license_assignment_id") == p.license_assignment_id
        ),
        None,
    )
    if assignment is None:
        return error(
            "not_found",
            f"License assignment {p.license_assignment_id} not found for {p.employee_id}",
        )
    now = today(db)
    expires = parse_date(assignment.get("expiration_date")) or now
    days_left = (expires - now).days
    if days_left > RENEWAL_OPENS_DAYS or days_left < -RENEWAL_GRACE_DAYS:
        return error(
            "not_in_renewal_window",
            f"License expires {expires.isoformat()} ({days_left} days from today); renewal is "
            "allowed from 30 days before to 14 days after expiration. Submit a new license "
            "request instead.",
        )
    new_expiry = plus_days(max(expires, now), RENEWAL_TERM_DAYS)
    assignment["expiration_date"] = new_expiry
    assignment["status"] = "active"
    request: Json = {
        "request_id": None,
        "employee_id": p.employee_id,
        "license_assignment_id": p.license_assignment_id,
        "request_type": "license_renewal",
        "new_expiration_date": new_expiry,
        "status": "submitted",
        "created_date": now.isoformat(),
    }
    request_id = f"REQ-SW-{content_hash(request)}"
    request["request_id"] = request_id
    table(db, "requests")[request_id] = request
    return success(
        f"Renewed. Expires {new_expiry}. ID: {request_id}",
        request_id=request_id,
        new_expiration_date=new_expiry,
    )
