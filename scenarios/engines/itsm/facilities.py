"""Workspace tools (spec 2.6): desks, parking, waitlists, ergonomic checks and equipment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from scenarios.engines.itsm.common import (
    Json,
    content_hash,
    error,
    find_employee,
    is_error,
    itsm_tool,
    parse_date,
    plus_days,
    resolve_place,
    sub_table,
    success,
    table,
    today,
)
from scenarios.engines.itsm.fields import (
    DeskCode,
    EmployeeId,
    FloorCode,
    ItsmParams,
    OptionalPlaceName,
    ParkingSpaceId,
    PlaceName,
)


@dataclass(frozen=True)
class AssignableResource:
    """A desk or parking space: where it lives in the DB and its reassignment cooldown."""

    kind: str
    facility_table: str
    employee_field: str
    last_assigned_field: str
    id_field: str
    cooldown_days: int


DESK = AssignableResource(
    "desk", "desks", "assigned_desk", "last_desk_assignment_date", "desk_code", 90
)
PARKING = AssignableResource(
    "parking",
    "parking",
    "assigned_parking",
    "last_parking_assignment_date",
    "parking_space_id",
    180,
)


class EmployeeParams(ItsmParams):
    employee_id: EmployeeId = Field(description="Employee ID, EMP followed by 6 digits")


class DeskAvailabilityParams(ItsmParams):
    building_code: PlaceName = Field(description="Building code or name/alias")
    floor_code: FloorCode = Field(description="Floor code, e.g. FL2")


class DeskAssignmentParams(EmployeeParams):
    desk_code: DeskCode = Field(description="Desk to assign, BLDn-FLn-Dnnn")


class ParkingAvailabilityParams(ItsmParams):
    zone_code: OptionalPlaceName = Field(None, description="Zone code or name; omit for all")


class ParkingAssignmentParams(EmployeeParams):
    parking_space_id: ParkingSpaceId = Field(description="Space to assign, PZX-NNN")


class WaitlistParams(EmployeeParams):
    resource_type: Literal["desk", "parking"] = Field(description="Which waitlist")
    zone_or_building: str = Field(min_length=1, description="Building or zone, stored as given")


class EquipmentParams(EmployeeParams):
    equipment_type: Literal[
        "standing_desk_converter",
        "ergonomic_chair",
        "ergonomic_keyboard",
        "monitor_arm",
        "footrest",
    ] = Field(description="Item requested")
    delivery_building: PlaceName = Field(description="Building code or name/alias")
    delivery_floor: FloorCode = Field(description="Delivery floor, e.g. FL2")


@itsm_tool("check_desk_availability", DeskAvailabilityParams)
def check_desk_availability(p: DeskAvailabilityParams, db: Json, call_index: int) -> Json:
    building = resolve_place(db, p.building_code, "building")
    if isinstance(building, dict):
        return building
    desks = [
        {"desk_code": code, "zone": desk.get("zone"), "near_window": desk.get("near_window")}
        for code, desk in sub_table(sub_table(db, "facilities"), "desks").items()
        if isinstance(desk, dict)
        and desk.get("building_code") == building
        and desk.get("floor_code") == p.floor_code
        and desk.get("status") == "available"
    ]
    return success(f"{len(desks)} desk(s)", building_code=building, available_desks=desks)


@itsm_tool("check_parking_availability", ParkingAvailabilityParams)
def check_parking_availability(p: ParkingAvailabilityParams, db: Json, call_index: int) -> Json:
    zone: str | None = None
    if p.zone_code is not None:
        resolved = resolve_place(db, p.zone_code, "zone")
        if isinstance(resolved, dict):
            return resolved
        zone = resolved
    spaces = [
        {
            "parking_space_id": space_id,
            "zone_code": space.get("zone_code"),
            "level": space.get("level"),
            "covered": space.get("covered"),
        }
        for space_id, space in sub_table(sub_table(db, "facilities"), "parking").items()
        if isinstance(space, dict)
        and space.get("status") == "available"
        and (zone is None or space.get("zone_code") == zone)
    ]
    return success(f"{len(spaces)} space(s)", zone_code=zone, available_spaces=spaces)


def _assign(db: Json, resource: AssignableResource, employee_id: str, code: str) -> Json:
    """Shared desk/parking assignment rules; returns the reference's response."""
    employee = find_employee(db, employee_id)
    if is_error(employee):
        return employee
    current = employee.get(resource.employee_field)
    if current:
        return error(
            "already_assigned",
            f"{employee_id} already has {resource.kind} {current}; release it first",
        )
    now = today(db)
    last = parse_date(employee.get(resource.last_assigned_field) or "")
    if last is not None and (now - last).days < resource.cooldown_days:
        eligible = plus_days(last, resource.cooldown_days)
        return error(
            "too_soon",
            f"{resource.kind.capitalize()} reassignment is limited to once per "
            f"{resource.cooldown_days} days; next eligible date is {eligible}",
            next_eligible_date=eligible,
        )
    spot = sub_table(sub_table(db, "facilities"), resource.facility_table).get(code)
    if not isinstance(spot, dict):
        return error("not_found", f"{resource.kind.capitalize()} {code} not found")
    if spot.get("status") != "available":
        return error("not_available", f"{resource.kind.capitalize()} {code} is not available")
    spot["status"] = "assigned"
    spot["assigned_employee_id"] = employee_id
    employee[resource.employee_field] = code
    employee[resource.last_assigned_field] = now.isoformat()
    # The request is not stored; only its content hash identifies it.
    request = {
        "employee_id": employee_id,
        resource.id_field: code,
        "request_type": f"{resource.kind}_assignment",
        "status": "assigned",
        "created_date": now.isoformat(),
    }
    request_id = f"REQ-FAC-{content_hash(request)}"
    return success(f"Assigned {code}", **{resource.id_field: code}, request_id=request_id)


