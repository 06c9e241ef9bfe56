"""medical_hr record rules on a synthetic DB: privileges, onboarding, leave, visa, I-9, PTO."""

from __future__ import annotations

import pytest

from scenarios.dbhash import db_hash
from tests.scenarios.engines.test_medical_hr_fixtures import (
    EMPLOYEE,
    PROVIDER_NPI,
    SHIFT_WORKER,
    call,
    login,
    medical_db,
)

# -- privileges ------------------------------------------------------------------------------


def test_reactivation_with_unknown_code_keeps_earlier_codes_active() -> None:
    db = login(medical_db(), "otp")
    response = call(
        db,
        "reactivate_privileges",
        npi=PROVIDER_NPI,
        privilege_codes=["PRV-CARD-001", "PRV-XYZ-999", "PRV-ICU-002"],
        clearance_code="CLR-OCC-100001",
        leave_type_on_record="medical_leave",
    )
    privileges = db["providers"][PROVIDER_NPI]["privileges"]
    statuses = {item["code"]: item["status"] for item in privileges["privilege_list"]}
    assert response["error_type"] == "privilege_not_found"
    assert statuses == {
        "PRV-CARD-001": "active",
        "PRV-ICU-002": "suspended",
        "PRV-ER-003": "active",
    }
    assert privileges["reactivation_case_id"] is None


def test_reactivation_check_returns_suspended_codes_in_record_order() -> None:
    db = login(medical_db(), "otp")
    wrong = call(
        db, "check_reactivation_eligibility", npi=PROVIDER_NPI, clearance_code="CLR-OCC-999999"
    )
    right = call(
        db, "check_reactivation_eligibility", npi=PROVIDER_NPI, clearance_code="CLR-OCC-100001"
    )
    assert wrong["error_type"] == "invalid_clearance_code"
    assert right["suspended_privilege_codes"] == ["PRV-CARD-001", "PRV-ICU-002"]


# -- onboarding, leave, visa, I-9 -------------------------------------------------------------


def test_onboarding_code_is_case_insensitive_and_tasks_complete_once() -> None:
    db = login(medical_db(), "employee")
    args = {"employee_id": EMPLOYEE, "task_code": "HIPAA_TRAIN"}
    assert call(db, "complete_onboarding_task", completion_code="XXXX", **args)["error_type"] == (
        "invalid_completion_code"
    )
    done = call(db, "complete_onboarding_task", completion_code="h7p2", **args)
    assert done["remaining_tasks"] == ["TB_TEST"]
    again = call(db, "complete_onboarding_task", completion_code="H7P2", **args)
    assert again["error_type"] == "task_already_complete"
    missing = call(
        db,
        "complete_onboarding_task",
        employee_id=EMPLOYEE,
        task_code="DRUG_SCREEN",
        completion_code="AB12",
    )
    assert missing["error_type"] == "task_not_found"


def test_missing_checklist_and_ineligible_fmla_report_reasons() -> None:
    db = login(medical_db(), "employee", "otp")
    checklist = call(db, "get_onboarding_checklist", employee_id=SHIFT_WORKER)
    leave = call(db, "check_leave_eligibility", employee_id=SHIFT_WORKER)
    assert checklist["error_type"] == "checklist_not_found"
    assert leave["error_type"] == "not_eligible"
    assert leave["message"] == db["employees"][SHIFT_WORKER]["fmla_eligibility"]["reason"]
    assert (leave["months_employed"], leave["hours_worked_past_year"]) == (8, 900)


def test_visa_petition_must_match_and_dependent_is_pending() -> None:
    db = login(medical_db(), "otp")
    dependent = {
        "dependent_first_name": "Jean-Luc",
        "dependent_last_name": "Picard",
        "relationship": "spouse",
        "dependent_date_of_birth": "1990-07-13",
        "dependent_country_of_birth": "FR",
        "uscis_receipt_number": "IOE0912345678",
    }
    wrong = call(
        db,
        "add_visa_dependent",
        employee_id=EMPLOYEE,
        visa_petition_number="WAC0000000000",
        **dependent,
    )
    assert wrong["error_type"] == "visa_record_not_found"
    ok = call(
        db,
        "add_visa_dependent",
        employee_id=EMPLOYEE,
        visa_petition_number="WAC2512045678",
        **dependent,
    )
    record = db["employees"][EMPLOYEE]["visa_record"]
    assert ok["dependent_name"] == "Jean-Luc Picard"
    assert record["amendment_id"] == ok["amendment_id"] == f"CASE-VISA-{EMPLOYEE[-6:]}"
    assert record["dependents"][0]["status"] == "pending"


