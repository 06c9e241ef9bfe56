"""Incident tools (spec 2.6): troubleshooting, unlocks/resets, tickets, SLAs, outages, dispatch."""

from __future__ import annotations

import copy
from typing import Literal

from pydantic import Field

from scenarios.engines.itsm.common import (
    Json,
    content_hash,
    error,
    find_employee,
    find_ticket,
    is_error,
    itsm_tool,
    resolve_place,
    sub_table,
    success,
    table,
    today,
)
from scenarios.engines.itsm.fields import (
    DiagnosticRef,
    EmployeeId,
    FloorCode,
    IsoDate,
    ItsmParams,
    PlaceName,
    TicketNumber,
)

IssueCategory = Literal["login_issue", "network_connectivity", "hardware_malfunction"]
TargetSystem = Literal[
    "active_directory", "sso_identity", "email_exchange", "vpn_gateway", "erp_oracle"
]
ServiceName = Literal[
    "email_exchange",
    "vpn_gateway",
    "erp_oracle",
    "crm_platform",
    "hr_portal",
    "code_repository",
    "ci_cd_pipeline",
    "file_storage",
    "sso_identity",
    "print_service",
]

URGENCY_TIER = {"high": "tier_1", "medium": "tier_2", "low": "tier_3"}
TIER_HOURS = {"tier_1": (1, 4), "tier_2": (4, 8), "tier_3": (8, 24)}
SECURITY_HOLDS = frozenset({"security_investigation", "admin_hold"})
NEEDS_TROUBLESHOOTING = frozenset({"login_issue", "network_connectivity"})
DISPATCH_WINDOWS = ("morning", "afternoon", "full_day")
MAX_ALTERNATIVES = 3


class GuideParams(ItsmParams):
    issue_category: IssueCategory = Field(description="Category whose guide is wanted")


class AccountParams(ItsmParams):
    employee_id: EmployeeId = Field(description="Employee whose account is affected")
    target_system: TargetSystem = Field(description="System holding the account")


class CreateTicketParams(ItsmParams):
    employee_id: EmployeeId = Field(description="Employee affected by the incident")
    category: Literal[
        "login_issue", "service_outage", "hardware_malfunction", "network_connectivity"
    ] = Field(description="Incident category")
    urgency: Literal["low", "medium", "high"] = Field(description="Business-impact urgency")
    affected_system: str = Field(description="System identifier or asset tag")
    troubleshooting_completed: bool = Field(description="Whether troubleshooting was done")


class AssignSlaParams(ItsmParams):
    ticket_number: TicketNumber = Field(description="Incident ticket number")
    sla_tier: Literal["tier_1", "tier_2", "tier_3"] = Field(description="SLA tier")


class OutageParams(ItsmParams):
    service_name: ServiceName = Field(description="Service from the service catalog")


class AffectedUserParams(ItsmParams):
    ticket_number: TicketNumber = Field(description="Existing outage ticket")
    employee_id: EmployeeId = Field(description="Employee reporting the same outage")


class KnownErrorParams(ItsmParams):
    ticket_number: TicketNumber = Field(description="Ticket to link")
    service_name: ServiceName = Field(description="Service to search known errors for")


class DispatchParams(ItsmParams):
    ticket_number: TicketNumber = Field(description="Incident ticket number")
    employee_id: EmployeeId = Field(description="Employee requesting the dispatch")
    building_code: PlaceName = Field(description="Building code or name/alias")
    floor_code: FloorCode = Field(description="Floor code, e.g. FL2")
    preferred_date: IsoDate = Field(description="Preferred date YYYY-MM-DD")
    time_window: Literal["morning", "afternoon", "full_day"] = Field(description="Time window")


class DiagnosticParams(ItsmParams):
    ticket_number: TicketNumber = Field(description="Incident ticket number")
    diagnostic_ref_code: DiagnosticRef = Field(description="Code from netdiag, DIAG-XXXXXXXX")


class MarkResolvedParams(ItsmParams):
    employee_id: EmployeeId = Field(description="Caller's employee ID")
    flow_id: IssueCategory = Field(description="Kind of issue that was resolved")
    resolution_type: Literal["resolved_via_troubleshooting", "transferred"] = Field(
        description="How the issue was resolved"
    )


@itsm_tool("get_troubleshooting_guide", GuideParams)
def get_troubleshooting_guide(p: GuideParams, db: Json, call_index: int) -> Json:
    guide = sub_table(db, "troubleshooting_guides").get(p.issue_category)
    if not isinstance(guide, dict):
        return error("guide_not_found", f"No troubleshooting guide for {p.issue_category}")
    steps = list(guide.get("steps") or [])
    return success(f"{len(steps)} steps", issue_category=p.issue_category, steps=steps)


