"""Facilities rules of the ITSM engine (spec 2.6): names, desks, parking, waitlists, rooms."""

from __future__ import annotations

from datetime import timedelta

import pytest

from scenarios.engines.itsm import content_hash
from tests.scenarios.engines.test_itsm_world import TODAY, call, day, make_db

CALLER = "EMP000001"


def test_building_names_resolve_through_aliases_and_codes_pass_through() -> None:
    db = make_db()
    by_alias = call(db, "check_desk_availability", building_code="HQ", floor_code="FL2")
    assert by_alias["building_code"] == "BLD1"
    assert [d["desk_code"] for d in by_alias["available_desks"]] == ["BLD1-FL2-D201"]
    # A building entry without building_code resolves to its key.
    east = call(db, "check_desk_availability", building_code="East Campus", floor_code="FL1")
    assert east["building_code"] == "BLD2" and east["available_desks"] == []
    unknown_code = call(db, "check_desk_availability", building_code="BLD9", floor_code="FL2")
    assert unknown_code["building_code"] == "BLD9"


def test_unknown_place_names_list_the_known_ones() -> None:
    db = make_db()
    response = call(db, "check_desk_availability", building_code="Moon Base", floor_code="FL2")
    assert response["error_type"] == "name_not_found"
    assert "Headquarters" in response["message"] and "East Campus" in response["message"]
    zone = call(db, "check_parking_availability", zone_code="Lunar Lot")
    assert zone["error_type"] == "name_not_found" and "Executive Garage" in zone["message"]


def test_parking_search_by_zone_or_everywhere() -> None:
    db = make_db()
    garage = call(db, "check_parking_availability", zone_code="executive garage")
    assert garage["zone_code"] == "PZA"
    assert [s["parking_space_id"] for s in garage["available_spaces"]] == ["PZA-001"]
    everywhere = call(db, "check_parking_availability", zone_code="none")
    assert len(everywhere["available_spaces"]) == 2 and everywhere["zone_code"] is None


def test_desk_assignment_updates_desk_and_employee() -> None:
    db = make_db()
    response = call(db, "submit_desk_assignment", employee_id=CALLER, desk_code="BLD1-FL2-D201")
    desk = db["facilities"]["desks"]["BLD1-FL2-D201"]
    assert (desk["status"], desk["assigned_employee_id"]) == ("assigned", CALLER)
    caller = db["employees"][CALLER]
    assert caller["assigned_desk"] == "BLD1-FL2-D201"
    assert caller["last_desk_assignment_date"] == TODAY.isoformat()
    request = {"employee_id": CALLER, "desk_code": "BLD1-FL2-D201",
               "request_type": "desk_assignment", "created_date": TODAY.isoformat()}  # fmt: skip
    assert response["request_id"] == "REQ-FAC-" + content_hash(request)
    again = call(db, "submit_desk_assignment", employee_id=CALLER, desk_code="BLD1-FL2-D201")
    assert again["error_type"] == "already_assigned"


@pytest.mark.parametrize(
    ("tool", "field", "code", "cooldown"),
    [
        ("submit_desk_assignment", "desk_code", "BLD1-FL2-D201", 90),
        ("submit_parking_assignment", "parking_space_id", "PZA-001", 180),
    ],
)
def test_reassignment_cooldown(tool: str, field: str, code: str, cooldown: int) -> None:
    db = make_db()
    kind = "desk" if "desk" in tool else "parking"
    caller = db["employees"][CALLER]
    caller[f"last_{kind}_assignment_date"] = day(-(cooldown - 1))
    too_soon = call(db, tool, employee_id=CALLER, **{field: code})
    assert too_soon["error_type"] == "too_soon"
    assert too_soon["next_eligible_date"] == (TODAY + timedelta(days=1)).isoformat()
    caller[f"last_{kind}_assignment_date"] = day(-cooldown)
    assert call(db, tool, employee_id=CALLER, **{field: code})["status"] == "success"


def test_assignment_needs_an_available_existing_spot() -> None:
    db = make_db()
    taken = call(db, "submit_desk_assignment", employee_id=CALLER, desk_code="BLD1-FL2-D202")
    assert taken["error_type"] == "not_available"
    missing = call(db, "submit_parking_assignment", employee_id=CALLER, parking_space_id="PZC-001")
    assert missing["error_type"] == "not_found"


