"""Typed parameter models of the medical_hr tools (one per parameter shape).

Fields, required/optional split and enums follow ``medical_hr_agent.yaml``; the formats
come from :mod:`scenarios.engines.medical_hr.formats` (spec 2.3).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from scenarios.engines.medical_hr.formats import (
    AppointmentDatetime,
    AppointmentType,
    CaseId,
    ClearanceCode,
    CompletionCode,
    CountryCode,
    DeaNumber,
    Department,
    DocumentNumber,
    EmployeeId,
    FacilityCode,
    IsoDate,
    Npi,
    OtpCode,
    PersonName,
    PetitionNumber,
    Pin,
    PolicyNumber,
    PrivilegeCode,
    ShiftId,
    StateCode,
    StateLicenseNumber,
    UnitCode,
    UsdLimit,
)


class ToolParams(BaseModel):
    """Base of every parameter model: unknown keys are ignored, like the reference."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class EmployeeAuthParams(ToolParams):
    employee_id: EmployeeId
    date_of_birth: IsoDate


class ProviderAuthParams(ToolParams):
    npi: Npi
    facility_code: FacilityCode
    pin: Pin


class EmployeeParams(ToolParams):
    employee_id: EmployeeId


class OtpVerifyParams(ToolParams):
    employee_id: EmployeeId
    otp_code: OtpCode


class NpiParams(ToolParams):
    npi: Npi


class AvailabilityParams(ToolParams):
    department_code: Department = Field(description="department to check")
    appointment_type: AppointmentType = Field(description="type of appointment")
    preferred_date: IsoDate


class LicenseParams(ToolParams):
    npi: Npi
    state_license_number: StateLicenseNumber


class LicenseExtensionParams(LicenseParams):
    extension_type: Literal["provisional", "supervised"] = Field(description="extension type")
    extension_days: int = Field(description="exactly 30, 60 or 90", examples=[60])
    supervising_physician_npi: Npi | None = None

    @field_validator("extension_days")
    @classmethod
    def _allowed_duration(cls, value: int) -> int:
        if value not in (30, 60, 90):
            raise ValueError("must be exactly 30, 60 or 90")
        return value


class CredentialingNotifyParams(ToolParams):
    npi: Npi
    case_id: CaseId
    notification_type: Literal[
        "license_extension_submitted", "malpractice_updated", "privilege_reactivation"
    ] = Field(description="action being reported")


class ShiftParams(ToolParams):
    employee_id: EmployeeId
    shift_id: ShiftId


class ColleagueCertParams(ToolParams):
    colleague_employee_id: EmployeeId
    unit_code: UnitCode


class ShiftSwapParams(ShiftParams):
    colleague_employee_id: EmployeeId
    unit_code: UnitCode


class DepartmentManagerNotifyParams(ToolParams):
    employee_id: EmployeeId
    case_id: CaseId
    notification_type: Literal[
        "shift_swap_confirmed",
        "fmla_opened",
        "payroll_correction_submitted",
        "pto_request_submitted",
    ] = Field(description="action being reported")


class MalpracticeUpdateParams(ToolParams):
    npi: Npi
    new_carrier: Literal[
        "proassurance", "coverys", "the_doctors_company", "cna", "zurich", "mag_mutual"
    ] = Field(description="new carrier, lower-case")
    new_policy_number: PolicyNumber
    per_occurrence_limit_usd: UsdLimit
    aggregate_limit_usd: UsdLimit
    effective_date: IsoDate
    expiration_date: IsoDate


class OnboardingTaskParams(ToolParams):
    employee_id: EmployeeId
    task_code: Literal[
        "BLS_UPLOAD",
        "I9_VERIFY",
        "BADGE_PICKUP",
        "OCC_HEALTH",
        "HIPAA_TRAIN",
        "DRUG_SCREEN",
        "TB_TEST",
        "ORIENTATION",
    ] = Field(description="onboarding task")
    completion_code: CompletionCode


class OrientationParams(ToolParams):
    employee_id: EmployeeId
    department_code: Department = Field(description="employee's department")
    appointment_datetime: AppointmentDatetime


class DeaParams(ToolParams):
    npi: Npi
    dea_number: DeaNumber


class DeaTransferParams(DeaParams):
    new_facility_code: FacilityCode
    new_state_code: StateCode
    transfer_reason: Literal["facility_relocation", "role_change", "additional_practice_site"] = (
        Field(description="reason for the transfer")
    )
    effective_date: IsoDate


