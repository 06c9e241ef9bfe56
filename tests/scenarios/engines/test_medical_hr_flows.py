"""medical_hr business rules on a synthetic DB: licenses, shifts, on-call, scheduling."""

from __future__ import annotations

import pytest

from tests.scenarios.engines.test_medical_hr_fixtures import (
    EMPLOYEE,
    ON_LEAVE,
    PROVIDER_NPI,
    SHIFT_WORKER,
    call,
    login,
    medical_db,
)

# -- licenses ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("license_number", "expected"),
    [
        ("MA-MD-100030", None),
        ("MA-MD-100060", None),  # exactly 60 days left is inside the window
        ("MA-MD-100061", "extension_too_early"),
        ("MA-MD-100099", "license_expired"),
        ("MA-MD-100077", "investigation_hold"),
        ("MA-MD-100088", "already_extended"),
        ("MA-MD-999999", "license_not_found"),
    ],
)
def test_extension_eligibility_rules(license_number: str, expected: str | None) -> None:
    db = login(medical_db(), "provider")
    response = call(
        db, "check_extension_eligibility", npi=PROVIDER_NPI, state_license_number=license_number
    )
    assert response.get("error_type") == expected
    if expected is None:
        assert response["eligible"] is True


def test_submit_extension_does_not_recheck_eligibility() -> None:
    db = login(medical_db(), "provider")
    response = call(
        db,
        "submit_license_extension",
        npi=PROVIDER_NPI,
        state_license_number="MA-MD-100061",
        extension_type="provisional",
        extension_days=90,
        supervising_physician_npi="2222222222",
    )
    stored = db["providers"][PROVIDER_NPI]["licenses"]["MA-MD-100061"]
    assert response["status"] == "success"
    assert stored["extension_status"] == "pending"
    assert stored["supervising_physician_npi"] is None  # provisional ignores the supervisor
    assert stored["extension_case_id"] == response["case_id"] == f"CASE-LIC-{EMPLOYEE[-6:]}"


@pytest.mark.parametrize(("limit", "flagged"), [(999_999, True), (1_000_000, False)])
def test_malpractice_below_one_million_needs_recredentialing(limit: int, flagged: bool) -> None:
    db = login(medical_db(), "provider")
    response = call(
        db,
        "update_malpractice_coverage",
        npi=PROVIDER_NPI,
        new_carrier="zurich",
        new_policy_number="POL-2026-ZZ0001",
        per_occurrence_limit_usd=limit,
        aggregate_limit_usd=3_000_000,
        effective_date="2026-07-01",
        expiration_date="2027-07-01",
    )
    coverage = db["providers"][PROVIDER_NPI]["malpractice"]
    assert response["recredential_required"] is flagged
    assert coverage["recredential_required"] is flagged
    assert coverage["carrier"] == "zurich"
    assert coverage["per_occurrence_limit_usd"] == limit


# -- shifts ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shift_id", "expected"),
    [
        ("SHF-20260620-0700", None),
        ("SHF-20260615-0700", None),  # today is not in the past
        ("SHF-20260622-0700", "shift_already_swapped"),
        ("SHF-20260625-0700", "shift_cancelled"),
        ("SHF-20260613-0700", "shift_in_past"),
        ("SHF-20260616-0700", "swap_locked"),
        ("SHF-20260706-0700", "shift_not_owned"),
        ("SHF-20990101-0700", "shift_not_found"),
    ],
)
def test_swap_eligibility_rules(shift_id: str, expected: str | None) -> None:
    db = login(medical_db(), "employee")
    response = call(db, "check_swap_eligibility", employee_id=EMPLOYEE, shift_id=shift_id)
    assert response.get("error_type") == expected
    if expected is None:
        assert response["required_cert_codes"] == ["ACLS", "BLS", "CCRN"]  # sorted


def test_colleague_missing_certs_are_listed_sorted() -> None:
    db = login(medical_db(), "employee")
    response = call(
        db,
        "verify_colleague_certifications",
        colleague_employee_id=SHIFT_WORKER,
        unit_code="4B-ICU",
    )
    assert response["error_type"] == "certification_missing"
    assert response["missing_certs"] == ["ACLS", "CCRN"]
    assert "['ACLS', 'CCRN']" in response["message"]


def test_confirm_swap_does_not_recheck_certifications() -> None:
    db = login(medical_db(), "employee")
    response = call(
        db,
        "confirm_shift_swap",
        employee_id=EMPLOYEE,
        shift_id="SHF-20260620-0700",
        colleague_employee_id=SHIFT_WORKER,
        unit_code="4B-ICU",
    )
    shift = db["shifts"]["SHF-20260620-0700"]
    assert response["case_id"] == f"CASE-SWP-{EMPLOYEE[-6:]}"
    assert (shift["status"], shift["swapped_to_employee_id"]) == ("swapped", SHIFT_WORKER)
    assert shift["swap_confirmation_id"] == response["case_id"]