@itsm_tool("submit_desk_assignment", DeskAssignmentParams)
def submit_desk_assignment(p: DeskAssignmentParams, db: Json, call_index: int) -> Json:
    return _assign(db, DESK, p.employee_id, p.desk_code)


@itsm_tool("submit_parking_assignment", ParkingAssignmentParams)
def submit_parking_assignment(p: ParkingAssignmentParams, db: Json, call_index: int) -> Json:
    return _assign(db, PARKING, p.employee_id, p.parking_space_id)


@itsm_tool("submit_waitlist", WaitlistParams)
def submit_waitlist(p: WaitlistParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    waitlists = table(db, "waitlists")
    entries = waitlists.get(p.resource_type)
    if not isinstance(entries, list):
        entries = []
        waitlists[p.resource_type] = entries
    # Reference quirk (spec 12.10): the raw text is stored, without alias resolution.
    if any(
        isinstance(e, dict)
        and e.get("employee_id") == p.employee_id
        and e.get("zone_or_building") == p.zone_or_building
        for e in entries
    ):
        return error(
            "already_waitlisted",
            f"{p.employee_id} is already on the {p.resource_type} waitlist for "
            f"{p.zone_or_building}",
        )
    position = len(entries) + 1
    waitlist_id = f"WL-{p.resource_type[:3].upper()}-{position:04d}"
    entries.append(
        {
            "waitlist_id": waitlist_id,
            "employee_id": p.employee_id,
            "resource_type": p.resource_type,
            "zone_or_building": p.zone_or_building,
            "position": position,
            "added_date": today(db).isoformat(),
        }
    )
    return success(
        f"Placed on {p.resource_type} waitlist at position {position}",
        waitlist_id=waitlist_id,
        resource_type=p.resource_type,
        zone_or_building=p.zone_or_building,
        position=position,
    )


@itsm_tool("check_ergonomic_assessment", EmployeeParams)
def check_ergonomic_assessment(p: EmployeeParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    assessment = sub_table(employee, "ergonomic_assessment")
    if assessment.get("status") != "completed":
        return error(
            "assessment_required",
            f"No completed ergonomic assessment on file for {p.employee_id}",
        )
    return success(
        "Assessment on file",
        employee_id=p.employee_id,
        assessment_date=assessment.get("completed_date"),
    )


@itsm_tool("submit_equipment_request", EquipmentParams)
def submit_equipment_request(p: EquipmentParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    building = resolve_place(db, p.delivery_building, "building")
    if isinstance(building, dict):
        return building
    # The ergonomic-assessment prerequisite is policy only; the tool does not enforce it.
    request: Json = {
        "request_id": None,
        "employee_id": p.employee_id,
        "equipment_type": p.equipment_type,
        "delivery_building": building,
        "delivery_floor": p.delivery_floor,
        "status": "submitted",
        "created_date": today(db).isoformat(),
    }
    request_id = f"REQ-FAC-{content_hash(request)}"
    request["request_id"] = request_id
    table(db, "requests")[request_id] = request
    return success(
        f"Equipment request: {request_id}",
        request_id=request_id,
        equipment_type=p.equipment_type,
        delivery_building=building,
    )
