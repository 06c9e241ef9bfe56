"""Business rules of the ITSM tools that the golden replay exercises little (spec 2.6).

Incidents, hardware, software and facilities on the synthetic world of ``test_itsm_world``.
"""

from __future__ import annotations

from datetime import date

import pytest

from scenarios.engines.itsm import content_hash
from scenarios.engines.itsm.common import whole_months
from tests.scenarios.engines.test_itsm_world import (
    TODAY,
    call,
    call_at,
    day,
    make_db,
    months_ago,
)

CALLER = "EMP000001"


def new_ticket(db: dict, category: str = "service_outage", urgency: str = "high") -> str:
    response = call(
        db,
        "create_incident_ticket",
        employee_id=CALLER,
        category=category,
        urgency=urgency,
        affected_system="crm_platform",
        troubleshooting_completed=True,
    )
    assert response["status"] == "success"
    return response["ticket_number"]


# --- identifiers ----------------------------------------------------------------------------


def test_content_hash_ignores_mutable_fields_and_generated_ids() -> None:
    base = {"employee_id": CALLER, "ticket_number": "INCabc", "status": "open", "note": "x"}
    later = dict(base, status="closed", sla_tier="tier_1", ticket_number=None)
    assert content_hash(base) == content_hash(later)
    assert content_hash(base) != content_hash(dict(base, note="y"))
    assert len(content_hash(base)) == 12 and int(content_hash(base), 16) >= 0


def test_ticket_number_is_the_hash_of_the_stored_ticket() -> None:
    db = make_db()
    number = new_ticket(db)
    assert number == "INC" + content_hash(db["tickets"][number])
    assert db["tickets"][number]["created_date"] == TODAY.isoformat()
    # Same content on the same day gives the same ID: the reference overwrites, not duplicates.
    assert new_ticket(db) == number and len(db["tickets"]) == 1


def test_mark_resolved_and_transfer_ids() -> None:
    db = make_db()
    first = call(db, "mark_resolved", employee_id=CALLER, flow_id="login_issue",
                 resolution_type="resolved_via_troubleshooting")  # fmt: skip
    second = call(db, "mark_resolved", employee_id=CALLER, flow_id="login_issue",
                  resolution_type="transferred")  # fmt: skip
    assert [first["interaction_id"], second["interaction_id"]] == ["INT-000001", "INT-000002"]
    transfer = call_at(db, "transfer_to_agent", 3, employee_id=CALLER,
                    transfer_reason="caller_requested", issue_summary="help")  # fmt: skip
    assert transfer["transfer_id"] == f"TRF-{CALLER}-003"


# --- incidents ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("urgency", "tier", "hours"),
    [("high", "tier_1", (1, 4)), ("medium", "tier_2", (4, 8)), ("low", "tier_3", (8, 24))],
)
def test_sla_tier_follows_urgency(urgency: str, tier: str, hours: tuple[int, int]) -> None:
    db = make_db()
    number = new_ticket(db, urgency=urgency)
    wrong = "tier_3" if tier != "tier_3" else "tier_1"
    assert call(db, "assign_sla_tier", ticket_number=number, sla_tier=wrong)["error_type"] == (
        "tier_urgency_mismatch"
    )
    ok = call(db, "assign_sla_tier", ticket_number=number, sla_tier=tier)
    assert (ok["response_target"], ok["resolution_target"]) == (f"{hours[0]}h", f"{hours[1]}h")
    stored = db["tickets"][number]
    assert (stored["sla_response_hours"], stored["sla_resolution_hours"]) == hours


@pytest.mark.parametrize("category", ["login_issue", "network_connectivity"])
def test_login_and_network_tickets_need_troubleshooting(category: str) -> None:
    db = make_db()
    response = call(db, "create_incident_ticket", employee_id=CALLER, category=category,
                    urgency="low", affected_system="vpn", troubleshooting_completed=False)  # fmt: skip
    assert response["error_type"] == "troubleshooting_required"
    assert db["tickets"] == {}


@pytest.mark.parametrize("reason", ["security_investigation", "admin_hold"])
def test_unlock_refuses_security_holds(reason: str) -> None:
    db = make_db()
    db["employees"][CALLER]["account_status"]["vpn_gateway"].update(locked=True, lock_reason=reason)
    response = call(db, "attempt_account_unlock", employee_id=CALLER, target_system="vpn_gateway")
    assert response["error_type"] == "cannot_unlock_security_hold"
    assert response["lock_reason"] == reason and reason.replace("_", " ") in response["message"]
    assert db["employees"][CALLER]["account_status"]["vpn_gateway"]["locked"] is True


