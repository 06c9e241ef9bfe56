"""Conference-room tools (spec 2.6): availability search, booking and the calendar invite."""

from __future__ import annotations

from pydantic import Field, model_validator

from scenarios.engines.itsm.common import (
    Json,
    content_hash,
    error,
    find_employee,
    is_error,
    itsm_tool,
    resolve_place,
    sub_table,
    success,
    table,
    today,
)
from scenarios.engines.itsm.fields import (
    Capacity,
    ClockTime,
    EmployeeId,
    IsoDate,
    ItsmParams,
    OptionalFloorCode,
    PlaceName,
    RequestId,
    RoomCode,
)


class TimeSlotParams(ItsmParams):
    date: IsoDate = Field(description="Meeting date YYYY-MM-DD")
    start_time: ClockTime = Field(description="Start time HH:MM (24-hour)")
    end_time: ClockTime = Field(description="End time HH:MM (24-hour)")

    @model_validator(mode="after")
    def _ends_after_start(self) -> TimeSlotParams:
        if self.end_time <= self.start_time:
            raise ValueError("end_time must be after start_time")
        return self


class RoomSearchParams(TimeSlotParams):
    building_code: PlaceName = Field(description="Building code or name/alias")
    min_capacity: Capacity = Field(description="Seats needed, 1-50")
    floor_code: OptionalFloorCode = Field(None, description="Floor; omit for all floors")
    equipment_required: list[str] | None = Field(None, description="Equipment the room must have")


class RoomBookingParams(TimeSlotParams):
    employee_id: EmployeeId = Field(description="Organizer")
    room_code: RoomCode = Field(description="Room to book, BLDn-FLn-RMnnn")
    attendee_count: Capacity = Field(description="Expected attendees, 1-50")


class CalendarInviteParams(TimeSlotParams):
    request_id: RequestId = Field(description="Room booking request ID")
    employee_id: EmployeeId = Field(description="Organizer")
    room_code: RoomCode = Field(description="Booked room")


def _conflicts(room: Json, day: str, start: str, end: str) -> bool:
    """Bookings overlap unless one ends before (or exactly when) the other starts."""
    return any(
        isinstance(b, dict)
        and b.get("date") == day
        and not (end <= str(b.get("start_time")) or start >= str(b.get("end_time")))
        for b in room.get("bookings") or []
    )


def _rooms(db: Json) -> Json:
    return sub_table(sub_table(db, "facilities"), "conference_rooms")


def _fits(room: Json, p: RoomSearchParams, building: str) -> bool:
    equipment = set(room.get("equipment") or [])
    return (
        room.get("building_code") == building
        and (p.floor_code is None or room.get("floor_code") == p.floor_code)
        and (room.get("capacity") or 0) >= p.min_capacity
        and set(p.equipment_required or []) <= equipment
        and not _conflicts(room, p.date, p.start_time, p.end_time)
    )


@itsm_tool("check_room_availability", RoomSearchParams)
def check_room_availability(p: RoomSearchParams, db: Json, call_index: int) -> Json:
    building = resolve_place(db, p.building_code, "building")
    if isinstance(building, dict):
        return building
    rooms = [
        {
            "room_code": code,
            "floor_code": room.get("floor_code"),
            "capacity": room.get("capacity"),
            "equipment": list(room.get("equipment") or []),
        }
        for code, room in _rooms(db).items()
        if isinstance(room, dict) and _fits(room, p, building)
    ]
    return success(f"{len(rooms)} room(s)", available_rooms=rooms)


@itsm_tool("submit_room_booking", RoomBookingParams)
def submit_room_booking(p: RoomBookingParams, db: Json, call_index: int) -> Json:
    employee = find_employee(db, p.employee_id)
    if is_error(employee):
        return employee
    room = _rooms(db).get(p.room_code)
    if not isinstance(room, dict):
        return error("not_found", f"Room {p.room_code} not found")
    capacity = room.get("capacity") or 0
    if p.attendee_count > capacity:
        return error(
            "over_capacity",
            f"Room {p.room_code} seats {capacity}; {p.attendee_count} attendees requested",
        )
    if _conflicts(room, p.date, p.start_time, p.end_time):
        return error(
            "room_conflict",
            f"Room {p.room_code} is already booked on {p.date} between "
            f"{p.start_time} and {p.end_time}",
        )
    booking: Json = {
        "booking_id": None,
        "date": p.date,
        "start_time": p.start_time,
        "end_time": p.end_time,
        "employee_id": p.employee_id,
        "attendee_count": p.attendee_count,
    }
    request_id = f"REQ-FAC-{content_hash(booking)}"
    booking["booking_id"] = request_id
    bookings = room.get("bookings")
    if not isinstance(bookings, list):
        bookings = []
        room["bookings"] = bookings
    bookings.append(booking)
    return success(
        f"Booked {p.room_code}. ID: {request_id}",
        request_id=request_id,
        room_code=p.room_code,
        date=p.date,
        start_time=p.start_time,
        end_time=p.end_time,
    )


@itsm_tool("send_calendar_invite", CalendarInviteParams)
def send_calendar_invite(p: CalendarInviteParams, db: Json, call_index: int) -> Json:
    event_id = f"CAL-{p.request_id[-6:]}"
    table(db, "calendar_events")[event_id] = {
        "calendar_event_id": event_id,
        "request_id": p.request_id,
        "employee_id": p.employee_id,
        "room_code": p.room_code,
        "date": p.date,
        "start_time": p.start_time,
        "end_time": p.end_time,
        "created_date": today(db).isoformat(),
    }
    return success(
        f"Calendar invite sent. Event: {event_id}",
        calendar_event_id=event_id,
        room_code=p.room_code,
        date=p.date,
    )