def _account(db: Json, employee_id: str, system: str) -> Json:
    employee = find_employee(db, employee_id)
    if is_error(employee):
        return employee
    account = sub_table(employee, "account_status").get(system)
    if not isinstance(account, dict):
        return error("no_account", f"No {system} account on file for {employee_id}")
    return account


@itsm_tool("attempt_account_unlock", AccountParams)
def attempt_account_unlock(p: AccountParams, db: Json, call_index: int) -> Json:
    account = _account(db, p.employee_id, p.target_system)
    if is_error(account):
        return account
    if not account.get("locked"):
        return error("not_locked", f"Account on {p.target_system} is not locked")
    reason = account.get("lock_reason")
    if reason in SECURITY_HOLDS:
        return error(
            "cannot_unlock_security_hold",
            f"Account on {p.target_system} is under {str(reason).replace('_', ' ')}. "
            "This cannot be unlocked from the service desk. Offer to transfer the caller "
            "to a live agent; security will contact them separately.",
            lock_reason=reason,
        )
    account["locked"] = False
    account["lock_reason"] = None
    return success(
        f"Account unlocked on {p.target_system}",
        employee_id=p.employee_id,
        target_system=p.target_system,
        resolved=True,
    )


@itsm_tool("attempt_password_reset", AccountParams)
def attempt_password_reset(p: AccountParams, db: Json, call_index: int) -> Json:
    account = _account(db, p.employee_id, p.target_system)
    if is_error(account):
        return account
    if account.get("requires_in_person_reset"):
        return error(
            "in_person_required",
            f"Password reset on {p.target_system} requires an in-person visit to IT security",
        )
    account["password_expired"] = False
    account["temp_password_issued"] = True
    return success(
        "Temporary password sent to phone on file. Caller must change on first login.",
        employee_id=p.employee_id,
        target_system=p.target_system,
        resolved=True,
    )