def test_unlock_needs_a_locked_account() -> None:
    db = make_db()
    args = {"employee_id": CALLER}
    assert call(db, "attempt_account_unlock", target_system="vpn_gateway", **args)[
        "error_type"
    ] == ("not_locked")
    assert call(db, "attempt_account_unlock", target_system="erp_oracle", **args)["error_type"] == (
        "no_account"
    )


def test_password_reset_in_person_and_success() -> None:
    db = make_db()
    status = db["employees"][CALLER]["account_status"]["active_directory"]
    status["requires_in_person_reset"] = True
    args = {"employee_id": CALLER, "target_system": "active_directory"}
    assert call(db, "attempt_password_reset", **args)["error_type"] == "in_person_required"
    status["requires_in_person_reset"] = False
    assert call(db, "attempt_password_reset", **args)["resolved"] is True
    assert status["temp_password_issued"] is True and status["password_expired"] is False


def test_affected_users_are_deduplicated_and_counted() -> None:
    db = make_db()
    db["active_outages"]["crm_platform"] = {
        "service_name": "crm_platform",
        "ticket_number": "INC111111111111",
        "affected_users": ["EMP000002"],
        "affected_user_count": 1,
    }
    outage = call(db, "check_existing_outage", service_name="crm_platform")
    assert outage["existing_outage"] is True and outage["ticket_number"] == "INC111111111111"
    for _ in range(2):
        added = call(db, "add_affected_user", ticket_number="INC111111111111", employee_id=CALLER)
    assert added["total_affected"] == 2
    assert db["active_outages"]["crm_platform"]["affected_users"] == ["EMP000002", CALLER]
    missing = call(db, "add_affected_user", ticket_number="INC222222222222", employee_id=CALLER)
    assert missing["error_type"] == "ticket_not_found"


def test_known_error_links_or_reports_none() -> None:
    db = make_db()
    number = new_ticket(db)
    assert (
        call(db, "link_known_error", ticket_number=number, service_name="crm_platform")["linked"]
        is False
    )
    db["known_errors"]["crm_platform"] = {"known_error_id": "KE-1", "workaround": None}
    linked = call(db, "link_known_error", ticket_number=number, service_name="crm_platform")
    assert linked["linked"] is True and linked["workaround"] is None
    assert db["tickets"][number]["linked_known_error_id"] == "KE-1"


def test_field_dispatch_books_slot_or_offers_alternatives() -> None:
    db = make_db()
    number = new_ticket(db, category="hardware_malfunction")
    args = {"ticket_number": number, "employee_id": CALLER, "building_code": "hq",
            "floor_code": "FL2"}  # fmt: skip
    busy = call(db, "schedule_field_dispatch", preferred_date=day(2), time_window="morning", **args)
    assert busy["error_type"] == "no_availability"
    assert busy["alternatives"][0] == {"date": day(2), "time_window": "afternoon"}
    assert len(busy["alternatives"]) == 3
    booked = call(
        db, "schedule_field_dispatch", preferred_date=day(3), time_window="morning", **args
    )
    assert booked["dispatch_id"] == f"DSP-{number[-7:]}"
    assert db["field_dispatch_availability"][day(3)]["morning"]["available"] is False
    assert db["tickets"][number]["dispatch_window"] == "morning"


# --- hardware -------------------------------------------------------------------------------


def test_whole_months_counts_completed_months_only() -> None:
    assert whole_months(date(2022, 6, 15), date(2026, 8, 12)) == 49
    assert whole_months(date(2023, 8, 10), date(2026, 8, 10)) == 36
    assert whole_months(date(2023, 8, 11), date(2026, 8, 10)) == 35


def test_laptop_entitlement_needs_36_months() -> None:
    db = make_db()
    assets = db["assets"]
    args = {"employee_id": CALLER, "request_type": "laptop_replacement"}
    assert call(db, "check_hardware_entitlement", **args)["device_age_months"] == 40
    assets["AST-LPT-000001"]["purchase_date"] = months_ago(36)
    assert call(db, "check_hardware_entitlement", **args)["eligible"] is True
    assets["AST-LPT-000001"]["purchase_date"] = months_ago(35)
    too_new = call(db, "check_hardware_entitlement", **args)
    assert too_new["error_type"] == "device_too_new" and "35 months" in too_new["message"]