class PdmpNotifyParams(DeaParams):
    state_code: StateCode
    facility_code: FacilityCode


class FmlaCaseParams(ToolParams):
    employee_id: EmployeeId
    leave_category: Literal[
        "employee_medical_condition",
        "family_member_serious_illness",
        "bonding",
        "military_exigency",
    ] = Field(description="FMLA leave category")
    leave_start_date: IsoDate
    leave_end_date: IsoDate


class ReturnToWorkParams(ToolParams):
    employee_id: EmployeeId
    case_id: CaseId
    department_code: Department = Field(description="employee's department")
    appointment_datetime: AppointmentDatetime


class PayrollCorrectionParams(ShiftParams):
    correction_type: Literal["on_call_hours", "overtime_hours", "differential_missed"] = Field(
        description="type of correction"
    )
    corrected_hours: float = Field(
        gt=0, le=24, description="greater than 0 and at most 24", examples=[8.0]
    )


class ReactivationCheckParams(ToolParams):
    npi: Npi
    clearance_code: ClearanceCode


class CompetencyReviewParams(ToolParams):
    npi: Npi
    department_code: Department = Field(description="provider's department")
    appointment_datetime: AppointmentDatetime


class ReactivateParams(ToolParams):
    npi: Npi
    privilege_codes: list[PrivilegeCode] = Field(
        min_length=1, description="a non-empty list of PRV-CATEGORY-3digits codes"
    )
    clearance_code: ClearanceCode
    leave_type_on_record: Literal["medical_leave", "personal_leave", "fmla_leave"] = Field(
        description="type of leave on record"
    )


class EhrAccessParams(ToolParams):
    npi: Npi
    case_id: CaseId
    access_change_type: Literal["reactivate_full", "reactivate_restricted"] = Field(
        description="EHR access level"
    )


class OncallParams(ToolParams):
    employee_id: EmployeeId
    unit_code: UnitCode


class OncallRegistrationParams(OncallParams):
    availability_start_date: IsoDate
    availability_end_date: IsoDate
    oncall_tier: Literal["primary", "backup"] = Field(description="on-call tier")
    blackout_dates: list[IsoDate] = Field(description="dates in YYYY-MM-DD format, may be []")


class I9SubmitParams(ToolParams):
    employee_id: EmployeeId
    verification_action: Literal["initial_verification", "reverification"] = Field(
        description="I-9 action"
    )
    document_list_type: Literal["LIST_A", "LIST_B", "LIST_C"] = Field(description="I-9 list")
    document_type_code: Literal[
        "US_PASSPORT",
        "PERM_RESIDENT_CARD",
        "EAD",
        "DRIVERS_LICENSE",
        "STATE_ID",
        "SSN_CARD",
        "BIRTH_CERT",
    ] = Field(description="document type")
    document_number: DocumentNumber
    document_expiration_date: IsoDate
    issuing_country_code: CountryCode


class HrComplianceNotifyParams(ToolParams):
    employee_id: EmployeeId
    case_id: CaseId
    notification_type: Literal["i9_verified", "i9_reverified"] = Field(
        description="verification completed"
    )


class VisaParams(ToolParams):
    employee_id: EmployeeId
    visa_petition_number: PetitionNumber


class VisaDependentParams(VisaParams):
    dependent_first_name: PersonName
    dependent_last_name: PersonName
    relationship: Literal["spouse", "child", "domestic_partner"] = Field(
        description="relationship to the employee"
    )
    dependent_date_of_birth: IsoDate
    dependent_country_of_birth: CountryCode
    uscis_receipt_number: PetitionNumber


class ImmigrationNotifyParams(VisaParams):
    notification_type: Literal["dependent_added"] = Field(description="type of change")


class PtoParams(ToolParams):
    employee_id: EmployeeId
    pto_type: Literal["pto", "sick"] = Field(description="pto or sick")
    start_date: IsoDate
    end_date: IsoDate


class TransferParams(ToolParams):
    employee_id: EmployeeId
    transfer_reason: Literal[
        "caller_requested",
        "policy_exception_needed",
        "unable_to_resolve",
        "complaint_escalation",
        "technical_issue",
    ] = Field(description="reason for the transfer")
    issue_summary: str = Field(description="summary of the caller's request")
