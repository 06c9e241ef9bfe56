"""medical_hr cross-cutting rules: validation, auth tiers, IDs, notifications, contract."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import pytest
import yaml

from evaflow_core.registry import UnknownNameError
from scenarios.engines import domain_tools
from scenarios.engines.medical_hr import MEDICAL_HR_TOOLS, PARAM_MODELS, TOOLS
from scenarios.engines.medical_hr.validation import FIELD_ERROR_TYPES
from scenarios.executor import ToolEngine
from tests.scenarios.engines.test_medical_hr_fixtures import (
    EMPLOYEE,
    NO_EMPLOYEE_NPI,
    PROVIDER_NPI,
    SUPERVISOR_NPI,
    call,
    login,
    medical_db,
)

# -- parameter validation ----------------------------------------------------------------


def test_missing_required_field_maps_to_the_fields_error_type() -> None:
    response = call(medical_db(), "verify_employee_auth", date_of_birth="1980-01-01")
    assert response["status"] == "error"
    assert response["error_type"] == "invalid_employee_id_format"
    assert "employee_id" in response["message"]


def test_malformed_value_is_quoted_with_description_and_example() -> None:
    response = call(medical_db(), "get_provider_profile", npi="12345")
    assert response["error_type"] == "invalid_npi_format"
    assert response["message"].startswith("Invalid npi '12345'")
    assert "10 digits" in response["message"]


@pytest.mark.parametrize("bad", ["2026-02-30", "06/15/2026", "2026-6-1"])
def test_dates_must_be_real_iso_dates(bad: str) -> None:
    response = call(medical_db(), "verify_employee_auth", employee_id=EMPLOYEE, date_of_birth=bad)
    assert response["error_type"] == "invalid_date_format"


def test_non_ascii_digits_do_not_pass_digit_formats() -> None:
    response = call(medical_db(), "initiate_otp_auth", employee_id="EMP١٢٣٤٥٦")
    assert response["error_type"] == "invalid_employee_id_format"


def test_enum_error_lists_the_allowed_values() -> None:
    db = login(medical_db(), "employee")
    response = call(
        db,
        "check_appointment_availability",
        department_code="DERMATOLOGY",
        appointment_type="orientation_followup",
        preferred_date="2026-06-16",
    )
    assert response["error_type"] == "invalid_department_code"
    assert "CARDIOLOGY" in response["message"]


def test_unmapped_field_failure_is_invalid_parameter() -> None:
    response = call(
        medical_db(),
        "transfer_to_agent",
        employee_id=EMPLOYEE,
        transfer_reason="caller_requested",
        issue_summary=42,
    )
    assert response["error_type"] == "invalid_parameter"
    assert "issue_summary" in response["message"]


@pytest.mark.parametrize(("field", "value"), [("extension_days", 45), ("extension_days", 60.5)])
def test_extension_days_must_be_30_60_or_90(field: str, value: Any) -> None:
    db = login(medical_db(), "provider")
    response = call(
        db,
        "submit_license_extension",
        npi=PROVIDER_NPI,
        state_license_number="MA-MD-100030",
        extension_type="provisional",
        **{field: value},
    )
    assert response["error_type"] == "invalid_extension_days"


@pytest.mark.parametrize("hours", [0, -1, 24.5])
def test_corrected_hours_must_be_in_0_to_24(hours: float) -> None:
    db = login(medical_db(), "employee")
    response = call(
        db,
        "submit_payroll_correction",
        employee_id=EMPLOYEE,
        shift_id="SHF-20260610-0700",
        correction_type="overtime_hours",
        corrected_hours=hours,
    )
    assert response["error_type"] == "invalid_corrected_hours"


@pytest.mark.parametrize("absent", ["", ".", "None", "NULL", "n/a", "NA", None])
def test_optional_supervisor_placeholders_count_as_absent(absent: Any) -> None:
    db = login(medical_db(), "provider")
    response = call(
        db,
        "submit_license_extension",
        npi=PROVIDER_NPI,
        state_license_number="MA-MD-100030",
        extension_type="provisional",
        extension_days=30,
        supervising_physician_npi=absent,
    )
    assert response["status"] == "success"
    assert response["supervising_physician_npi"] is None


def test_validation_runs_before_the_auth_gate_and_extra_keys_are_ignored() -> None:
    db = medical_db()
    assert (
        call(db, "get_shift_record", employee_id="bad", shift_id="SHF-20260620-0700")["error_type"]
        == "invalid_employee_id_format"
    )
    denied = call(
        db,
        "get_shift_record",
        employee_id=EMPLOYEE,
        shift_id="SHF-20260620-0700",
        unexpected="ignored",
    )
    assert denied["error_type"] == "authentication_required"


# -- authentication tiers ----------------------------------------------------------------


def test_employee_auth_success_and_failure_leave_the_right_session() -> None:
    db = medical_db()
    failed = call(db, "verify_employee_auth", employee_id=EMPLOYEE, date_of_birth="1981-01-01")
    assert failed["error_type"] == "authentication_failed"
    assert db["session"] == {}
    ok = call(db, "verify_employee_auth", employee_id=EMPLOYEE, date_of_birth="1980-01-01")
    assert ok["status"] == "success"
    assert db["session"] == {"employee_auth": True, "authenticated_employee_id": EMPLOYEE}


def test_provider_auth_checks_facility_and_pin_and_records_employee_id() -> None:
    db = medical_db()
    wrong_pin = {"npi": PROVIDER_NPI, "facility_code": "MGH-04B", "pin": "9999"}
    assert call(db, "verify_provider_auth", **wrong_pin)["error_type"] == "authentication_failed"
    call(db, "verify_provider_auth", npi=PROVIDER_NPI, facility_code="MGH-04B", pin="1234")
    assert db["session"] == {
        "provider_auth": True,
        "authenticated_npi": PROVIDER_NPI,
        "authenticated_employee_id": EMPLOYEE,
    }


def test_otp_flow_needs_initiation_and_keeps_issued_flags() -> None:
    db = medical_db()
    early = call(db, "verify_otp_auth", employee_id=EMPLOYEE, otp_code="111111")
    assert early["error_type"] == "otp_not_initiated"
    # Initiation has no auth gate (spec 12.10).
    assert call(db, "initiate_otp_auth", employee_id=EMPLOYEE)["phone_last_four"] == "4821"
    wrong = call(db, "verify_otp_auth", employee_id=EMPLOYEE, otp_code="222222")
    assert wrong["error_type"] == "invalid_otp"
    assert "otp_auth" not in db["session"]
    call(db, "verify_otp_auth", employee_id=EMPLOYEE, otp_code="111111")
    assert db["session"]["otp_auth"] is True
    assert db["session"]["otp_issued"] is True
    assert db["session"]["otp_employee_id"] == EMPLOYEE


@pytest.mark.parametrize(
    ("tool", "args", "allowed", "denied"),
    [
        ("get_employee_record", {"employee_id": EMPLOYEE}, ["employee", "otp"], ["provider"]),
        ("get_provider_profile", {"npi": PROVIDER_NPI}, ["provider", "otp"], ["employee"]),
        ("get_malpractice_record", {"npi": PROVIDER_NPI}, ["provider"], ["employee", "otp"]),
        ("get_pto_balance", {"employee_id": EMPLOYEE}, ["employee"], ["provider", "otp"]),
        ("check_leave_eligibility", {"employee_id": EMPLOYEE}, ["otp"], ["employee", "provider"]),
    ],
)
def test_gates_accept_and_reject_the_documented_tiers(
    tool: str, args: dict[str, Any], allowed: list[str], denied: list[str]
) -> None:
    for tier in allowed:
        assert call(login(medical_db(), tier), tool, **args)["status"] == "success", tier
    for tier in denied:
        response = call(login(medical_db(), tier), tool, **args)
        assert response["error_type"] == "authentication_required", tier
    assert call(medical_db(), tool, **args)["error_type"] == "authentication_required"


def test_dea_records_need_provider_and_otp_as_second_factor() -> None:
    args = {"npi": PROVIDER_NPI, "dea_number": "BK1234567"}
    provider_only = call(login(medical_db(), "provider"), "get_dea_record", **args)
    assert provider_only["error_type"] == "second_factor_required"
    otp_only = call(login(medical_db(), "otp"), "get_dea_record", **args)
    assert otp_only["error_type"] == "authentication_required"
    both = call(login(medical_db(), "provider", "otp"), "get_dea_record", **args)
    assert both["dea_registration"]["dea_number"] == "BK1234567"


def test_transfer_needs_no_auth_and_numbers_by_call_index() -> None:
    args = {"employee_id": EMPLOYEE, "transfer_reason": "caller_requested", "issue_summary": "x"}
    first = TOOLS["transfer_to_agent"](args, medical_db(), 1)
    third = TOOLS["transfer_to_agent"](args, medical_db(), 3)
    assert first["transfer_id"] == f"TRF-{EMPLOYEE}-001"
    assert third["transfer_id"] == f"TRF-{EMPLOYEE}-003"


# -- identifiers and notifications ---------------------------------------------------------


def test_case_ids_use_last_six_of_employee_id_or_npi_fallback() -> None:
    db = login(medical_db(), "provider")
    update = {
        "new_carrier": "cna",
        "new_policy_number": "POL-2026-ABC123",
        "per_occurrence_limit_usd": 2000000,
        "aggregate_limit_usd": 4000000,
        "effective_date": "2026-07-01",
        "expiration_date": "2027-07-01",
    }
    with_employee = call(db, "update_malpractice_coverage", npi=PROVIDER_NPI, **update)
    without = call(db, "update_malpractice_coverage", npi=NO_EMPLOYEE_NPI, **update)
    assert with_employee["case_id"] == f"CASE-MAL-{EMPLOYEE[-6:]}"
    assert without["case_id"] == f"CASE-MAL-{NO_EMPLOYEE_NPI[-6:]}"


def test_identical_notifications_are_recorded_once() -> None:
    db = login(medical_db(), "provider")
    args = {
        "npi": PROVIDER_NPI,
        "case_id": "CASE-LIC-100001",
        "notification_type": "license_extension_submitted",
    }
    first = call(db, "notify_credentialing_committee", **args)
    second = call(db, "notify_credentialing_committee", **args)
    assert first == second
    assert db["notifications"] == [{"recipient": "credentialing_committee", **args}]
    call(
        db, "notify_credentialing_committee", **{**args, "notification_type": "malpractice_updated"}
    )
    assert len(db["notifications"]) == 2


def test_department_manager_notification_carries_the_department() -> None:
    db = login(medical_db(), "employee")
    call(
        db,
        "notify_department_manager",
        employee_id=EMPLOYEE,
        case_id="CASE-SWP-100001",
        notification_type="shift_swap_confirmed",
    )
    assert db["notifications"][0]["department_code"] == "CARDIOLOGY"
    assert db["notifications"][0]["recipient"] == "department_manager"


# -- registration and the agent-config contract ----------------------------------------------


def test_engine_is_registered_and_unknown_names_list_valid_ones() -> None:
    assert domain_tools("medical_hr") is TOOLS
    with pytest.raises(UnknownNameError, match="verify_employee_auth"):
        MEDICAL_HR_TOOLS.get("no_such_tool")
    engine = ToolEngine("medical_hr", medical_db())
    assert engine.execute("no_such_tool", {})["error_type"] == "tool_not_found"


def _literal_values(annotation: Any) -> list[Any]:
    return (
        list(typing.get_args(annotation)) if typing.get_origin(annotation) is typing.Literal else []
    )


def test_models_match_the_agent_yaml_parameters_and_enums(eva_root: Path) -> None:
    config = yaml.safe_load(
        (eva_root / "configs" / "agents" / "medical_hr_agent.yaml").read_text("utf-8")
    )
    assert sorted(TOOLS) == sorted(tool["id"] for tool in config["tools"])
    enums_checked = 0
    for tool in config["tools"]:
        fields = PARAM_MODELS[tool["id"]].model_fields
        required = {p["name"] for p in tool.get("required_parameters") or []}
        optional = {p["name"] for p in tool.get("optional_parameters") or []}
        assert {n for n, f in fields.items() if f.is_required()} == required, tool["id"]
        assert {n for n, f in fields.items() if not f.is_required()} == optional, tool["id"]
        for param in (tool.get("required_parameters") or []) + (
            tool.get("optional_parameters") or []
        ):
            if "enum" in param:
                assert _literal_values(fields[param["name"]].annotation) == param["enum"]
                enums_checked += 1
    assert enums_checked > 20


def test_every_constrained_field_has_an_error_type() -> None:
    for tool_id in TOOLS:
        for name in PARAM_MODELS[tool_id].model_fields:
            if name != "issue_summary":
                assert name in FIELD_ERROR_TYPES, (tool_id, name)


def test_supervised_extension_requires_a_known_supervisor() -> None:
    db = login(medical_db(), "provider")
    base = {
        "npi": PROVIDER_NPI,
        "state_license_number": "MA-MD-100030",
        "extension_type": "supervised",
        "extension_days": 60,
    }
    assert call(db, "submit_license_extension", **base)["error_type"] == (
        "supervising_physician_required"
    )
    unknown = call(db, "submit_license_extension", supervising_physician_npi="9999999999", **base)
    assert unknown["error_type"] == "supervising_physician_not_found"
    ok = call(db, "submit_license_extension", supervising_physician_npi=SUPERVISOR_NPI, **base)
    assert ok["supervising_physician_npi"] == SUPERVISOR_NPI