def test_monitor_entitlement_needs_12_months_and_no_pending_request() -> None:
    db = make_db()
    args = {"employee_id": CALLER, "request_type": "monitor_bundle"}
    db["assets"]["AST-MON-000001"]["purchase_date"] = months_ago(11)
    assert call(db, "check_hardware_entitlement", **args)["error_type"] == "replaced_too_recently"
    entitlement = db["employees"][CALLER]["hardware_entitlements"]["monitor_bundle"]
    entitlement["pending_request"] = True
    assert call(db, "check_hardware_entitlement", **args)["error_type"] == (
        "request_already_pending"
    )
    other = call(db, "check_hardware_entitlement", employee_id="EMP000002",
                 request_type="monitor_bundle")  # fmt: skip
    assert other["error_type"] == "no_entitlement"


def test_monitor_request_drops_laptop_fields_and_marks_entitlement() -> None:
    db = make_db()
    response = call(db, "submit_hardware_request", employee_id=CALLER, request_type="monitor_bundle",
                    justification="replacement", delivery_building="Headquarters",
                    delivery_floor="FL2", monitor_size="27_inch", laptop_os="macos")  # fmt: skip
    request = db["requests"][response["request_id"]]
    assert request["laptop_os"] is None and request["delivery_building"] == "BLD1"
    assert response["request_id"] == "REQ-HW-" + content_hash(request)
    entitlement = db["employees"][CALLER]["hardware_entitlements"]["monitor_bundle"]
    assert entitlement == {"current_asset_tag": "AST-MON-000001", "pending_request": True,
                           "pending_request_id": response["request_id"]}  # fmt: skip


def test_lost_laptop_request_needs_no_tag_but_marks_the_asset() -> None:
    db = make_db()
    args = {"employee_id": CALLER, "request_type": "laptop_replacement", "laptop_os": "windows",
            "laptop_size": "14_inch", "delivery_building": "BLD1", "delivery_floor": "FL2"}  # fmt: skip
    no_tag = call(db, "submit_hardware_request", justification="end_of_life", **args)
    assert no_tag["error_type"] == "invalid_parameter" and db["requests"] == {}
    lost = call(db, "submit_hardware_request", justification="lost_or_stolen",
                current_asset_tag="AST-LPT-000001", **args)  # fmt: skip
    assert lost["status"] == "success"
    assert db["assets"]["AST-LPT-000001"]["lifecycle_status"] == "lost_or_stolen"
    assert db["assets"]["AST-LPT-000001"]["status"] == "inactive"


def test_asset_return_deadline_is_two_weeks() -> None:
    db = make_db()
    response = call(db, "initiate_asset_return", employee_id=CALLER, asset_tag="AST-LPT-000001",
                    request_id="REQ-HW-0123456789ab")  # fmt: skip
    assert response["return_auth_id"] == "RMA-000001" and response["return_deadline"] == day(14)


def test_budget_checks() -> None:
    db = make_db()
    assert call(db, "verify_cost_center_budget", employee_id=CALLER)["has_budget"] is True
    db["cost_centers"]["CC-1000"]["has_budget"] = False
    short = call(db, "verify_cost_center_budget", employee_id=CALLER)
    assert short["error_type"] == "insufficient_budget" and short["remaining_budget_usd"] == 5000
    assert call(db, "validate_cost_center", employee_id=CALLER)["validated"] is True
    db["cost_centers"]["CC-1000"]["department_code"] = "FIN"
    assert call(db, "validate_cost_center", employee_id=CALLER)["error_type"] == (
        "department_mismatch"
    )
    db["employees"][CALLER]["cost_center_code"] = None
    assert call(db, "validate_cost_center", employee_id=CALLER)["error_type"] == "cc_not_on_file"


# --- software -------------------------------------------------------------------------------