@itsm_tool("create_incident_ticket", CreateTicketParams)
def create_incident_ticket(p: CreateTicketParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    if p.category in NEEDS_TROUBLESHOOTING and not p.troubleshooting_completed:
        return error(
            "troubleshooting_required",
            f"Troubleshooting must be completed before creating a {p.category} ticket",
        )
    ticket: Json = {
        "ticket_number": None,
        "employee_id": p.employee_id,
        "category": p.category,
        "urgency": p.urgency,
        "affected_system": p.affected_system,
        "troubleshooting_completed": p.troubleshooting_completed,
        "status": "open",
        "sla_tier": None,
        "created_date": today(db).isoformat(),
    }
    number = f"INC{content_hash(ticket)}"
    ticket["ticket_number"] = number
    table(db, "tickets")[number] = ticket
    return success(
        f"Ticket created: {number}", ticket_number=number, category=p.category, urgency=p.urgency
    )


@itsm_tool("assign_sla_tier", AssignSlaParams)
def assign_sla_tier(p: AssignSlaParams, db: Json, call_index: int) -> Json:
    ticket = find_ticket(db, p.ticket_number)
    if is_error(ticket):
        return ticket
    expected = URGENCY_TIER.get(str(ticket.get("urgency")))
    if expected != p.sla_tier:
        return error(
            "tier_urgency_mismatch",
            f"SLA {p.sla_tier} does not match urgency '{ticket.get('urgency')}' "
            f"(expected {expected})",
        )
    response_h, resolution_h = TIER_HOURS[p.sla_tier]
    ticket["sla_tier"] = p.sla_tier
    ticket["sla_response_hours"] = response_h
    ticket["sla_resolution_hours"] = resolution_h
    return success(
        f"SLA {p.sla_tier}: respond {response_h}h, resolve {resolution_h}h",
        ticket_number=p.ticket_number,
        sla_tier=p.sla_tier,
        response_target=f"{response_h}h",
        resolution_target=f"{resolution_h}h",
    )


def _by_service(entries: Json, service: str) -> Json | None:
    direct = entries.get(service)
    if isinstance(direct, dict):
        return direct
    return next(
        (e for e in entries.values() if isinstance(e, dict) and e.get("service_name") == service),
        None,
    )


@itsm_tool("check_existing_outage", OutageParams)
def check_existing_outage(p: OutageParams, db: Json, call_index: int) -> Json:
    outage = _by_service(sub_table(db, "active_outages"), p.service_name)
    if outage is None:
        return success(
            "No active outage found.", existing_outage=False, service_name=p.service_name
        )
    return success(
        f"Active outage: {outage.get('ticket_number')}",
        existing_outage=True,
        service_name=p.service_name,
        ticket_number=outage.get("ticket_number"),
        affected_user_count=outage.get("affected_user_count"),
    )


@itsm_tool("add_affected_user", AffectedUserParams)
def add_affected_user(p: AffectedUserParams, db: Json, call_index: int) -> Json:
    outages = sub_table(db, "active_outages").values()
    outage = next(
        (o for o in outages if isinstance(o, dict) and o.get("ticket_number") == p.ticket_number),
        None,
    )
    if outage is None:
        return error("ticket_not_found", f"No active outage with ticket {p.ticket_number}")
    users = outage.setdefault("affected_users", [])
    if p.employee_id not in users:
        users.append(p.employee_id)
    outage["affected_user_count"] = len(users)
    return success(
        f"Added to {p.ticket_number}",
        ticket_number=p.ticket_number,
        employee_id=p.employee_id,
        total_affected=len(users),
    )


@itsm_tool("link_known_error", KnownErrorParams)
def link_known_error(p: KnownErrorParams, db: Json, call_index: int) -> Json:
    ticket = find_ticket(db, p.ticket_number)
    if is_error(ticket):
        return ticket
    known = _by_service(sub_table(db, "known_errors"), p.service_name)
    if known is None:
        return success("No known error found.", ticket_number=p.ticket_number, linked=False)
    known_id = known.get("known_error_id")
    ticket["linked_known_error_id"] = known_id
    return success(
        f"Linked {known_id}",
        ticket_number=p.ticket_number,
        linked=True,
        known_error_id=known_id,
        workaround=known.get("workaround"),
    )


def _free_slots(calendar: Json, first_day: str) -> list[Json]:
    slots: list[Json] = []
    for day in sorted(k for k in calendar if k >= first_day and k[:1].isdigit()):
        windows = calendar[day] if isinstance(calendar[day], dict) else {}
        for window in DISPATCH_WINDOWS:
            slot = windows.get(window)
            if isinstance(slot, dict) and slot.get("available"):
                slots.append({"date": day, "time_window": window})
    return slots[:MAX_ALTERNATIVES]


@itsm_tool("schedule_field_dispatch", DispatchParams)
def schedule_field_dispatch(p: DispatchParams, db: Json, call_index: int) -> Json:
    ticket = find_ticket(db, p.ticket_number)
    if is_error(ticket):
        return ticket
    building = resolve_place(db, p.building_code, "building")
    if isinstance(building, dict):
        return building
    calendar = sub_table(db, "field_dispatch_availability")
    slot = sub_table(calendar, p.preferred_date).get(p.time_window)
    if not isinstance(slot, dict) or not slot.get("available"):
        return error(
            "no_availability",
            f"No technician available on {p.preferred_date} ({p.time_window})",
            alternatives=copy.deepcopy(_free_slots(calendar, p.preferred_date)),
        )
    slot["available"] = False
    dispatch_id = f"DSP-{p.ticket_number[-7:]}"
    ticket["dispatch_id"] = dispatch_id
    ticket["dispatch_date"] = p.preferred_date
    ticket["dispatch_window"] = p.time_window
    return success(
        f"Dispatch {dispatch_id} confirmed",
        dispatch_id=dispatch_id,
        date=p.preferred_date,
        time_window=p.time_window,
    )


@itsm_tool("attach_diagnostic_log", DiagnosticParams)
def attach_diagnostic_log(p: DiagnosticParams, db: Json, call_index: int) -> Json:
    ticket = find_ticket(db, p.ticket_number)
    if is_error(ticket):
        return ticket
    ticket["diagnostic_ref_code"] = p.diagnostic_ref_code
    ticket["diagnostic_attached"] = True
    return success(
        "Diagnostic attached",
        ticket_number=p.ticket_number,
        diagnostic_ref_code=p.diagnostic_ref_code,
    )


@itsm_tool("mark_resolved", MarkResolvedParams)
def mark_resolved(p: MarkResolvedParams, db: Json, call_index: int) -> Json:
    interactions = table(db, "interactions")
    interaction_id = f"INT-{len(interactions) + 1:06d}"
    interactions[interaction_id] = {
        "interaction_id": interaction_id,
        "employee_id": p.employee_id,
        "flow_id": p.flow_id,
        "resolution_type": p.resolution_type,
        "logged_date": today(db).isoformat(),
    }
    return success(
        f"Interaction logged: {interaction_id}",
        interaction_id=interaction_id,
        flow_id=p.flow_id,
        resolution_type=p.resolution_type,
    )
