"""ITSM workflows about the caller's own account and laptop."""

from __future__ import annotations

from datetime import date
from random import Random
from typing import Any

from scenarios.engines.itsm.common import whole_months
from scenarios.generate.conversation import Conversation
from scenarios.generate.flowkit import CLOSING_QUESTION, FlowContext, goodbye, pick
from scenarios.generate.itsm_talk import (
    identity_info,
    new_draft,
    open_call,
    refused_goal,
    start_world,
    verify,
    verify_negotiation,
)
from scenarios.generate.itsm_world import BUILDINGS, SYSTEM_WORDS, ItsmWorld, next_workday
from scenarios.generate.people import Person
from scenarios.generate.record import Draft, Goal
from scenarios.generate.spoken import MONTHS, number, spell, spoken_date, year

HOLDS = ("security_investigation", "admin_hold")
MIN_LAPTOP_MONTHS = 36


def _months_after(day: date, months: int) -> date:
    """The first day on which ``months`` whole months have passed since ``day``."""
    total = day.month - 1 + months
    year, month = day.year + total // 12, total % 12 + 1
    try:
        return date(year, month, day.day)
    except ValueError:  # no such day that month (e.g. 29 February): the 1st of the next
        return date(year + month // 12, month % 12 + 1, 1)


def _unlock_outcome(
    convo: Conversation, caller: Person, emp: str, system: str, held: bool, rng: Random
) -> None:
    words = SYSTEM_WORDS[system]
    if held:
        convo.call("attempt_account_unlock", "cannot_unlock_security_hold", employee_id=emp,
                   target_system=system)  # fmt: skip
        convo.agent(
            f"I've checked, and your {words} account is under a security hold. That's not "
            "something the service desk can lift; the security team will contact you "
            "directly. If you'd like, I can transfer you to a live agent."
        )
        convo.user("No, that's okay, I'll wait for security to reach out. Thanks, goodbye.")
        return
    convo.call("attempt_account_unlock", employee_id=emp, target_system=system)
    logged = convo.call("mark_resolved", employee_id=emp, flow_id="login_issue",
                        resolution_type="resolved_via_troubleshooting")  # fmt: skip
    convo.agent(
        f"Your {words} account is unlocked. Please sign in again now. For reference, this "
        f"call is logged as {spell(logged['interaction_id'])}. {CLOSING_QUESTION}"
    )
    convo.user(goodbye(rng))


def _unlock_goal(words: str, wrong: int, info: dict[str, Any]) -> Goal:
    return Goal(
        summary=f"You are locked out of your {words} account and want it unlocked today.",
        must_have=[f"Your {words} account is unlocked."],
        negotiation=[
            verify_negotiation(wrong),
            "When the agent lists troubleshooting steps, say you already did all of them.",
            "If the agent says the account cannot be unlocked, accept it and decline a transfer.",
        ],
        resolution="The agent confirms the account is unlocked, or explains that security "
        "will contact you. Say goodbye and end the call.",
        failure="If the agent cannot unlock the account, decline any transfer, say goodbye "
        "and end the call.",
        information=info,
    )


def account_unlock(ctx: FlowContext, variant: str) -> Draft:
    """A locked account: unlocked after troubleshooting, unless a security hold forbids it."""
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    record, _manager = world.team(caller)
    system = rng.choice(("active_directory", "vpn_gateway", "email_exchange", "sso_identity"))
    held = variant == "security_hold"
    record["account_status"][system].update(
        locked=True, lock_reason=rng.choice(HOLDS) if held else "failed_attempts"
    )
    world.laptop(record, rng.randint(6, 40))
    words = SYSTEM_WORDS[system]
    opening = pick(rng, f"Hi, I'm locked out of my {words} account.",
                   f"Hello, my {words} account says it's locked and I can't sign in.")  # fmt: skip
    convo = open_call(ctx, world, opening, "I'm sorry to hear that, I can help.")
    info = identity_info(record) | {"locked_system": words}
    wrong = 1 if variant == "wrong_phone" else 0
    verify(ctx, world, convo, record, info, wrong)
    steps = convo.call("get_troubleshooting_guide", issue_category="login_issue")["steps"]
    convo.agent(
        f"Thank you, {caller.first}, you're verified. Before I touch the account, a few quick "
        f"checks. {steps[0]} {steps[1]} And have you tried the self-service password portal?"
    )
    convo.user(f"Yes, I've done all of that and I still can't get into {words}. It says the "
               "account is locked.")  # fmt: skip
    _unlock_outcome(convo, caller, record["employee_id"], system, held, rng)
    path = {"wrong_phone": "auth_failure", "security_hold": "policy_refusal"}.get(
        variant, "success"
    )
    return new_draft(
        ctx, world, caller, record, convo, "account_unlock", path,  # type: ignore[arg-type]
        _unlock_goal(words, wrong, info), opening,
        premise=f"{caller.first}'s {words} account is locked"
        + (" under a security hold." if held else " after too many failed sign-ins."),
        intent=f"unlock {system}", satisfiable=not held,
    )  # fmt: skip


def _refuse_too_new(
    convo: Conversation, world: ItsmWorld, caller: Person, laptop: dict[str, Any]
) -> None:
    bought = date.fromisoformat(laptop["purchase_date"])
    months = whole_months(bought, world.today)
    convo.agent(
        f"Thank you, {caller.first}. Your {laptop['model']} is only {number(months)} months "
        "old, and laptops are replaced after thirty six months, so I can't order a new "
        "one yet. If it's damaged, lost or stolen, we can open a ticket instead."
    )
    convo.user("No, it's not damaged, just slow. When will it be eligible?")
    eligible = _months_after(bought, MIN_LAPTOP_MONTHS)
    convo.agent(
        f"It becomes eligible on {spoken_date(eligible.isoformat(), with_year=True)}, thirty "
        "six months after it was bought. You're welcome to call us then."
    )
    convo.user("Okay, I'll wait until then. Thanks, goodbye.")


def _order_laptop(
    convo: Conversation, record: dict[str, Any], laptop: dict[str, Any], when: str, rng: Random
) -> dict[str, str]:
    """Budget check, choices, read-back and the request; returns the caller's choices."""
    emp = record["employee_id"]
    convo.call("verify_cost_center_budget", employee_id=emp)
    convo.agent(
        f"Thank you, {record['first_name']}. Your {laptop['model']} is from {when}, so it's due "
        "for replacement, and your cost center has budget. Would you like macOS or Windows, "
        "and which screen size: thirteen, fourteen or sixteen inch?"
    )
    os_name = rng.choice(("macos", "windows"))
    size = rng.choice(("13_inch", "14_inch", "16_inch"))
    os_words = "macOS" if os_name == "macos" else "Windows"
    size_words = f"{number(int(size[:2]))} inch"
    convo.user(f"{os_words}, please, {size_words}.")
    convo.agent(
        f"To confirm: a {size_words} {os_words} laptop replacing asset "
        f"{spell(laptop['asset_tag'])}, delivered to {BUILDINGS[record['building_code']]}, "
        f"floor {number(int(record['floor_code'][2:]))}. Shall I submit the request?"
    )
    convo.user("Yes, please submit it.")
    convo.call(
        "submit_hardware_request", employee_id=emp, request_type="laptop_replacement",
        justification="end_of_life", delivery_building=record["building_code"],
        delivery_floor=record["floor_code"], current_asset_tag=laptop["asset_tag"],
        laptop_os=os_name, laptop_size=size,
    )  # fmt: skip
    convo.agent(
        "Your request is submitted, and you'll get an email with the request number. The "
        f"old laptop goes back when the new one arrives. {CLOSING_QUESTION}"
    )
    convo.user(goodbye(rng))
    return {"laptop_os": os_words, "laptop_size": size_words}


def _laptop_goal(too_new: bool, info: dict[str, Any]) -> Goal:
    return Goal(
        summary="Your laptop is old and slow, and you want it replaced"
        + ("." if too_new else f" with a {info.get('laptop_size')} {info.get('laptop_os')} one."),
        must_have=["A replacement laptop is ordered, if policy allows it."],
        negotiation=[
            verify_negotiation(0),
            "Say the laptop is slow, not damaged, lost or stolen.",
            "If the agent says the laptop is too new, accept it."
            if too_new
            else "Give your operating system and size choice when asked; confirm the request.",
        ],
        resolution="The agent confirms the request, or explains why it cannot be made. Say "
        "goodbye and end the call.",
        failure="If the agent refuses, do not argue; say goodbye and end the call.",
        information=info,
    )


def laptop_replacement(ctx: FlowContext, variant: str) -> Draft:
    """An old laptop replaced; too new a laptop is refused; bad phone digits end the call."""
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    record, _manager = world.team(caller)
    too_new = variant == "too_new"
    laptop = world.laptop(record, rng.randint(8, 30) if too_new else rng.randint(38, 60))
    world.monitor(record)
    opening = pick(rng, "Hi, my laptop is getting really slow and I'd like to get it replaced.",
                   "Hello, I think my laptop is due for a replacement. It's old and very slow.")  # fmt: skip
    convo = open_call(ctx, world, opening, "I can look into that.")
    info = identity_info(record)
    if not verify(ctx, world, convo, record, info, 2 if variant == "wrong_phone" else 0):
        goal = refused_goal("You want your old, slow laptop replaced.",
                            "A replacement laptop is ordered.", info)  # fmt: skip
        return new_draft(
            ctx, world, caller, record, convo, "laptop_replacement", "auth_failure", goal,
            opening, premise=f"{caller.first} wants a new laptop but only remembers old phone "
            "numbers.", intent="laptop replacement", satisfiable=False,
        )  # fmt: skip
    emp = record["employee_id"]
    convo.call("get_employee_record", employee_id=emp)
    bought = laptop["purchase_date"]
    when = f"{MONTHS[int(bought[5:7]) - 1]} {year(int(bought[:4]))}"
    entitlement = {"employee_id": emp, "request_type": "laptop_replacement"}
    if too_new:
        convo.call("check_hardware_entitlement", "device_too_new", **entitlement)
        _refuse_too_new(convo, world, caller, laptop)
        info["laptop_purchased"] = when
    else:
        convo.call("check_hardware_entitlement", **entitlement)
        info |= _order_laptop(convo, record, laptop, when, rng)
    return new_draft(
        ctx, world, caller, record, convo, "laptop_replacement",
        "policy_refusal" if too_new else "success", _laptop_goal(too_new, info), opening,
        premise=f"{caller.first}'s laptop was bought {when} and feels slow.",
        intent="laptop replacement", satisfiable=not too_new,
    )  # fmt: skip


IMPACT = {
    "high": "I can't do my job without it, so it's blocking my work completely.",
    "medium": "I can work on my laptop screen for now, but it really slows me down.",
}
TIERS = {"high": ("tier_1", 1, 4), "medium": ("tier_2", 4, 8)}


def _dispatch_goal(visit: str, window: str, info: dict[str, Any]) -> Goal:
    return Goal(
        summary="Your desk monitor stopped working. You want a ticket and a technician visit.",
        must_have=[
            "An incident ticket is opened for the monitor.",
            "A technician visit is booked.",
        ],
        nice_to_have=[f"The visit on {visit} in the {window}."],
        negotiation=[
            verify_negotiation(0),
            "Say you already tried the troubleshooting steps; give the asset tag and explain "
            "how much the problem affects your work.",
            "Ask for the visit date and time of day you prefer; if it is taken, accept the "
            "first alternative the agent offers.",
        ],
        resolution="The agent confirms the ticket and the visit. Say goodbye and end the call.",
        failure="If no visit can be booked within a week, accept the ticket alone, say goodbye "
        "and end the call.",
        information=info,
    )


def _book_visit(
    convo: Conversation, base: dict[str, Any], day: str, window: str, taken: bool
) -> tuple[str, str, dict[str, Any]]:
    """Book the wanted slot, or the first alternative when it is taken."""
    if taken:
        refused = convo.call("schedule_field_dispatch", "no_availability", preferred_date=day,
                             time_window=window, **base)  # fmt: skip
        alternative = refused["alternatives"][0]
        convo.agent(
            f"That {window} is already booked. The next free slot is "
            f"{spoken_date(alternative['date'], weekday=True)}, in the "
            f"{alternative['time_window']}. Would that work?"
        )
        day, window = alternative["date"], alternative["time_window"]
        convo.user(f"Yes, {spoken_date(day)} in the {window} works.")
    booked = convo.call("schedule_field_dispatch", preferred_date=day, time_window=window, **base)
    return day, window, booked


def _open_ticket(convo: Conversation, emp: str, tag: str, urgency: str) -> str:
    """The incident ticket and its SLA tier, announced with the SLA times."""
    tier, respond, resolve = TIERS[urgency]
    ticket = convo.call("create_incident_ticket", employee_id=emp, category="hardware_malfunction",
                        urgency=urgency, affected_system=tag,
                        troubleshooting_completed=True)["ticket_number"]  # fmt: skip
    convo.call("assign_sla_tier", ticket_number=ticket, sla_tier=tier)
    convo.agent(
        f"I've opened a ticket with {urgency} urgency: a technician responds within "
        f"{number(respond)} hour{'s' if respond > 1 else ''} and aims to fix it within "
        f"{number(resolve)} hours. I can also book an on-site visit. What day and time of day "
        "suit you?"
    )
    return str(ticket)


def incident_dispatch(ctx: FlowContext, slot_taken: bool) -> Draft:
    """A dead monitor: ticket, SLA tier and a technician visit (the first slot may be gone)."""
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    record, _manager = world.team(caller)
    world.laptop(record, rng.randint(6, 40))
    monitor = world.monitor(record)
    urgency = rng.choice(("medium", "high"))
    visit = next_workday(world.today, rng.randint(1, 3))
    window = rng.choice(("morning", "afternoon"))
    world.dispatch_days(next_workday(world.today), 9, {(visit.isoformat(), window)} if slot_taken
                        else set())  # fmt: skip
    opening = pick(rng, "Hi, the monitor at my desk stopped working. It won't turn on at all.",
                   "Hello, my desk monitor just died and won't power on.")  # fmt: skip
    convo = open_call(ctx, world, opening, "Sorry about that, let's get it sorted.")
    info = identity_info(record) | {"monitor_asset_tag": monitor["asset_tag"]}
    verify(ctx, world, convo, record, info)
    emp = record["employee_id"]
    convo.call("get_employee_record", employee_id=emp)
    steps = convo.call("get_troubleshooting_guide", issue_category="hardware_malfunction")["steps"]
    convo.agent(f"Thank you, {caller.first}. Let's try a few things first. {steps[1]} {steps[2]} "
                f"{steps[3]} Did any of that help?")  # fmt: skip
    # The tag ends the turn: a spelled code followed by "I ..." would run into the next word.
    convo.user(f"No, I tried all of that and it's still dead. {IMPACT[urgency]} The asset tag on "
               f"it is {spell(monitor['asset_tag'])}.")  # fmt: skip
    ticket = _open_ticket(convo, emp, monitor["asset_tag"], urgency)
    convo.user(f"{spoken_date(visit.isoformat(), weekday=True)}, in the {window}, please.")
    base: dict[str, Any] = {"ticket_number": ticket, "employee_id": emp}
    base |= {"building_code": record["building_code"], "floor_code": record["floor_code"]}
    day, slot, booked = _book_visit(convo, base, visit.isoformat(), window, slot_taken)
    convo.agent(
        f"You're booked: a technician will come to {BUILDINGS[record['building_code']]}, floor "
        f"{number(int(record['floor_code'][2:]))}, on {spoken_date(day)} in the {slot}. The "
        f"visit reference is {spell(booked['dispatch_id'])}. {CLOSING_QUESTION}"
    )
    convo.user(goodbye(rng))
    info |= {"preferred_visit_date": visit.isoformat(), "preferred_time_window": window}
    goal = _dispatch_goal(visit.isoformat(), window, info)
    return new_draft(
        ctx, world, caller, record, convo, "incident_dispatch",
        "no_availability" if slot_taken else "success", goal, opening,
        premise=f"{caller.first}'s monitor {monitor['asset_tag']} is dead ({urgency} impact).",
        intent="hardware incident with field dispatch", satisfiable=True,
    )  # fmt: skip
