"""Medical HR staff workflows: shift swaps, PTO, orientation follow-ups, payroll fixes."""

from __future__ import annotations

from datetime import date, timedelta
from random import Random
from typing import Any

from scenarios.generate.conversation import Conversation
from scenarios.generate.flowkit import CLOSING_QUESTION, FlowContext, goodbye, pick
from scenarios.generate.medical_talk import (
    ASK_STAFF,
    new_draft,
    open_call,
    staff_info,
    staff_negotiation,
    start_world,
    verify_staff,
)
from scenarios.generate.medical_world import CERT_WORDS, UNITS, MedicalWorld
from scenarios.generate.people import Person
from scenarios.generate.record import Draft, Goal, PathKind
from scenarios.generate.spoken import hours, spell, spoken_date, spoken_time


def cert_words(code: str) -> str:
    return CERT_WORDS.get(code, spell(code))


def simple_goal(summary: str, must: str, steps: list[str], done: str, info: dict[str, Any]) -> Goal:
    """The shape every staff goal shares: one must-have, a few steps, a plain ending."""
    return Goal(
        summary=summary,
        must_have=[must],
        negotiation=steps,
        resolution=f"{done} Say goodbye and end the call.",
        failure="If the agent refuses or nothing works, say goodbye and end the call.",
        information=info,
    )


# --------------------------------------------------------------------------- shift swap


def _swap_outcome(
    convo: Conversation, world: MedicalWorld, ids: dict[str, str], colleague: Person,
    when: str, missing: str | None, rng: Random,
) -> None:  # fmt: skip
    unit = {"colleague_employee_id": ids["colleague"], "unit_code": world.unit}
    unit_words = UNITS[world.unit][1]
    if missing:
        convo.call("verify_colleague_certifications", "certification_missing", **unit)
        convo.agent(
            f"Your {when} can be swapped, but {colleague.first} doesn't hold the "
            f"{cert_words(missing)} that {unit_words} requires, so I can't approve this swap. "
            "You'd need a colleague who holds it."
        )
        convo.user("Oh, I didn't know that. I'll find someone else and call back. Goodbye.")
        return
    convo.call("verify_colleague_certifications", **unit)
    convo.agent(
        f"Your {when} is eligible, and {colleague.first} has every certification {unit_words} "
        "requires. Shall I confirm the swap?"
    )
    convo.user("Yes, please confirm it.")
    mine = {"employee_id": ids["employee"], "shift_id": ids["shift"]}
    case = convo.call("confirm_shift_swap", **mine, **unit)["case_id"]
    convo.call("notify_department_manager", employee_id=ids["employee"], case_id=case,
               notification_type="shift_swap_confirmed")  # fmt: skip
    convo.agent(
        f"The swap is confirmed, case number {spell(case)}, and your department manager has "
        f"been notified. {CLOSING_QUESTION}"
    )
    convo.user(goodbye(rng))


def shift_swap(ctx: FlowContext, variant: str) -> Draft:
    """A shift handed to a colleague; refused when the colleague lacks a certification."""
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    record = world.employee(caller)
    mate = world.names.person()
    colleague = world.employee(mate)
    required = UNITS[world.unit][2]
    missing = rng.choice(required) if variant == "missing_cert" else None
    if missing:
        colleague["certifications"] = [c for c in required if c != missing]
    day = world.today + timedelta(days=rng.randint(3, 20))
    start = rng.choice(("07:00", "19:00"))
    shift = world.shift(record, day, start)
    world.shift(colleague, day + timedelta(days=1), start)
    opening = pick(rng, "Hi, I need to swap one of my upcoming shifts with a colleague.",
                   "Hello, a coworker agreed to take one of my shifts and I'd like to set "
                   "that up.")  # fmt: skip
    convo = open_call(ctx, world, opening, f"I can help with a shift swap. {ASK_STAFF}")
    info = staff_info(record)
    wrong = 1 if variant == "wrong_dob" else 0
    verify_staff(convo, record, info, wrong)
    ids = {"employee": record["employee_id"], "shift": shift["shift_id"],
           "colleague": colleague["employee_id"]}  # fmt: skip
    convo.agent(f"Thank you, {caller.first}, you're verified. Which shift is it, and who will "
                "cover it?")  # fmt: skip
    pronoun = "Her" if mate.gender == "woman" else "His"
    convo.user(f"It's shift {spell(ids['shift'])}, and my colleague {mate.full} will take it. "
               f"{pronoun} employee ID is {spell(ids['colleague'])}.")  # fmt: skip
    mine = {"employee_id": ids["employee"], "shift_id": ids["shift"]}
    convo.call("get_shift_record", **mine)
    convo.call("check_swap_eligibility", **mine)
    info |= {"shift_id": ids["shift"], "colleague_name": mate.full,
             "colleague_employee_id": ids["colleague"]}  # fmt: skip
    when = f"{'day' if start == '07:00' else 'night'} shift on {spoken_date(day.isoformat())}"
    _swap_outcome(convo, world, ids, mate, when, missing, rng)
    goal = simple_goal(
        f"You want {mate.full} to take your {when}.",
        f"The shift {ids['shift']} is swapped to {mate.full}, if allowed.",
        [staff_negotiation(wrong), "Give the shift ID and your colleague's name and employee ID.",
         "If the agent says the swap is not allowed, accept it and say you will find someone "
         "else."],
        "The agent confirms the swap with a case number, or explains why it cannot be done.",
        info,
    )  # fmt: skip
    path = {"missing_cert": "policy_refusal", "wrong_dob": "auth_failure"}.get(variant, "success")
    return new_draft(
        ctx, world, caller, convo, "shift_swap", path, goal, opening,  # type: ignore[arg-type]
        premise=f"{caller.first} cannot work the {when} on {world.unit}.",
        intent="shift swap", satisfiable=not missing, seed=mine,
    )  # fmt: skip


