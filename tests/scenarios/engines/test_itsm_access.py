"""Auth tiers, parameter validation and account/security rules of the ITSM engine (spec 2.3-2.6)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from scenarios.engines.itsm import content_hash
from tests.scenarios.engines.test_itsm_world import TODAY, call, day, make_db

CALLER, MANAGER, NEW_HIRE, DEPARTING = "EMP000001", "EMP000002", "EMP000003", "EMP000004"


# --- session tiers (spec 2.4) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "params", "session", "missing"),
    [
        ("get_employee_record", {"employee_id": CALLER}, {}, "employee_auth"),
        ("lookup_new_hire", {"new_hire_employee_id": NEW_HIRE}, {"employee_auth": True},
         "manager_auth"),
        ("get_group_memberships", {"employee_id": CALLER}, {"employee_auth": True}, "otp_auth"),
        ("submit_access_request", {"employee_id": CALLER, "catalog_id": "APP-0001",
         "access_level": "standard"}, {"otp_auth": True}, "employee_auth"),
        ("provision_new_account", {"manager_employee_id": MANAGER, "new_hire_employee_id": NEW_HIRE,
         "department_code": "ENG", "role_code": "SWE", "start_date": day(7), "access_groups": []},
         {"manager_auth": True}, "otp_auth"),
    ],
)  # fmt: skip
def test_each_tier_is_enforced(tool: str, params: dict, session: dict, missing: str) -> None:
    db = make_db()
    db["session"] = dict(session)
    response = call(db, tool, **params)
    assert response == {
        "status": "error",
        "error_type": "authentication_required",
        "message": f"Authentication ({missing.removesuffix('_auth')}) required",
    }


def test_transfer_needs_no_auth() -> None:
    db = make_db()
    db["session"] = {}
    response = call(db, "transfer_to_agent", employee_id=CALLER, transfer_reason="technical_issue",
                    issue_summary="VPN down")  # fmt: skip
    assert response["status"] == "success" and response["estimated_wait"] == "2-3 minutes"


def test_employee_verification_sets_the_session() -> None:
    db = make_db()
    db["session"] = {}
    wrong = call(db, "verify_employee_auth", employee_id=CALLER, phone_last_four="9999")
    assert wrong["error_type"] == "authentication_failed" and db["session"] == {}
    unknown = call(db, "verify_employee_auth", employee_id="EMP999999", phone_last_four="9999")
    assert unknown["error_type"] == "not_found"
    ok = call(db, "verify_employee_auth", employee_id=CALLER, phone_last_four=CALLER[-4:])
    assert ok["first_name"] == "Ada"
    assert db["session"] == {"employee_auth": True, "authenticated_employee_id": CALLER}


def test_otp_flow_and_its_quirk() -> None:
    db = make_db()
    db["session"] = {}
    otp = {"employee_id": CALLER, "otp_code": "12" + CALLER[-4:]}
    assert call(db, "initiate_otp_auth", employee_id=CALLER)["error_type"] == (
        "authentication_required"
    )
    assert call(db, "verify_otp_auth", **otp)["error_type"] == "otp_not_initiated"
    call(db, "verify_employee_auth", employee_id=CALLER, phone_last_four=CALLER[-4:])
    sent = call(db, "initiate_otp_auth", employee_id=CALLER)
    assert sent["message"] == f"OTP sent to ***{CALLER[-4:]}"
    assert db["session"]["otp_issued"] is True and db["session"]["otp_employee_id"] == CALLER
    assert call(db, "verify_otp_auth", employee_id=CALLER, otp_code="000000")["error_type"] == (
        "authentication_failed"
    )
    # Spec 12.10: the code is checked against the named employee, not the one it was sent to.
    manager_code = {"employee_id": MANAGER, "otp_code": "12" + MANAGER[-4:]}
    assert call(db, "verify_otp_auth", **manager_code)["status"] == "success"
    assert db["session"]["otp_auth"] is True
    assert "otp_issued" not in db["session"] and "otp_employee_id" not in db["session"]


def test_manager_verification() -> None:
    db = make_db()
    db["session"] = {}
    creds = {"employee_id": MANAGER, "phone_last_four": MANAGER[-4:]}
    assert call(db, "verify_manager_auth", manager_auth_code="ZZZ999", **creds)["error_type"] == (
        "authentication_failed"
    )
    db["employees"][CALLER]["manager_auth_code"] = "ABC123"
    not_manager = call(db, "verify_manager_auth", employee_id=CALLER,
                       phone_last_four=CALLER[-4:], manager_auth_code="ABC123")  # fmt: skip
    assert not_manager["error_type"] == "not_authorized"
    ok = call(db, "verify_manager_auth", manager_auth_code="MGR123", **creds)
    assert ok["direct_reports"] == [CALLER, NEW_HIRE, DEPARTING]
    assert db["session"]["manager_auth"] is True and db["session"]["employee_auth"] is True


# --- parameter validation (spec 2.3) --------------------------------------------------------


def test_format_errors_name_the_field_value_and_format() -> None:
    db = make_db()
    response = call(db, "get_employee_record", employee_id="emp12")
    assert response == {
        "status": "error",
        "error_type": "invalid_employee_id_format",
        "message": "Invalid employee_id 'emp12': must be EMP followed by 6 digits (e.g. EMP048271)",
    }
    missing = call(db, "get_request_status")
    assert missing["error_type"] == "invalid_request_id_format"
    assert missing["message"].startswith("Invalid request_id 'None': must be REQ-CAT-")


def test_validation_runs_before_the_auth_gate() -> None:
    db = make_db()
    db["session"] = {}
    response = call(db, "get_asset_record", asset_tag="AST-12")
    assert response["error_type"] == "invalid_asset_tag_format"


def test_unmapped_fields_give_invalid_parameter() -> None:
    db = make_db()
    response = call(db, "create_incident_ticket", employee_id=CALLER, category="printer",
                    urgency="high", affected_system="x", troubleshooting_completed=True)  # fmt: skip
    assert response["error_type"] == "invalid_parameter"
    assert response["message"].startswith("Invalid parameter 'category': ")


def test_mapped_field_errors_win_over_earlier_unmapped_ones() -> None:
    db = make_db()
    response = call(db, "attempt_account_unlock", target_system="mainframe", employee_id="bad")
    assert response["error_type"] == "invalid_employee_id_format"


def test_absent_optional_strings_and_extra_keys_are_ignored() -> None:
    db = make_db()
    response = call(db, "check_room_availability", building_code="BLD1", date=day(4),
                    start_time="09:00", end_time="10:00", min_capacity=2, floor_code="N/A",
                    comment="please hurry")  # fmt: skip
    assert len(response["available_rooms"]) == 2


def test_cross_field_rules_carry_a_hint() -> None:
    db = make_db()
    response = call(db, "submit_hardware_request", employee_id=CALLER,
                    request_type="laptop_replacement", justification="end_of_life",
                    current_asset_tag="AST-LPT-000001", delivery_building="BLD1",
                    delivery_floor="FL2")  # fmt: skip
    assert response["error_type"] == "invalid_parameter"
    assert "laptop_os" in response["message"] and response["message"].endswith("requests.")


@pytest.mark.parametrize("bad", [0, 51, "many"])
def test_capacity_must_be_between_1_and_50(bad: object) -> None:
    db = make_db()
    response = call(db, "check_room_availability", building_code="BLD1", date=day(1),
                    start_time="09:00", end_time="10:00", min_capacity=bad)  # fmt: skip
    assert response["error_type"] == "invalid_capacity"


# --- accounts -------------------------------------------------------------------------------


def provision(db: dict, groups: list[str], **overrides: str) -> dict:
    params = {"manager_employee_id": MANAGER, "new_hire_employee_id": NEW_HIRE,
              "department_code": "ENG", "role_code": "SWE", "start_date": day(7),
              "access_groups": groups} | overrides  # fmt: skip
    return call(db, "provision_new_account", **params)


def test_new_hire_lookup_and_existing_accounts() -> None:
    db = make_db()
    assert call(db, "lookup_new_hire", new_hire_employee_id=NEW_HIRE)["employee"]["start_date"] == (
        day(7)
    )
    assert call(db, "lookup_new_hire", new_hire_employee_id=CALLER)["error_type"] == "not_new_hire"
    assert call(db, "check_existing_accounts", employee_id=NEW_HIRE)["existing_accounts"] == []
    db["employees"][NEW_HIRE]["system_accounts"] = [{"status": "active"}, {"status": "disabled"}]
    exists = call(db, "check_existing_accounts", employee_id=NEW_HIRE)
    assert exists == {"status": "error", "error_type": "accounts_already_exist",
                      "message": "1 active account(s)"}  # fmt: skip


def test_provisioning_rules_and_email_collisions() -> None:
    db = make_db()
    assert provision(db, ["GRP-FIN"])["error_type"] == "group_not_eligible"
    assert provision(db, ["GRP-CORE"], new_hire_employee_id=CALLER)["status"] == "success"
    db = make_db()
    db["employees"][CALLER]["email"] = "alan.turing@company.com"
    response = provision(db, ["GRP-CORE", "GRP-DB"])
    assert response["email"] == "alan.turing2@company.com"
    hire = db["employees"][NEW_HIRE]
    assert hire["employment_status"] == "active"
    assert response["case_id"] == "CASE-ACCT-" + content_hash(hire["system_accounts"][0])
    db["employees"][MANAGER]["direct_reports"] = []
    assert provision(db, ["GRP-CORE"])["error_type"] == "not_direct_report"


def test_group_membership_changes() -> None:
    db = make_db()
    change = {"employee_id": CALLER}
    added = call(
        db, "submit_group_membership_change", group_code="GRP-CORE", action="add", **change
    )
    assert added["requires_approval"] is False
    assert db["employees"][CALLER]["group_memberships"][-1]["status"] == "active"
    assert call(db, "submit_group_membership_change", group_code="GRP-CORE", action="add",
                **change)["error_type"] == "already_member"  # fmt: skip
    pending = call(db, "submit_group_membership_change", group_code="GRP-DB", action="add",
                   **change)  # fmt: skip
    request = db["requests"][pending["request_id"]]
    assert request["case_id"] == pending["case_id"] and request["status"] == "pending_approval"
    entry = db["employees"][CALLER]["group_memberships"][-1]
    assert pending["case_id"] == "CASE-ACCT-" + content_hash(entry)
    assert call(db, "submit_group_membership_change", group_code="GRP-FIN", action="add",
                **change)["error_type"] == "group_not_eligible"  # fmt: skip
    removed = call(db, "submit_group_membership_change", group_code="GRP-CORE", action="remove",
                   **change)  # fmt: skip
    assert removed["status"] == "success"
    assert call(db, "submit_group_membership_change", group_code="GRP-CORE", action="remove",
                **change)["error_type"] == "not_member"  # fmt: skip


def approve_role_change(db: dict, effective: str) -> None:
    db["employees"][CALLER]["pending_role_approval"] = {
        "approved_by_hr": True, "new_role_code": "MGR", "effective_date": effective,
        "hr_case_id": "HR-1"}  # fmt: skip


def test_role_change_needs_hr_approval_matching_role_and_date() -> None:
    db = make_db()
    change = {
        "employee_id": CALLER,
        "new_role_code": "MGR",
        "permission_template_id": "PTPL-MGR-01",
    }
    assert (
        call(db, "check_role_change_authorized", employee_id=CALLER, new_role_code="MGR")[
            "error_type"
        ]
        == "not_authorized"
    )
    approve_role_change(db, day(20))
    assert (
        call(db, "check_role_change_authorized", employee_id=CALLER, new_role_code="SWE")[
            "error_type"
        ]
        == "role_mismatch"
    )
    assert (
        call(db, "submit_permission_change", effective_date=day(21), **change)["error_type"]
        == "effective_date_mismatch"
    )
    wrong_template = dict(change, permission_template_id="PTPL-SWE-01")
    assert (
        call(db, "submit_permission_change", effective_date=day(20), **wrong_template)["error_type"]
        == "template_role_mismatch"
    )
    approve_role_change(db, day(-1))
    assert (
        call(db, "submit_permission_change", effective_date=day(-1), **change)["error_type"]
        == "invalid_effective_date"
    )


@pytest.mark.parametrize(("shift", "ok"), [(0, True), (3, True), (-3, True), (4, False)])
def test_access_review_is_90_days_after_the_change(shift: int, ok: bool) -> None:
    db = make_db()
    approve_role_change(db, day(20))
    submitted = call(db, "submit_permission_change", employee_id=CALLER, new_role_code="MGR",
                     permission_template_id="PTPL-MGR-01", effective_date=day(20))  # fmt: skip
    case_id = submitted["case_id"]
    assert case_id == "CASE-ACCT-" + content_hash(db["employees"][CALLER]["pending_role_change"])
    review = call(db, "schedule_access_review", case_id=case_id, employee_id=CALLER,
                  review_date=day(20 + 90 + shift))  # fmt: skip
    if ok:
        assert review["review_id"] == f"ARVW-{case_id[-6:]}"
    else:
        assert review["error_type"] == "invalid_review_date"


def test_access_review_needs_a_pending_change() -> None:
    db = make_db()
    review = call(db, "schedule_access_review", case_id="CASE-ACCT-0123456789ab",
                  employee_id=CALLER, review_date=day(90))  # fmt: skip
    assert review["error_type"] == "no_pending_change"


# --- off-boarding and security --------------------------------------------------------------


def remove_access(db: dict, scope: str, last_day: str | None = None) -> dict:
    return call(db, "submit_access_removal", manager_employee_id=MANAGER,
                departing_employee_id=DEPARTING, last_working_day=last_day or day(10),
                removal_scope=scope)  # fmt: skip


def test_access_removal_rules() -> None:
    db = make_db()
    assert remove_access(db, "full", day(-1))["error_type"] == "date_in_past"
    db["employees"][DEPARTING]["offboarding_record"]["status"] = None
    assert remove_access(db, "full")["error_type"] == "no_offboarding_record"
    db = make_db()
    response = remove_access(db, "staged")
    departing = db["employees"][DEPARTING]
    record = departing["offboarding_record"]
    assert response["case_id"] == record["removal_case_id"] == "CASE-ACCT-" + content_hash(record)
    assert departing["employment_status"] == "terminated" and departing["group_memberships"] == []
    assert departing["email_preserved_until"] == (TODAY + timedelta(days=40)).isoformat()
    recovery = call(db, "initiate_asset_recovery", departing_employee_id=DEPARTING,
                    case_id=response["case_id"], recovery_method="drop_off")  # fmt: skip
    assert recovery["recovery_id"] == f"RECV-{response['case_id'][-6:]}"
    assert [a["asset_tag"] for a in recovery["assets_to_recover"]] == ["AST-LPT-000004"]


def test_security_incident_and_remote_wipe() -> None:
    db = make_db()
    not_mine = call(db, "report_security_incident", employee_id=CALLER, asset_tag="AST-LPT-000004",
                    incident_type="lost")  # fmt: skip
    assert not_mine["error_type"] == "asset_not_assigned"
    case = call(db, "report_security_incident", employee_id=CALLER, asset_tag="AST-LPT-000001",
                incident_type="stolen")  # fmt: skip
    case_id = case["security_case_id"]
    assert case_id == "SEC-" + content_hash(db["security_cases"][case_id])
    assert db["assets"]["AST-LPT-000001"]["lifecycle_status"] == "lost_or_stolen"
    mismatch = call(
        db, "initiate_remote_wipe", asset_tag="AST-MON-000001", security_case_id=case_id
    )
    assert mismatch["error_type"] == "asset_mismatch"
    wipe = call(db, "initiate_remote_wipe", asset_tag="AST-LPT-000001", security_case_id=case_id)
    assert wipe["wipe_id"] == "WIPE-000001" and db["assets"]["AST-LPT-000001"]["status"] == "wiped"
    assert db["security_cases"][case_id]["remote_wipe_id"] == "WIPE-000001"


def test_mfa_reset_stores_a_case_but_answers_with_an_error() -> None:
    db = make_db()
    response = call(db, "submit_mfa_reset", employee_id=CALLER, new_phone_last_four="4321")
    assert response["status"] == "error" and response["error_type"] == "in_person_required"
    stored = db["security_cases"][response["security_case_id"]]
    assert (stored["incident_type"], stored["status"]) == (
        "mfa_reset_request",
        "requires_in_person",
    )
