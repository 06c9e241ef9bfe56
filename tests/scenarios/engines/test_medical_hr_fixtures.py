"""A small synthetic medical_hr DB (no reference data) and call helpers for rule tests.

"Today" is Monday 2026-06-15. The DB is built to hit each rule's edge: licenses 30/60/61
days from expiry, an expired one, one on hold, one already extended; shifts swapped,
cancelled, past, locked, unlogged, closed; a shift-schedule employee; blackouts; etc.
"""

from __future__ import annotations

from typing import Any

from scenarios.engines.medical_hr import TOOLS

TODAY = "2026-06-15"
PROVIDER_NPI = "1111111111"
SUPERVISOR_NPI = "2222222222"
NO_EMPLOYEE_NPI = "3333333333"
EMPLOYEE = "EMP100001"
SHIFT_WORKER = "EMP200002"
ON_LEAVE = "EMP300003"

TIER_FLAGS = {
    "employee": {"employee_auth": True, "authenticated_employee_id": EMPLOYEE},
    "provider": {"provider_auth": True, "authenticated_npi": PROVIDER_NPI},
    "otp": {"otp_issued": True, "otp_employee_id": EMPLOYEE, "otp_auth": True},
}


def _license(number: str, expires: str, **overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "state_license_number": number,
        "license_type": "MD",
        "state_code": "MA",
        "expiration_date": expires,
        "status": "active",
        "investigation_hold": False,
        "extension_status": None,
        "extension_type": None,
        "extension_days": None,
        "supervising_physician_npi": None,
        "extension_case_id": None,
    }
    return {**base, **overrides}


def _provider(npi: str, employee_id: str | None, **overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "npi": npi,
        "employee_id": employee_id,
        "first_name": "Ada",
        "last_name": "Lovelace",
        "facility_code": "MGH-04B",
        "pin": "1234",
        "phone_last_four": "4821",
        "otp_code": "111111",
        "role_code": "MD",
        "department_code": "CARDIOLOGY",
        "hire_date": "2019-08-12",
        "ehr_access_status": "suspended",
        "ehr_access_case_id": None,
        "clearance_code": None,
        "licenses": {},
        "malpractice": {},
        "dea_registration": None,
        "privileges": {"privilege_list": [], "reactivation_case_id": None},
        "scheduled_appointments": [],
    }
    return {**base, **overrides}


def _employee(employee_id: str, **overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "employee_id": employee_id,
        "first_name": "Grace",
        "last_name": "Hopper",
        "date_of_birth": "1980-01-01",
        "phone_last_four": "4821",
        "otp_code": "111111",
        "department_code": "CARDIOLOGY",
        "role_code": "RN",
        "unit_code": "4B-ICU",
        "hire_date": "2020-01-06",
        "employment_status": "active",
        "certifications": ["ACLS", "BLS", "CCRN"],
        "fmla_eligibility": {
            "eligible": True,
            "months_employed": 60,
            "hours_worked_past_year": 1800,
            "fmla_weeks_remaining": 12,
            "reason": None,
        },
        "onboarding_checklist": {"tasks": {}},
        "oncall_schedule": {"registrations": []},
        "scheduled_appointments": [],
        "i9_record": None,
        "visa_record": None,
        "leave_records": [],
        "pto_balances": {"pto": 10.0, "sick": 2.0},
        "pto_requests": [],
    }
    return {**base, **overrides}


def _shift(shift_id: str, owner: str = EMPLOYEE, **overrides: Any) -> dict[str, Any]:
    day = f"{shift_id[4:8]}-{shift_id[8:10]}-{shift_id[10:12]}"
    base: dict[str, Any] = {
        "shift_id": shift_id,
        "employee_id": owner,
        "unit_code": "4B-ICU",
        "date": day,
        "start_time": f"{shift_id[13:15]}:{shift_id[15:17]}",
        "end_time": "19:00",
        "hours_scheduled": 12.0,
        "hours_logged": None,
        "status": "scheduled",
        "swap_locked": False,
        "pay_period_closed": False,
        "pay_period_end_date": "2026-06-27",
        "corrected_hours": None,
        "correction_type": None,
        "correction_case_id": None,
        "correction_status": None,
        "swapped_to_employee_id": None,
        "swap_confirmation_id": None,
    }
    return {**base, **overrides}


def _providers() -> dict[str, Any]:
    main = _provider(
        PROVIDER_NPI,
        EMPLOYEE,
        clearance_code="CLR-OCC-100001",
        licenses={
            "MA-MD-100030": _license("MA-MD-100030", "2026-07-15"),
            "MA-MD-100060": _license("MA-MD-100060", "2026-08-14"),
            "MA-MD-100061": _license("MA-MD-100061", "2026-08-15"),
            "MA-MD-100099": _license("MA-MD-100099", "2026-06-14"),
            "MA-MD-100077": _license("MA-MD-100077", "2026-07-01", investigation_hold=True),
            "MA-MD-100088": _license("MA-MD-100088", "2026-07-01", extension_status="pending"),
        },
        malpractice={"carrier": "coverys", "per_occurrence_limit_usd": 1000000},
        dea_registration={
            "dea_number": "BK1234567",
            "facility_code": "MGH-04B",
            "state_code": "MA",
            "status": "active",
        },
        privileges={
            "privilege_list": [
                {"code": "PRV-CARD-001", "status": "suspended"},
                {"code": "PRV-ICU-002", "status": "suspended"},
                {"code": "PRV-ER-003", "status": "active"},
            ],
            "reactivation_case_id": None,
        },
    )
    return {
        PROVIDER_NPI: main,
        SUPERVISOR_NPI: _provider(SUPERVISOR_NPI, "EMP100002"),
        NO_EMPLOYEE_NPI: _provider(NO_EMPLOYEE_NPI, None),
    }