# --------------------------------------------------------------------------- PTO


def week(first_monday: date, length: int) -> tuple[str, str]:
    return first_monday.isoformat(), (first_monday + timedelta(days=length - 1)).isoformat()


def _pto_week(world: MedicalWorld, rng: Random) -> tuple[date, int]:
    """A Monday a few weeks out, clear of holidays for two weeks, and a length of 3-5 days."""
    monday = world.today + timedelta(days=rng.randint(14, 45))
    monday -= timedelta(days=monday.weekday())
    length = rng.randint(3, 5)
    holidays = set(world.db["org_holidays"])
    while any((monday + timedelta(days=i)).isoformat() in holidays for i in range(12)):
        monday += timedelta(days=7)
    return monday, length


def _submit_pto(convo: Conversation, request: dict[str, Any], balance: float, rng: Random) -> None:
    days = convo.call("check_pto_eligibility", **request)["pto_days_required"]
    convo.agent(
        f"That's {hours(days)} working days, which leaves you {hours(balance - days)} days. "
        "Shall I submit the request?"
    )
    convo.user("Yes, please submit it.")
    case = convo.call("submit_pto_request", **request)["case_id"]
    convo.call("notify_department_manager", employee_id=request["employee_id"], case_id=case,
               notification_type="pto_request_submitted")  # fmt: skip
    convo.agent(f"Your request is submitted, case number {spell(case)}, and your manager has been "
                f"notified. {CLOSING_QUESTION}")  # fmt: skip
    convo.user(goodbye(rng))


def pto_request(ctx: FlowContext, blackout: bool) -> Draft:
    """A PTO request; a department blackout date forces the caller to a later week."""
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    record = world.employee(caller)
    record["pto_balances"]["pto"] = float(rng.randint(10, 20))
    monday, length = _pto_week(world, rng)
    start, end = week(monday, length)
    hit = (monday + timedelta(days=1)).isoformat()
    if blackout:
        world.db["department_blackout_dates"][world.department].append(hit)
    opening = "Hi, I'd like to request some paid time off."
    convo = open_call(ctx, world, opening, f"Sure, I can help with that. {ASK_STAFF}")
    info = staff_info(record) | {"pto_start_date": start, "pto_end_date": end}
    verify_staff(convo, record, info)
    request: dict[str, Any] = {"employee_id": record["employee_id"], "pto_type": "pto"}
    balance = convo.call("get_pto_balance", employee_id=request["employee_id"])["pto_balances"]
    convo.agent(f"Thank you, {caller.first}. You have {hours(balance['pto'])} days of PTO "
                "available. Which dates would you like off?")  # fmt: skip
    convo.user(f"From {spoken_date(start, weekday=True)} through {spoken_date(end, weekday=True)}.")
    if blackout:
        convo.call("check_pto_eligibility", "blackout_date_conflict", start_date=start,
                   end_date=end, **request)  # fmt: skip
        convo.agent(
            f"I'm sorry, {spoken_date(hit)} is a blackout date for your department, so I can't "
            "request time off over it. Would different dates work for you?"
        )
        start, end = week(monday + timedelta(days=7), length)
        convo.user(f"Then the week after: from {spoken_date(start, weekday=True)} through "
                   f"{spoken_date(end, weekday=True)}.")  # fmt: skip
        info |= {"fallback_start_date": start, "fallback_end_date": end}
    _submit_pto(convo, request | {"start_date": start, "end_date": end}, balance["pto"], rng)
    later = "If the agent says a date is blocked, ask for the same days one week later."
    goal = simple_goal(
        "You want paid time off for most of a week.",
        "A PTO request is submitted for your dates"
        + (", or for the following week if your dates are blocked." if blackout else "."),
        [staff_negotiation(0), "Give the start and end date of your time off.",
         later if blackout else "Confirm the request when the agent states the days."],
        "The agent confirms the request with a case number.", info,
    )  # fmt: skip
    return new_draft(
        ctx, world, caller, convo, "pto_request",
        "policy_refusal" if blackout else "success", goal, opening,
        premise=f"{caller.first} wants time off starting {info['pto_start_date']}.",
        intent="PTO request", seed={"employee_id": request["employee_id"]},
    )  # fmt: skip