def test_i9_submit_creates_a_missing_record() -> None:
    db = login(medical_db(), "employee")
    assert call(db, "get_i9_record", employee_id=EMPLOYEE)["error_type"] == "i9_record_not_found"
    call(
        db,
        "submit_i9_verification",
        employee_id=EMPLOYEE,
        verification_action="initial_verification",
        document_list_type="LIST_A",
        document_type_code="US_PASSPORT",
        document_number="A1234567",
        document_expiration_date="2030-01-01",
        issuing_country_code="US",
    )
    record = call(db, "get_i9_record", employee_id=EMPLOYEE)["i9_record"]
    assert record["verification_status"] == "verified"
    assert record["case_id"] == f"CASE-I9V-{EMPLOYEE[-6:]}"


# -- PTO ------------------------------------------------------------------------------------


def _pto(db: dict, tool: str, employee: str, start: str, end: str, kind: str = "pto") -> dict:
    return call(db, tool, employee_id=employee, pto_type=kind, start_date=start, end_date=end)


def test_standard_schedule_counts_weekdays_minus_holidays() -> None:
    db = login(medical_db(), "employee")
    # 2026-06-29 (Mon) .. 2026-07-05 (Sun) with the 2026-07-03 holiday: Mon-Thu count.
    response = _pto(db, "check_pto_eligibility", EMPLOYEE, "2026-06-29", "2026-07-05")
    assert response["working_days_in_range"] == [
        "2026-06-29",
        "2026-06-30",
        "2026-07-01",
        "2026-07-02",
    ]
    assert (response["pto_days_required"], response["remaining_after"]) == (4.0, 6.0)


def test_shift_schedule_counts_own_shift_dates_only() -> None:
    db = login(medical_db(), "employee")
    response = _pto(db, "check_pto_eligibility", SHIFT_WORKER, "2026-07-07", "2026-07-12")
    assert response["schedule_type"] == "shift"
    assert response["working_days_in_range"] == ["2026-07-08", "2026-07-11"]


@pytest.mark.parametrize(
    ("employee", "start", "end", "kind", "expected"),
    [
        (EMPLOYEE, "2026-07-06", "2026-07-10", "sick", "insufficient_pto_balance"),
        (EMPLOYEE, "2026-07-06", "2026-07-09", "pto", "blackout_date_conflict"),
        (EMPLOYEE, "2026-07-21", "2026-07-22", "pto", "pto_overlap"),
        (EMPLOYEE, "2026-07-10", "2026-07-06", "pto", "invalid_date_range"),
        (SHIFT_WORKER, "2026-07-06", "2026-07-06", "pto", "blackout_date_conflict"),
    ],
)
def test_pto_eligibility_blockers(
    employee: str, start: str, end: str, kind: str, expected: str
) -> None:
    db = login(medical_db(), "employee")
    assert _pto(db, "check_pto_eligibility", employee, start, end, kind)["error_type"] == expected


def test_pto_submit_only_rechecks_balance_and_deducts() -> None:
    db = login(medical_db(), "employee")
    # Blackout 2026-07-08 is not re-checked at submit time (spec 12.10).
    response = _pto(db, "submit_pto_request", EMPLOYEE, "2026-07-06", "2026-07-09")
    employee = db["employees"][EMPLOYEE]
    assert response["pto_days_deducted"] == 4.0
    assert employee["pto_balances"]["pto"] == response["remaining_balance"] == 6.0
    assert employee["pto_requests"][-1]["status"] == "pending"
    broke = _pto(db, "submit_pto_request", EMPLOYEE, "2026-07-13", "2026-07-24")
    assert broke["error_type"] == "insufficient_pto_balance"


def test_read_tools_never_change_the_db_hash() -> None:
    db = login(medical_db(), "employee", "provider", "otp")
    before = db_hash(db)
    call(db, "get_provider_profile", npi=PROVIDER_NPI)
    call(db, "get_license_record", npi=PROVIDER_NPI, state_license_number="MA-MD-100030")
    call(db, "get_pto_balance", employee_id=EMPLOYEE)
    call(db, "get_oncall_schedule", employee_id=EMPLOYEE, unit_code="4B-ICU")
    call(db, "get_privilege_record", npi=PROVIDER_NPI)["privileges"]["privilege_list"].clear()
    assert db_hash(db) == before
