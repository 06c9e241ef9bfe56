"""ITSM workspace workflows: desks, parking spaces and meeting rooms."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from scenarios.generate.conversation import Conversation
from scenarios.generate.flowkit import CLOSING_QUESTION, FlowContext, goodbye, pick
from scenarios.generate.itsm_talk import (
    identity_info,
    new_draft,
    open_call,
    start_world,
    verify,
    verify_negotiation,
)
from scenarios.generate.itsm_world import BUILDINGS, ZONES, ItsmWorld, floor_code, next_workday
from scenarios.generate.record import Draft, Goal
from scenarios.generate.spoken import number, ordinal, spell, spoken_date, spoken_time


def colleagues(world: Any, record: dict[str, Any]) -> list[str]:
    return [e for e in world.db["employees"] if e != record["employee_id"]]


def desk_words(code: str) -> str:
    return spell(code.split("-")[-1])


def _desk_goal(building: str, info: dict[str, Any]) -> Goal:
    return Goal(
        summary=f"You need a desk on your floor of {building}, ideally by a window.",
        must_have=["You get a desk on your floor, or a place on the waitlist if none is free."],
        nice_to_have=["A desk near a window."],
        negotiation=[
            verify_negotiation(0),
            "Choose a window desk if one is offered; otherwise agree to the waitlist.",
        ],  # fmt: skip
        resolution="The agent confirms the desk or the waitlist position. Say goodbye and end "
        "the call.",
        failure="If the agent offers neither, say goodbye and end the call.",
        information=info,
    )


def _offer_desk(convo: Conversation, world: ItsmWorld, first: str, emp: str) -> None:
    """A free desk (the window one), or the waitlist when the floor is full."""
    building, floor = BUILDINGS[world.building], world.floor
    listed = convo.call("check_desk_availability", building_code=world.building,
                        floor_code=floor_code(floor))["available_desks"]  # fmt: skip
    if not listed:
        convo.agent(
            f"Thank you, {first}. There are no free desks on the {ordinal(floor)} floor of "
            f"{building} right now. I can put you on the desk waitlist for {building}. Would you "
            "like that?"
        )
        convo.user("Yes, please put me on the waitlist.")
        entry = convo.call("submit_waitlist", employee_id=emp, resource_type="desk",
                           zone_or_building=world.building)  # fmt: skip
        convo.agent(
            f"You're on the desk waitlist at position {number(entry['position'])}; we'll contact "
            f"you when a desk frees up. {CLOSING_QUESTION}"
        )
        return
    window = next(d for d in listed if d["near_window"])
    spots = ", ".join(
        desk_words(d["desk_code"]) + (" by a window" if d["near_window"] else "") for d in listed
    )
    convo.agent(
        f"Thank you, {first}. On the {ordinal(floor)} floor of {building} these desks are free: "
        f"{spots}. Which one would you like?"
    )
    convo.user(f"The window desk, {desk_words(window['desk_code'])}, please.")
    convo.call("submit_desk_assignment", employee_id=emp, desk_code=window["desk_code"])
    convo.agent(
        f"Desk {desk_words(window['desk_code'])} is now assigned to you. {CLOSING_QUESTION}"
    )


def desk_assignment(ctx: FlowContext, none_free: bool) -> Draft:
    """A desk on the caller's floor, or a place on the waitlist when none is free."""
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    record, _manager = world.team(caller)
    record["last_desk_assignment_date"] = (
        world.today - timedelta(days=rng.randint(120, 700))
    ).isoformat()
    world.desks(0 if none_free else rng.randint(2, 3), colleagues(world, record))
    building, floor = BUILDINGS[world.building], world.floor
    if none_free:
        other = colleagues(world, record)[0]
        world.db["waitlists"]["desk"] = [{
            "waitlist_id": "WL-DES-0001", "employee_id": other, "resource_type": "desk",
            "zone_or_building": world.building, "position": 1,
            "added_date": (world.today - timedelta(days=9)).isoformat(),
        }]  # fmt: skip
    opening = pick(rng, "Hi, I moved to a new team and I need a desk assigned.",
                   "Hello, I don't have a desk yet on my floor. Can you assign me one?")  # fmt: skip
    convo = open_call(ctx, world, opening, "Sure, I can help with a desk.")
    info = identity_info(record)
    verify(ctx, world, convo, record, info)
    emp = record["employee_id"]
    convo.call("get_employee_record", employee_id=emp)
    _offer_desk(convo, world, caller.first, emp)
    convo.user(goodbye(rng))
    goal = _desk_goal(building, info)
    return new_draft(
        ctx, world, caller, record, convo, "desk_assignment",
        "no_availability" if none_free else "success", goal, opening,
        premise=f"{caller.first} joined a team on floor {floor} of {building} without a desk.",
        intent="desk assignment", satisfiable=not none_free,
    )  # fmt: skip