def test_catalog_lookup_normalises_names_and_ignores_flat_catalogs() -> None:
    db = make_db()
    found = call(db, "get_application_details", application_name="  ATLASSIAN WIKI! ")
    assert found["catalog_id"] == "APP-0001"
    # Punctuation is dropped, not turned into a space, and there is no fuzzy matching.
    joined = call(db, "get_application_details", application_name="Atlassian-Wiki")
    assert joined["error_type"] == "not_found"
    assert call(db, "get_license_catalog_item", license_name="IntelliJ")["catalog_id"] == "LIC-0001"
    db["software_catalog"] = {"APP-0001": db["software_catalog"]["applications"]["APP-0001"]}
    flat = call(db, "get_application_details", application_name="Confluence")
    assert flat["error_type"] == "not_found"  # spec 12.9: flat catalogs are invisible


def test_access_request_levels_and_approval_routing() -> None:
    db = make_db()
    args = {"employee_id": CALLER}
    bad = call(db, "submit_access_request", catalog_id="APP-0002", access_level="admin", **args)
    assert bad["error_type"] == "invalid_access_level"
    auto = call(db, "submit_access_request", catalog_id="APP-0001", access_level="standard", **args)
    assert db["requests"][auto["request_id"]]["status"] == "approved"
    pending = call(db, "submit_access_request", catalog_id="APP-0002", access_level="standard",
                   **args)  # fmt: skip
    assert pending["requires_approval"] is True and "(pending approval)" in pending["message"]
    routed = call(db, "route_approval_workflow", request_id=pending["request_id"],
                  employee_id=CALLER, approver_employee_id="EMP000002")  # fmt: skip
    assert routed["approver_name"] == "Grace Hopper"
    assert routed["approval_deadline"] == f"{day(2)} 00:00"


def test_license_requests_permanent_and_temporary() -> None:
    db = make_db()
    perm = call(db, "submit_license_request", employee_id=CALLER, catalog_id="LIC-0001",
                duration_days="n/a")  # fmt: skip
    assert perm["license_type"] == "permanent"
    temp = call(db, "submit_license_request", employee_id=CALLER, catalog_id="LIC-0001",
                duration_days="60")  # fmt: skip
    assert temp["duration_days"] == 60 and temp["expiration_date"] == day(60)
    odd = call(db, "submit_license_request", employee_id=CALLER, catalog_id="LIC-0001",
               duration_days=45)  # fmt: skip
    assert odd["error_type"] == "invalid_duration"


@pytest.mark.parametrize(
    ("days_left", "allowed"), [(31, False), (30, True), (0, True), (-14, True), (-15, False)]
)
def test_license_renewal_window(days_left: int, allowed: bool) -> None:
    db = make_db()
    db["employees"][CALLER]["software_licenses"] = [
        {"license_assignment_id": "LASGN-000001", "expiration_date": day(days_left),
         "status": "expired" if days_left < 0 else "active"}
    ]  # fmt: skip
    response = call(db, "submit_license_renewal", employee_id=CALLER,
                    license_assignment_id="LASGN-000001")  # fmt: skip
    if not allowed:
        assert response["error_type"] == "not_in_renewal_window"
        return
    renewed_from = TODAY if days_left < 0 else date.fromisoformat(day(days_left))
    expected = renewed_from.replace(year=renewed_from.year + 1)  # 365 days; no leap day here
    assert response["new_expiration_date"] == expected.isoformat()
    assert db["employees"][CALLER]["software_licenses"][0]["status"] == "active"


def test_request_status_and_escalation_follow_the_sla() -> None:
    db = make_db()
    pending = call(db, "submit_access_request", employee_id=CALLER, catalog_id="APP-0002",
                   access_level="standard")  # fmt: skip
    rid = pending["request_id"]
    escalate = {"request_id": rid, "escalate_to_employee_id": "EMP000002"}
    assert call(db, "escalate_approval", **escalate)["error_type"] == "no_pending_approval"
    db["requests"][rid]["approval_sla_deadline"] = f"{TODAY.isoformat()} 00:00"
    status = call(db, "get_request_status", request_id=rid)
    assert status["request_status"] == "pending_approval" and status["sla_breached"] is False
    assert call(db, "escalate_approval", **escalate)["error_type"] == "sla_not_breached"
    db["requests"][rid]["approval_sla_deadline"] = f"{day(-1)} 00:00"
    assert call(db, "get_request_status", request_id=rid)["sla_breached"] is True
    assert call(db, "escalate_approval", **escalate)["status"] == "success"
    assert db["requests"][rid]["status"] == "escalated"
    assert db["requests"][rid]["escalation_sla_deadline"] == f"{day(2)} 00:00"