# --------------------------------------------------------------------------- orientation


def _listed(values: list[str], say: Any) -> str:
    return ", ".join(say(v) for v in values[:-1]) + f" and {say(values[-1])}"


def _pick_slot(
    convo: Conversation, check: dict[str, Any], wanted: str, full: bool, info: dict[str, Any]
) -> tuple[str, str]:
    """Availability on the wanted day (or the first alternative date); the earliest slot."""
    found = convo.call("check_appointment_availability", preferred_date=wanted, **check)
    day = wanted
    if full:
        options = found["alternative_dates"]
        convo.agent(f"There are no openings on {spoken_date(day)}. The next dates with openings "
                    f"are {_listed(options, spoken_date)}. Would one of those work?")  # fmt: skip
        day = options[0]
        convo.user(f"{spoken_date(day)} works.")
        found = convo.call("check_appointment_availability", preferred_date=day, **check)
        info["fallback_date"] = day
    slots = found["available_slots"]
    convo.agent(f"On {spoken_date(day)} there are openings at {_listed(slots, spoken_time)}. "
                "Which time works for you?")  # fmt: skip
    convo.user(f"{spoken_date(day)} at {spoken_time(slots[0])}, please.")
    return day, slots[0]


def orientation_followup(ctx: FlowContext, variant: str) -> Draft:
    """A new hire books the orientation follow-up; the wanted day may be full."""
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    record = world.employee(caller, hired_days=rng.randint(14, 40))
    wanted = world.today + timedelta(days=rng.randint(2, 8))
    while wanted.weekday() >= 5:
        wanted += timedelta(days=1)
    full = variant == "no_slots"
    world.slots("orientation_followup", world.today + timedelta(days=1), 8,
                {wanted.isoformat()} if full else set())  # fmt: skip
    opening = "Hi, I'm a new hire and I need to schedule my orientation follow-up."
    convo = open_call(ctx, world, opening, f"Welcome aboard! {ASK_STAFF}")
    info = staff_info(record) | {"preferred_date": wanted.isoformat()}
    emp = record["employee_id"]
    if not verify_staff(convo, record, info, 2 if variant == "dob_refused" else 0):
        goal = simple_goal("You want to book your orientation follow-up appointment.",
                           "An orientation follow-up is booked.", [staff_negotiation(2)],
                           "The agent cannot verify you; say you will go to the HR office.", info)  # fmt: skip
        return new_draft(ctx, world, caller, convo, "orientation_followup", "auth_failure", goal,
                         opening, premise=f"{caller.first} misremembers the birth date on file.",
                         intent="orientation follow-up", satisfiable=False,
                         seed={"employee_id": emp})  # fmt: skip
    dept = record["department_code"]
    convo.call("get_employee_record", employee_id=emp)
    convo.agent(f"Thank you, {caller.first}. Which day would you like to come in?")
    convo.user(f"{spoken_date(wanted.isoformat(), weekday=True)}, please.")
    check = {"department_code": dept, "appointment_type": "orientation_followup"}
    day, chosen = _pick_slot(convo, check, wanted.isoformat(), full, info)
    booked = convo.call("schedule_orientation_followup", employee_id=emp, department_code=dept,
                        appointment_datetime=f"{day} {chosen}")  # fmt: skip
    convo.agent(f"You're booked for {spoken_date(day)} at {spoken_time(chosen)}. Your appointment "
                f"ID is {spell(booked['appointment_id'])}. {CLOSING_QUESTION}")  # fmt: skip
    convo.user(goodbye(rng))
    goal = simple_goal(
        "You want to book your orientation follow-up, as early in the day as possible.",
        "An orientation follow-up is booked" + (" on your date or the first alternative date."
                                                if full else " on your preferred date."),
        [staff_negotiation(0), "Ask for your preferred date.",
         "If it is full, take the first alternative date.",
         "Take the earliest time offered and say the date with it."],
        "The agent confirms the appointment.", info,
    )  # fmt: skip
    return new_draft(
        ctx, world, caller, convo, "orientation_followup",
        "no_availability" if full else "success", goal, opening,
        premise=f"{caller.first} started recently and needs the orientation follow-up.",
        intent="orientation follow-up", seed={"employee_id": emp},
    )  # fmt: skip


