"""Provider credentialing tools: profile, license extensions, malpractice coverage."""

from __future__ import annotations

import datetime as dt
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
    today,
)
from scenarios.engines.medical_hr.params import (
    CredentialingNotifyParams,
    LicenseExtensionParams,
    LicenseParams,
    MalpracticeUpdateParams,
    NpiParams,
)

EXTENSION_WINDOW_DAYS = 60
MIN_PER_OCCURRENCE_USD = 1_000_000
PROFILE_FIELDS = (
    "npi",
    "employee_id",
    "first_name",
    "last_name",
    "facility_code",
    "role_code",
    "department_code",
    "hire_date",
)


@medical_tool("get_provider_profile", NpiParams, Gate.PROVIDER_OR_OTP)
def get_provider_profile(p: NpiParams, db: Db, call_index: int) -> Response:
    provider = find_provider(db, p.npi)
    if provider is None:
        return provider_not_found(p.npi)
    return success(provider={field: snapshot(provider.get(field)) for field in PROFILE_FIELDS})


def _find_license(
    db: Db, npi: str, license_number: str
) -> tuple[dict[str, Any], dict[str, Any], None] | tuple[None, None, Response]:
    provider = find_provider(db, npi)
    if provider is None:
        return None, None, provider_not_found(npi)
    license_ = (provider.get("licenses") or {}).get(license_number)
    if not isinstance(license_, dict):
        return (
            None,
            None,
            error("license_not_found", f"License {license_number} not found for NPI {npi}"),
        )
    return provider, license_, None


@medical_tool("get_license_record", LicenseParams, Gate.PROVIDER)
def get_license_record(p: LicenseParams, db: Db, call_index: int) -> Response:
    _, license_, failed = _find_license(db, p.npi, p.state_license_number)
    if failed is not None:
        return failed
    assert license_ is not None
    return success(license=snapshot(license_))


def extension_blocker(license_: dict[str, Any], current_date: str) -> Response | None:
    """Why a license cannot be extended today, checked in the reference's order."""
    if license_.get("extension_status") == "pending":
        return error("already_extended", "An extension request is already pending for this license")
    if license_.get("investigation_hold"):
        return error(
            "investigation_hold", "License is under an investigation hold and cannot be extended"
        )
    expiration = str(license_.get("expiration_date") or "")
    if license_.get("status") == "expired" or expiration < current_date:
        return error("license_expired", f"License expired on {expiration} and cannot be extended")
    days_left = (dt.date.fromisoformat(expiration) - dt.date.fromisoformat(current_date)).days
    if days_left > EXTENSION_WINDOW_DAYS:
        return error(
            "extension_too_early",
            f"License expires in {days_left} days; extensions can only be requested within "
            f"{EXTENSION_WINDOW_DAYS} days of expiration",
            days_until_expiration=days_left,
        )
    return None


@medical_tool("check_extension_eligibility", LicenseParams, Gate.PROVIDER)
def check_extension_eligibility(p: LicenseParams, db: Db, call_index: int) -> Response:
    _, license_, failed = _find_license(db, p.npi, p.state_license_number)
    if failed is not None:
        return failed
    assert license_ is not None
    blocked = extension_blocker(license_, today(db))
    if blocked is not None:
        return blocked
    return success(
        eligible=True,
        license_expiration_date=license_.get("expiration_date"),
        message="License is eligible for extension",
    )


@medical_tool("submit_license_extension", LicenseExtensionParams, Gate.PROVIDER)
def submit_license_extension(p: LicenseExtensionParams, db: Db, call_index: int) -> Response:
    # Eligibility is deliberately not re-checked here (spec 12.10).
    provider, license_, failed = _find_license(db, p.npi, p.state_license_number)
    if failed is not None:
        return failed
    assert provider is not None and license_ is not None
    supervisor = p.supervising_physician_npi if p.extension_type == "supervised" else None
    if p.extension_type == "supervised":
        if supervisor is None:
            return error(
                "supervising_physician_required",
                "A supervising physician NPI is required for a supervised extension",
            )
        if find_provider(db, supervisor) is None:
            return error(
                "supervising_physician_not_found",
                f"Supervising physician NPI {supervisor} not found in the provider directory",
            )
    new_case = provider_case_id("LIC", provider)
    license_.update(
        extension_status="pending",
        extension_type=p.extension_type,
        extension_days=p.extension_days,
        supervising_physician_npi=supervisor,
        extension_case_id=new_case,
    )
    return success(
        npi=p.npi,
        state_license_number=p.state_license_number,
        extension_type=p.extension_type,
        extension_days=p.extension_days,
        supervising_physician_npi=supervisor,
        case_id=new_case,
        message=f"{p.extension_type} extension submitted. Case ID: {new_case}",
    )


@medical_tool("notify_credentialing_committee", CredentialingNotifyParams, Gate.PROVIDER_OR_OTP)
def notify_credentialing_committee(
    p: CredentialingNotifyParams, db: Db, call_index: int
) -> Response:
    add_notification(
        db,
        {
            "recipient": "credentialing_committee",
            "npi": p.npi,
            "case_id": p.case_id,
            "notification_type": p.notification_type,
        },
    )
    return success(
        npi=p.npi,
        case_id=p.case_id,
        notification_type=p.notification_type,
        message=f"Credentialing committee notified: {p.notification_type}",
    )


@medical_tool("get_malpractice_record", NpiParams, Gate.PROVIDER)
def get_malpractice_record(p: NpiParams, db: Db, call_index: int) -> Response:
    provider = find_provider(db, p.npi)
    if provider is None:
        return provider_not_found(p.npi)
    coverage = provider.get("malpractice")
    if not coverage:
        return error("record_not_found", f"No malpractice record found for NPI {p.npi}")
    return success(malpractice=snapshot(coverage))


@medical_tool("update_malpractice_coverage", MalpracticeUpdateParams, Gate.PROVIDER)
def update_malpractice_coverage(p: MalpracticeUpdateParams, db: Db, call_index: int) -> Response:
    provider = find_provider(db, p.npi)
    if provider is None:
        return provider_not_found(p.npi)
    coverage = provider.get("malpractice")
    if not isinstance(coverage, dict):
        coverage = provider["malpractice"] = {}
    recredential = p.per_occurrence_limit_usd < MIN_PER_OCCURRENCE_USD
    new_case = provider_case_id("MAL", provider)
    coverage.update(
        carrier=p.new_carrier,
        policy_number=p.new_policy_number,
        per_occurrence_limit_usd=p.per_occurrence_limit_usd,
        aggregate_limit_usd=p.aggregate_limit_usd,
        effective_date=p.effective_date,
        expiration_date=p.expiration_date,
        recredential_required=recredential,
        update_case_id=new_case,
    )
    message = "Malpractice coverage updated successfully"
    if recredential:
        message += (
            f". Per-occurrence limit is below ${MIN_PER_OCCURRENCE_USD:,}: "
            f"flagged for re-credentialing review. Case ID: {new_case}"
        )
    return success(
        npi=p.npi,
        new_carrier=p.new_carrier,
        new_policy_number=p.new_policy_number,
        per_occurrence_limit_usd=p.per_occurrence_limit_usd,
        aggregate_limit_usd=p.aggregate_limit_usd,
        effective_date=p.effective_date,
        expiration_date=p.expiration_date,
        recredential_required=recredential,
        case_id=new_case,
        message=message,
    )
