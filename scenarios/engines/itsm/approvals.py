"""Approval workflow of stored requests (spec 2.6): routing, status and SLA escalation."""

from __future__ import annotations

from pydantic import Field

from scenarios.engines.itsm.common import (
    Json,
    deadline_48h,
    error,
    find_employee,
    find_request,
    full_name,
    is_error,
    itsm_tool,
    parse_date,
    success,
    today,
)
from scenarios.engines.itsm.fields import EmployeeId, ItsmParams, RequestId


class RequestParams(ItsmParams):
    request_id: RequestId = Field(description="Request ID, REQ-CAT-<12-char hash>")


class RouteApprovalParams(RequestParams):
    employee_id: EmployeeId = Field(description="Employee who made the request")
    approver_employee_id: EmployeeId = Field(description="Manager who should approve")


class EscalateParams(RequestParams):
    escalate_to_employee_id: EmployeeId = Field(description="Skip-level approver")


def _sla_breached(db: Json, deadline: object) -> bool:
    day = parse_date(deadline) if deadline else None
    return day is not None and today(db) > day


@itsm_tool("route_approval_workflow", RouteApprovalParams)
def route_approval_workflow(p: RouteApprovalParams, db: Json, call_index: int) -> Json:
    request = find_request(db, p.request_id)
    if is_error(request):
        return request
    approver = find_employee(db, p.approver_employee_id)
    if is_error(approver):
        return approver
    deadline = deadline_48h(db)
    request["approval_routed_to"] = p.approver_employee_id
    request["approval_sla_deadline"] = deadline
    name = full_name(approver)
    return success(
        f"Routed to {name}. 48h window.",
        request_id=p.request_id,
        approver_name=name,
        approval_deadline=deadline,
    )


@itsm_tool("get_request_status", RequestParams)
def get_request_status(p: RequestParams, db: Json, call_index: int) -> Json:
    request = find_request(db, p.request_id)
    if is_error(request):
        return request
    deadline = request.get("approval_sla_deadline")
    return success(
        f"Request {p.request_id} is {request.get('status')}",
        request_id=p.request_id,
        request_status=request.get("status"),
        approval_routed_to=request.get("approval_routed_to"),
        approval_sla_deadline=deadline,
        sla_breached=_sla_breached(db, deadline),
        created_date=request.get("created_date"),
    )


@itsm_tool("escalate_approval", EscalateParams)
def escalate_approval(p: EscalateParams, db: Json, call_index: int) -> Json:
    request = find_request(db, p.request_id)
    if is_error(request):
        return request
    deadline = request.get("approval_sla_deadline")
    if not deadline:
        return error("no_pending_approval", f"Request {p.request_id} has no pending approval")
    if not _sla_breached(db, deadline):
        return error(
            "sla_not_breached",
            f"Approval SLA for {p.request_id} is not breached (deadline {deadline})",
        )
    approver = find_employee(db, p.escalate_to_employee_id)
    if is_error(approver):
        return approver
    new_deadline = deadline_48h(db)
    request["escalated_to"] = p.escalate_to_employee_id
    request["escalation_sla_deadline"] = new_deadline
    request["status"] = "escalated"
    name = full_name(approver)
    return success(
        f"Escalated to {name}. New 48h window.",
        request_id=p.request_id,
        escalated_to=p.escalate_to_employee_id,
        escalated_to_name=name,
        escalation_deadline=new_deadline,
    )