def _parking_goal(info: dict[str, Any]) -> Goal:
    return Goal(
        summary="You want a parking space assigned at the office, preferably covered.",
        must_have=["A parking space is assigned to you, if policy allows it."],
        nice_to_have=["A covered space."],
        negotiation=[
            verify_negotiation(0),
            "Accept the covered space the agent offers.",
            "If the agent says policy does not allow a change yet, accept it.",
        ],
        resolution="The agent confirms the space, or explains when you become eligible. Say "
        "goodbye and end the call.",
        failure="If no space can be assigned, say goodbye and end the call.",
        information=info,
    )


def parking_assignment(ctx: FlowContext, too_soon: bool) -> Draft:
    """A parking space; refused when the caller changed spaces within 180 days."""
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    record, _manager = world.team(caller)
    days_ago = rng.randint(30, 150) if too_soon else rng.randint(200, 900)
    last = world.today - timedelta(days=days_ago)
    record["last_parking_assignment_date"] = last.isoformat()
    world.parking(3)
    opening = "Hi, I've started driving to the office and I'd like a parking space assigned."
    convo = open_call(ctx, world, opening, "I can help with parking.")
    info = identity_info(record)
    verify(ctx, world, convo, record, info)
    emp = record["employee_id"]
    spaces = convo.call("check_parking_availability")["available_spaces"]
    chosen = next((s for s in spaces if s["covered"]), spaces[0])
    zone = ZONES[chosen["zone_code"]]
    convo.agent(
        f"Thank you, {caller.first}. There are {number(len(spaces))} open spaces. The closest "
        f"covered one is {spell(chosen['parking_space_id'])} in the {zone}. Would you like that "
        "one?"
    )
    convo.user(f"Yes, {spell(chosen['parking_space_id'])} in the {zone} is perfect.")
    emp_space = {"employee_id": emp, "parking_space_id": chosen["parking_space_id"]}
    if too_soon:
        refused = convo.call("submit_parking_assignment", "too_soon", **emp_space)
        convo.agent(
            "I'm sorry, I can't assign it. A parking space can only change once every one "
            f"hundred eighty days, and your last change was on {spoken_date(last.isoformat())}. "
            f"You'll be eligible again from {spoken_date(refused['next_eligible_date'])}."
        )
        convo.user("Oh, I forgot I gave up my old space. Okay, I'll call back then. Goodbye.")
    else:
        convo.call("submit_parking_assignment", **emp_space)
        convo.agent(
            f"Space {spell(chosen['parking_space_id'])} in the {zone} is now yours. "
            f"{CLOSING_QUESTION}"
        )
        convo.user(goodbye(rng))
    goal = _parking_goal(info)
    return new_draft(
        ctx, world, caller, record, convo, "parking_assignment",
        "policy_refusal" if too_soon else "success", goal, opening,
        premise=f"{caller.first} last changed parking on {last.isoformat()}.",
        intent="parking assignment", satisfiable=not too_soon,
    )  # fmt: skip


def _rooms(world: Any, day: str, start: str, end: str, people: int, busy: bool) -> str:
    """One room that fits; booked at the wanted time when ``busy``. Returns its code."""
    rng = world.rng
    taken = [{"booking_id": f"REQ-FAC-{world.digits(12)}", "date": day, "start_time": start,
              "end_time": end, "employee_id": next(iter(world.db["employees"])),
              "attendee_count": 4}] if busy else []  # fmt: skip
    fits = world.room(rng.randint(2, 5), people + rng.randint(2, 6),
                      ["projector", "video_conferencing", "whiteboard"], taken)  # fmt: skip
    world.room(rng.randint(2, 5), max(2, people - 2), ["video_conferencing"], [])
    world.room(rng.randint(2, 5), people + 4, ["whiteboard"], [])
    return fits