def _employees() -> dict[str, Any]:
    main = _employee(
        EMPLOYEE,
        onboarding_checklist={
            "tasks": {
                "HIPAA_TRAIN": {"completion_code": "H7P2", "status": "pending"},
                "BADGE_PICKUP": {"completion_code": "BD11", "status": "complete"},
                "TB_TEST": {"completion_code": "T4B9", "status": "pending"},
            }
        },
        visa_record={"petition_number": "WAC2512045678", "dependents": [], "amendment_id": None},
        leave_records=[{"case_id": "CASE-FMLA-100001", "leave_end_date": "2026-07-10"}],
        pto_requests=[
            {
                "case_id": "CASE-PTO-100001",
                "start_date": "2026-07-20",
                "end_date": "2026-07-21",
                "status": "pending",
            },
        ],
    )
    shift_worker = _employee(
        SHIFT_WORKER,
        schedule_type="shift",
        department_code="SURGERY",
        unit_code="5A-SURG",
        certifications=["BLS"],
        onboarding_checklist=None,
        fmla_eligibility={
            "eligible": False,
            "months_employed": 8,
            "hours_worked_past_year": 900,
            "reason": "Employed for less than 12 months.",
        },
    )
    return {
        EMPLOYEE: main,
        SHIFT_WORKER: shift_worker,
        ON_LEAVE: _employee(ON_LEAVE, employment_status="on_leave"),
    }


def _shifts() -> dict[str, Any]:
    rows = [
        _shift("SHF-20260620-0700"),
        _shift("SHF-20260615-0700"),
        _shift("SHF-20260616-0700", swap_locked=True),
        _shift("SHF-20260622-0700", status="swapped"),
        _shift("SHF-20260625-0700", status="cancelled"),
        _shift("SHF-20260614-0700", status="logged", hours_logged=8.0, pay_period_end_date=None),
        _shift("SHF-20260610-0700", status="logged", hours_logged=8.0),
        _shift("SHF-20260612-0700", status="logged", correction_status="pending"),
        _shift("SHF-20260613-0700"),
        _shift(
            "SHF-20260601-0700",
            status="logged",
            pay_period_closed=True,
            pay_period_end_date="2026-06-06",
        ),
        _shift("SHF-20260611-0700", status="logged", pay_period_end_date="2026-06-13"),
        _shift("SHF-20260706-0700", SHIFT_WORKER),
        _shift("SHF-20260708-1900", SHIFT_WORKER),
        _shift("SHF-20260711-0700", SHIFT_WORKER),
        _shift("SHF-20260707-0700"),
    ]
    return {row["shift_id"]: row for row in rows}


def medical_db() -> dict[str, Any]:
    """A fresh synthetic DB (tests mutate it freely)."""
    return {
        "_current_date": TODAY,
        "unit_cert_requirements": {"4B-ICU": ["BLS", "ACLS", "CCRN"], "5A-SURG": ["TNCC", "BLS"]},
        "providers": _providers(),
        "employees": _employees(),
        "shifts": _shifts(),
        "notifications": [],
        "session": {},
        "appointment_availability": {
            "orientation_followup": {
                "CARDIOLOGY": {
                    "2026-06-16": ["09:00", "10:00"],
                    "2026-06-17": [],
                    "2026-06-18": ["11:00"],
                    "2026-06-19": ["09:00"],
                    "2026-06-22": ["14:00"],
                    "2026-06-23": ["15:00"],
                }
            },
            "return_to_work_checkin": {
                "CARDIOLOGY": {"2026-07-09": ["09:00"], "2026-07-10": ["10:00"]}
            },
            "competency_review": {"CARDIOLOGY": {"2026-06-16": ["08:00"]}},
        },
        "org_holidays": ["2026-07-03"],
        "department_blackout_dates": {"CARDIOLOGY": ["2026-07-08"], "SURGERY": ["2026-07-06"]},
    }


def login(db: dict[str, Any], *tiers: str) -> dict[str, Any]:
    """Set the session flags of ``tiers`` (employee, provider, otp) directly."""
    for tier in tiers:
        db["session"].update(TIER_FLAGS[tier])
    return db


def call(db: dict[str, Any], tool: str, **params: Any) -> dict[str, Any]:
    """Run ``tool`` directly (no executor) as the first call of that tool."""
    return TOOLS[tool](params, db, 1)