# --------------------------------------------------------------------------- payroll


def _correct_hours(
    convo: Conversation, ids: dict[str, str], worked: float, day: date, period_end: date,
    closed: bool, rng: Random,
) -> None:  # fmt: skip
    if closed:
        convo.call("check_correction_eligibility", "pay_period_closed", **ids)
        convo.agent(
            f"I'm sorry, the pay period for your {spoken_date(day.isoformat())} shift closed on "
            f"{spoken_date(period_end.isoformat())}, so I can't file a correction anymore. "
            "Please ask your manager about a manual adjustment."
        )
        convo.user("Okay, I'll talk to my manager then. Thanks, goodbye.")
        return
    convo.call("check_correction_eligibility", **ids)
    convo.agent(
        f"I can fix that. To confirm: an overtime correction to {hours(worked)} hours for "
        f"your {spoken_date(day.isoformat())} shift. Shall I submit it?"
    )
    convo.user("Yes, please submit it.")
    case = convo.call("submit_payroll_correction", correction_type="overtime_hours",
                      corrected_hours=worked, **ids)["case_id"]  # fmt: skip
    convo.call("notify_department_manager", employee_id=ids["employee_id"], case_id=case,
               notification_type="payroll_correction_submitted")  # fmt: skip
    convo.agent(f"It's submitted, case number {spell(case)}, and your manager has been "
                f"notified. {CLOSING_QUESTION}")  # fmt: skip
    convo.user(goodbye(rng))


def payroll_correction(ctx: FlowContext, closed: bool) -> Draft:
    """Missing overtime corrected; refused once the pay period has closed."""
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    record = world.employee(caller)
    day = world.today - timedelta(days=rng.randint(3, 9))
    period_end = world.today - timedelta(days=1) if closed else world.today + timedelta(days=5)
    shift = world.shift(record, day, rng.choice(("07:00", "19:00")), status="logged",
                        hours_logged=12.0, pay_period_end_date=period_end.isoformat())  # fmt: skip
    worked = rng.choice((12.5, 13.0, 13.5, 14.0))
    opening = "Hi, my timesheet is missing overtime from one of my shifts."
    convo = open_call(ctx, world, opening, f"Let me help you with that. {ASK_STAFF}")
    info = staff_info(record) | {"shift_id": shift["shift_id"], "hours_actually_worked": worked}
    verify_staff(convo, record, info)
    ids = {"employee_id": record["employee_id"], "shift_id": shift["shift_id"]}
    convo.agent(f"Thank you, {caller.first}. Which shift was it?")
    convo.user(f"I worked {hours(worked)} hours on shift {spell(ids['shift_id'])}, but only "
               "twelve were logged.")  # fmt: skip
    convo.call("get_timesheet_record", **ids)
    _correct_hours(convo, ids, worked, day, period_end, closed, rng)
    goal = simple_goal(
        f"Your {day.isoformat()} shift shows twelve hours but you worked {worked}; you want "
        "the overtime corrected.",
        f"Your hours for shift {ids['shift_id']} are corrected to {worked}, if still possible.",
        [staff_negotiation(0), "Give the shift ID and the hours you worked.",
         "If the agent says the pay period is closed, accept it."],
        "The agent confirms the correction with a case number, or explains why it cannot be "
        "filed.", info,
    )  # fmt: skip
    path: PathKind = "policy_refusal" if closed else "success"
    return new_draft(
        ctx, world, caller, convo, "payroll_correction", path, goal, opening,
        premise=f"{caller.first}'s overtime on {day.isoformat()} was not logged.",
        intent="payroll correction", satisfiable=not closed, seed={"employee_id": ids["employee_id"]},
    )  # fmt: skip