def test_waitlist_positions_ids_and_duplicates() -> None:
    db = make_db()
    first = call(db, "submit_waitlist", employee_id=CALLER, resource_type="parking",
                 zone_or_building="Executive Garage")  # fmt: skip
    second = call(db, "submit_waitlist", employee_id="EMP000002", resource_type="parking",
                  zone_or_building="PZA")  # fmt: skip
    assert (first["waitlist_id"], second["waitlist_id"]) == ("WL-PAR-0001", "WL-PAR-0002")
    assert second["position"] == 2
    # Spec 12.10: the raw text is stored, without alias resolution.
    assert db["waitlists"]["parking"][0]["zone_or_building"] == "Executive Garage"
    duplicate = call(db, "submit_waitlist", employee_id=CALLER, resource_type="parking",
                     zone_or_building="Executive Garage")  # fmt: skip
    assert duplicate["error_type"] == "already_waitlisted"
    desk = call(db, "submit_waitlist", employee_id=CALLER, resource_type="desk",
                zone_or_building="BLD1")  # fmt: skip
    assert desk["waitlist_id"] == "WL-DES-0001"


def test_ergonomic_assessment_must_be_completed() -> None:
    db = make_db()
    assert call(db, "check_ergonomic_assessment", employee_id=CALLER)["error_type"] == (
        "assessment_required"
    )
    db["employees"][CALLER]["ergonomic_assessment"] = {"status": "completed",
                                                       "completed_date": day(-30)}  # fmt: skip
    assert call(db, "check_ergonomic_assessment", employee_id=CALLER)["assessment_date"] == day(-30)


@pytest.mark.parametrize(
    ("start", "end", "free"),
    [("09:00", "10:00", True), ("11:00", "12:00", True), ("10:30", "11:30", False),
     ("09:30", "10:01", False)],
)  # fmt: skip
def test_room_overlap_is_exclusive_at_the_edges(start: str, end: str, free: bool) -> None:
    db = make_db()
    rooms = call(db, "check_room_availability", building_code="BLD1", date=day(3),
                 start_time=start, end_time=end, min_capacity=2)  # fmt: skip
    codes = [r["room_code"] for r in rooms["available_rooms"]]
    assert ("BLD1-FL2-RM201" in codes) is free
    assert "BLD1-FL2-RM202" in codes


def test_room_search_filters_capacity_equipment_and_floor() -> None:
    db = make_db()
    args = {"building_code": "Headquarters", "date": day(4), "start_time": "09:00",
            "end_time": "10:00"}  # fmt: skip
    big = call(db, "check_room_availability", min_capacity=8, **args)
    assert [r["room_code"] for r in big["available_rooms"]] == ["BLD1-FL2-RM202"]
    board = call(db, "check_room_availability", min_capacity=2, equipment_required=["whiteboard"],
                 **args)  # fmt: skip
    assert [r["room_code"] for r in board["available_rooms"]] == ["BLD1-FL2-RM201"]
    other_floor = call(db, "check_room_availability", min_capacity=2, floor_code="FL9", **args)
    assert other_floor["available_rooms"] == [] and other_floor["message"] == "0 room(s)"


def test_room_booking_rules_and_calendar_invite() -> None:
    db = make_db()
    args = {"employee_id": CALLER, "room_code": "BLD1-FL2-RM201", "date": day(3)}
    over = call(db, "submit_room_booking", start_time="12:00", end_time="13:00",
                attendee_count=7, **args)  # fmt: skip
    assert over["error_type"] == "over_capacity"
    clash = call(db, "submit_room_booking", start_time="10:30", end_time="11:30",
                 attendee_count=2, **args)  # fmt: skip
    assert clash["error_type"] == "room_conflict"
    booked = call(db, "submit_room_booking", start_time="12:00", end_time="13:00",
                  attendee_count=6, **args)  # fmt: skip
    booking = db["facilities"]["conference_rooms"]["BLD1-FL2-RM201"]["bookings"][-1]
    assert booked["request_id"] == booking["booking_id"] == "REQ-FAC-" + content_hash(booking)
    invite = call(db, "send_calendar_invite", request_id=booked["request_id"], start_time="12:00",
                  end_time="13:00", **args)  # fmt: skip
    event_id = f"CAL-{booked['request_id'][-6:]}"
    assert invite["calendar_event_id"] == event_id
    assert db["calendar_events"][event_id]["created_date"] == TODAY.isoformat()


def test_equipment_request_resolves_the_building() -> None:
    db = make_db()
    response = call(db, "submit_equipment_request", employee_id=CALLER, equipment_type="footrest",
                    delivery_building="hq", delivery_floor="FL2")  # fmt: skip
    assert response["delivery_building"] == "BLD1"
    assert db["requests"][response["request_id"]]["delivery_building"] == "BLD1"