def _room_goal(building: str, people: int, day: str, info: dict[str, Any]) -> Goal:
    return Goal(
        summary=f"You need a meeting room with video conferencing in {building} for "
        f"{people} people on {spoken_date(day)}.",
        must_have=[
            "A room with video conferencing and enough seats is booked.",
            "A calendar invite is sent.",
        ],
        negotiation=[
            verify_negotiation(0),
            "Give building, date, time and head count when asked.",
            "If your time is taken, offer the hour after it, the same day.",
        ],
        resolution="The agent confirms the booking and the invite. Say goodbye and end the call.",
        failure="If no room is free at either time, say goodbye and end the call.",
        information=info,
    )


def _book_room(
    convo: Conversation, rooms: list[dict[str, Any]], room: str, slot: dict[str, Any], people: int
) -> None:
    """Offer the room that fits, book it on a yes, and send the invite."""
    offer = next(r for r in rooms if r["room_code"] == room)
    start, end = slot["start_time"], slot["end_time"]
    convo.agent(
        f"Room {number(int(room.split('RM')[1]))} on the {ordinal(int(offer['floor_code'][2:]))} "
        f"floor is free from {spoken_time(start)} to {spoken_time(end)}. It seats "
        f"{number(offer['capacity'])} and has video conferencing. Shall I book it?"
    )
    convo.user("Yes, please book it.")
    booking = convo.call("submit_room_booking", attendee_count=people, **slot)
    convo.call("send_calendar_invite", request_id=booking["request_id"], **slot)
    convo.agent(f"It's booked, and the calendar invite is on its way to you. {CLOSING_QUESTION}")


def room_booking(ctx: FlowContext, busy: bool) -> Draft:
    """A meeting room with video conferencing; the wanted hour may be taken."""
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    record, _manager = world.team(caller)
    day = next_workday(world.today, rng.randint(1, 5)).isoformat()
    hour = rng.randint(9, 15)
    start, end = f"{hour:02d}:00", f"{hour + 1:02d}:00"
    people = rng.randint(4, 10)
    room = _rooms(world, day, start, end, people, busy)
    building = BUILDINGS[world.building]
    opening = "Hi, I need to book a meeting room with video conferencing."
    convo = open_call(ctx, world, opening, "Happy to help.")
    info = identity_info(record) | {"building": building, "meeting_date": day,
                                    "start_time": start, "end_time": end, "attendees": people}  # fmt: skip
    verify(ctx, world, convo, record, info)
    emp = record["employee_id"]
    convo.agent(f"Thank you, {caller.first}. Which building, which day and time, and how many "
                "people?")  # fmt: skip
    convo.user(
        f"In {building}, on {spoken_date(day, weekday=True)}, from {spoken_time(start)} to "
        f"{spoken_time(end)}, for {number(people)} people. We need video conferencing."
    )
    search: dict[str, Any] = {"building_code": building, "date": day, "min_capacity": people}
    search["equipment_required"] = ["video_conferencing"]
    found = convo.call("check_room_availability", start_time=start, end_time=end, **search)
    if busy:
        assert not found["available_rooms"]
        start, end = f"{hour + 1:02d}:00", f"{hour + 2:02d}:00"
        convo.agent("I'm sorry, no room with video conferencing and enough seats is free at that "
                    "time. Is there another time that works for you?")  # fmt: skip
        convo.user(f"Then from {spoken_time(start)} to {spoken_time(end)}, the same day.")
        found = convo.call("check_room_availability", start_time=start, end_time=end, **search)
        info |= {"fallback_start_time": start, "fallback_end_time": end}
    _book_room(convo, found["available_rooms"], room, {"date": day, "start_time": start,
               "end_time": end, "employee_id": emp, "room_code": room}, people)  # fmt: skip
    convo.user(goodbye(rng))
    goal = _room_goal(building, people, day, info)
    return new_draft(
        ctx, world, caller, record, convo, "room_booking",
        "no_availability" if busy else "success", goal, opening,
        premise=f"{caller.first} is organising a {people}-person video meeting.",
        intent="meeting room booking", satisfiable=True,
    )  # fmt: skip