@pytest.mark.parametrize(
    ("shift_id", "expected"),
    [
        ("SHF-20260610-0700", None),
        ("SHF-20260612-0700", "correction_already_pending"),
        ("SHF-20260601-0700", "pay_period_closed"),
        ("SHF-20260611-0700", "pay_period_closed"),  # end date passed, flag not set
        ("SHF-20260613-0700", "shift_not_logged"),
    ],
)
def test_correction_eligibility_rules(shift_id: str, expected: str | None) -> None:
    db = login(medical_db(), "employee")
    response = call(db, "check_correction_eligibility", employee_id=EMPLOYEE, shift_id=shift_id)
    assert response.get("error_type") == expected


@pytest.mark.parametrize(
    ("shift_id", "expected"),
    [("SHF-20260614-0700", "pay_period_not_set"), ("SHF-20260611-0700", "pay_period_closed")],
)
def test_payroll_submit_checks_the_pay_period_end(shift_id: str, expected: str) -> None:
    db = login(medical_db(), "employee")
    response = call(
        db,
        "submit_payroll_correction",
        employee_id=EMPLOYEE,
        shift_id=shift_id,
        correction_type="on_call_hours",
        corrected_hours=6,
    )
    assert response["error_type"] == expected


def test_payroll_submit_stores_float_hours_and_pending_status() -> None:
    db = login(medical_db(), "employee")
    response = call(
        db,
        "submit_payroll_correction",
        employee_id=EMPLOYEE,
        shift_id="SHF-20260610-0700",
        correction_type="overtime_hours",
        corrected_hours=6,
    )
    shift = db["shifts"]["SHF-20260610-0700"]
    assert isinstance(response["corrected_hours"], float)
    assert (shift["corrected_hours"], shift["correction_status"]) == (6.0, "pending")


# -- on-call -----------------------------------------------------------------------------------


def test_oncall_eligibility_blocks_leave_then_missing_certs() -> None:
    db = login(medical_db(), "employee")
    on_leave = call(db, "check_oncall_eligibility", employee_id=ON_LEAVE, unit_code="4B-ICU")
    missing = call(db, "check_oncall_eligibility", employee_id=SHIFT_WORKER, unit_code="5A-SURG")
    assert on_leave["error_type"] == "employee_on_leave"
    assert missing["missing_certs"] == ["TNCC"]


def test_oncall_blackouts_must_lie_inside_the_window() -> None:
    db = login(medical_db(), "employee")
    args = {
        "employee_id": EMPLOYEE,
        "unit_code": "4B-ICU",
        "oncall_tier": "backup",
        "availability_start_date": "2026-07-01",
        "availability_end_date": "2026-07-10",
    }
    outside = call(db, "register_oncall_availability", blackout_dates=["2026-07-11"], **args)
    assert outside["error_type"] == "blackout_outside_window"
    inside = call(db, "register_oncall_availability", blackout_dates=["2026-07-10"], **args)
    stored = db["employees"][EMPLOYEE]["oncall_schedule"]["registrations"]
    assert inside["registration_id"] == stored[0]["registration_id"] == f"CASE-ONC-{EMPLOYEE[-6:]}"
    assert stored[0]["status"] == "registered"


# -- scheduling -----------------------------------------------------------------------------


def test_no_slots_offers_up_to_three_later_dates_with_openings() -> None:
    db = login(medical_db(), "employee")
    response = call(
        db,
        "check_appointment_availability",
        department_code="CARDIOLOGY",
        appointment_type="orientation_followup",
        preferred_date="2026-06-17",
    )
    assert response["status"] == "success"
    assert response["available_slots"] == []
    assert response["alternative_dates"] == ["2026-06-18", "2026-06-19", "2026-06-22"]


def test_booking_consumes_the_slot_once() -> None:
    db = login(medical_db(), "employee")
    args = {
        "employee_id": EMPLOYEE,
        "department_code": "CARDIOLOGY",
        "appointment_datetime": "2026-06-16 09:00",
    }
    first = call(db, "schedule_orientation_followup", **args)
    second = call(db, "schedule_orientation_followup", **args)
    slots = db["appointment_availability"]["orientation_followup"]["CARDIOLOGY"]["2026-06-16"]
    assert first["appointment_id"] == f"CASE-ORI-{EMPLOYEE[-6:]}"
    assert second["error_type"] == "slot_not_available"
    assert slots == ["10:00"]
    assert len(db["employees"][EMPLOYEE]["scheduled_appointments"]) == 1


@pytest.mark.parametrize(
    ("case_id", "when", "expected"),
    [
        ("CASE-FMLA-100001", "2026-07-09 09:00", "appointment_before_leave_end"),
        ("CASE-FMLA-100001", "2026-07-10 10:00", None),
        ("CASE-FMLA-999999", "2026-07-09 09:00", None),  # unknown case: no leave-end rule
    ],
)
def test_return_to_work_must_not_precede_leave_end(
    case_id: str, when: str, expected: str | None
) -> None:
    db = login(medical_db(), "otp")
    response = call(
        db,
        "schedule_return_to_work_checkin",
        employee_id=EMPLOYEE,
        case_id=case_id,
        department_code="CARDIOLOGY",
        appointment_datetime=when,
    )
    assert response.get("error_type") == expected
    if expected is None:
        appointment = db["employees"][EMPLOYEE]["scheduled_appointments"][0]
        assert appointment["fmla_case_id"] == case_id
