"""A small synthetic ITSM scenario DB shared by the ITSM rule tests (no reference data).

Dates are relative to ``TODAY`` so every expectation in the tests is derived from the rule
(e.g. "36 months") rather than copied from a reference output.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from scenarios.engines.itsm import TOOLS

TODAY = date(2026, 8, 12)
FULL_SESSION = {
    "employee_auth": True,
    "authenticated_employee_id": "EMP000001",
    "manager_auth": True,
    "manager_employee_id": "EMP000002",
    "otp_auth": True,
}


def day(offset: int) -> str:
    return (TODAY + timedelta(days=offset)).isoformat()


def months_ago(months: int) -> str:
    """The date exactly ``months`` whole months before TODAY (same day of month)."""
    total = TODAY.year * 12 + TODAY.month - 1 - months
    return date(total // 12, total % 12 + 1, TODAY.day).isoformat()


def account(locked: bool = False, reason: str | None = None) -> dict[str, Any]:
    return {"locked": locked, "lock_reason": reason, "requires_in_person_reset": False}


def employee(employee_id: str, first: str, last: str, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "employee_id": employee_id,
        "first_name": first,
        "last_name": last,
        "department_code": "ENG",
        "role_code": "SWE",
        "hire_date": "2020-01-06",
        "employment_status": "active",
        "building_code": "BLD1",
        "floor_code": "FL2",
        "manager_employee_id": "EMP000002",
        "phone_last_four": employee_id[-4:],
        "otp_code": "12" + employee_id[-4:],
        "is_manager": False,
        "manager_auth_code": None,
        "direct_reports": [],
        "cost_center_code": "CC-1000",
        "account_status": {"active_directory": account(), "vpn_gateway": account()},
        "assigned_desk": None,
        "last_desk_assignment_date": None,
        "assigned_parking": None,
        "last_parking_assignment_date": None,
        "ergonomic_assessment": {"status": "not_completed", "completed_date": None},
        "hardware_entitlements": {
            "laptop_replacement": {
                "current_asset_tag": None,
                "pending_request": False,
                "pending_request_id": None,
            }
        },
        "software_licenses": [],
        "group_memberships": [],
        "offboarding_record": {"status": None, "access_removed": False},
        "pending_role_change": None,
        "system_accounts": [],
    }
    record.update(extra)
    return record


def asset(tag: str, owner: str, kind: str, purchased: str) -> dict[str, Any]:
    return {
        "asset_tag": tag,
        "asset_type": kind,
        "assigned_employee_id": owner,
        "lifecycle_status": "current",
        "model": f"Model {tag[-3:]}",
        "os": "macos" if kind == "laptop" else None,
        "size": "14-inch",
        "purchase_date": purchased,
        "status": "active",
    }


def _employees() -> dict[str, Any]:
    caller = employee("EMP000001", "Ada", "Lovelace")
    caller["hardware_entitlements"]["laptop_replacement"]["current_asset_tag"] = "AST-LPT-000001"
    caller["hardware_entitlements"]["monitor_bundle"] = {
        "current_asset_tag": "AST-MON-000001",
        "pending_request": False,
        "pending_request_id": None,
    }
    manager = employee(
        "EMP000002",
        "Grace",
        "Hopper",
        is_manager=True,
        manager_auth_code="MGR123",
        role_code="MANAGER",
        direct_reports=["EMP000001", "EMP000003", "EMP000004"],
    )
    new_hire = employee("EMP000003", "Alan", "Turing", employment_status="pending_start")
    new_hire["start_date"] = day(7)
    departing = employee("EMP000004", "Ken", "Thompson", employment_status="off_boarding")
    departing["offboarding_record"] = {
        "status": "confirmed",
        "initiated_by": "HR",
        "last_working_day": day(10),
        "access_removed": False,
        "removal_case_id": None,
        "removal_scope": None,
    }
    departing["group_memberships"] = [{"group_code": "GRP-CORE", "status": "active"}]
    return {e["employee_id"]: e for e in (caller, manager, new_hire, departing)}


def _facilities() -> dict[str, Any]:
    def desk(code: str, status: str = "available") -> dict[str, Any]:
        return {"building_code": code[:4], "floor_code": code[5:8], "zone": "north",
                "near_window": False, "status": status, "assigned_employee_id": None}  # fmt: skip

    def space(zone: str, status: str = "available") -> dict[str, Any]:
        return {"zone_code": zone, "level": "L1", "covered": True, "status": status,
                "assigned_employee_id": None}  # fmt: skip

    def room(capacity: int, equipment: list[str], bookings: list[Any]) -> dict[str, Any]:
        return {"building_code": "BLD1", "floor_code": "FL2", "capacity": capacity,
                "equipment": equipment, "bookings": bookings}  # fmt: skip

    booked = {"booking_id": "REQ-FAC-000000000000", "date": day(3), "start_time": "10:00",
              "end_time": "11:00", "employee_id": "EMP000002", "attendee_count": 2}  # fmt: skip
    return {
        "buildings": {
            "BLD1": {"building_code": "BLD1", "name": "Headquarters", "name_aliases": ["hq"]},
            "BLD2": {"name": "East Campus", "name_aliases": ["east"]},
        },
        "zones": {"PZA": {"zone_code": "PZA", "name": "Executive Garage", "name_aliases": []}},
        "desks": {"BLD1-FL2-D201": desk("BLD1-FL2-D201"), "BLD1-FL2-D202": desk("BLD1-FL2-D202", "assigned")},
        "parking": {"PZA-001": space("PZA"), "PZB-001": space("PZB")},
        "conference_rooms": {
            "BLD1-FL2-RM201": room(6, ["display", "whiteboard"], [booked]),
            "BLD1-FL2-RM202": room(12, ["projector"], []),
        },
    }  # fmt: skip


def _catalog() -> dict[str, Any]:
    return {
        "applications": {
            "APP-0001": {"name": "Confluence", "name_aliases": ["atlassian wiki"],
                         "available_access_levels": ["read_only", "standard"],
                         "requires_manager_approval": False},
            "APP-0002": {"name": "Datadog", "name_aliases": [],
                         "available_access_levels": ["standard"],
                         "requires_manager_approval": True},
        },
        "licenses": {"LIC-0001": {"name": "IntelliJ IDEA", "name_aliases": ["intellij"]}},
    }  # fmt: skip


def _groups() -> dict[str, Any]:
    return {
        "GRP-CORE": {
            "group_code": "GRP-CORE",
            "name": "Core",
            "eligible_departments": [],
            "eligible_roles": [],
            "requires_approval": False,
        },
        "GRP-DB": {
            "group_code": "GRP-DB",
            "name": "Database",
            "eligible_departments": ["ENG"],
            "eligible_roles": ["SWE"],
            "requires_approval": True,
        },
        "GRP-FIN": {
            "group_code": "GRP-FIN",
            "name": "Finance",
            "eligible_departments": ["FIN"],
            "eligible_roles": [],
            "requires_approval": False,
        },
    }


def make_db() -> dict[str, Any]:
    """A fresh synthetic ITSM DB with a fully authenticated session."""
    return {
        "_current_date": TODAY.isoformat(),
        "session": dict(FULL_SESSION),
        "employees": _employees(),
        "assets": {
            "AST-LPT-000001": asset("AST-LPT-000001", "EMP000001", "laptop", months_ago(40)),
            "AST-MON-000001": asset("AST-MON-000001", "EMP000001", "monitor", months_ago(20)),
            "AST-LPT-000004": asset("AST-LPT-000004", "EMP000004", "laptop", months_ago(20)),
        },
        "cost_centers": {
            "CC-1000": {
                "cost_center_code": "CC-1000",
                "department_code": "ENG",
                "has_budget": True,
                "remaining_budget_usd": 5000,
            },
        },
        "facilities": _facilities(),
        "software_catalog": _catalog(),
        "access_groups": _groups(),
        "permission_templates": {
            "PTPL-MGR-01": {"template_id": "PTPL-MGR-01", "role_code": "MGR", "name": "Std"},
            "PTPL-SWE-01": {"template_id": "PTPL-SWE-01", "role_code": "SWE", "name": "Eng"},
        },
        "field_dispatch_availability": {
            day(2): {"morning": {"available": False}, "afternoon": {"available": True}},
            day(3): {"morning": {"available": True}, "afternoon": {"available": True}},
        },
        "troubleshooting_guides": {"login_issue": {"steps": ["Check caps lock.", "Retry."]}},
        "active_outages": {},
        "known_errors": {},
        "tickets": {},
        "requests": {},
        "interactions": {},
        "waitlists": {},
        "calendar_events": {},
        "security_cases": {},
        "asset_recoveries": {},
    }


def call(db: dict[str, Any], tool: str, /, **params: Any) -> dict[str, Any]:
    """Run one ITSM tool directly on ``db`` (mutating it) as its first call; return the response."""
    return call_at(db, tool, 1, **params)


def call_at(db: dict[str, Any], tool: str, call_index: int, /, **params: Any) -> dict[str, Any]:
    """Run one ITSM tool as its ``call_index``-th call of the conversation."""
    return TOOLS[tool](params, db, call_index)


def test_world_references_resolve() -> None:
    """The synthetic world is self-consistent, so rule tests fail only for rule reasons."""
    db = make_db()
    employees = db["employees"]
    for record in employees.values():
        assert set(record["direct_reports"]) <= set(employees)
    for tag, item in db["assets"].items():
        assert item["asset_tag"] == tag and item["assigned_employee_id"] in employees
    assert months_ago(12) == TODAY.replace(year=TODAY.year - 1).isoformat()
