"""Airline disruptions: rebooking after a cancellation, vouchers after a delay."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from random import Random
from typing import Any

from scenarios.generate.airline_talk import (
    ASK_BOOKING,
    article,
    base_info,
    booking_words,
    city,
    describe,
    leg,
    new_draft,
    seat_words,
    start_world,
    times,
)
from scenarios.generate.airline_world import CABIN_WORDS, AirlineWorld
from scenarios.generate.conversation import Conversation
from scenarios.generate.flowkit import CLOSING_QUESTION, FlowContext, goodbye, pick
from scenarios.generate.people import Person
from scenarios.generate.record import Draft, Goal
from scenarios.generate.spoken import amount, flight, spell
from scenarios.generate.spoken import number as spoken_number

CAUSES = {
    "mechanical": "a mechanical problem with the aircraft",
    "crew_availability": "a crew scheduling problem",
    "aircraft_maintenance": "unscheduled aircraft maintenance",
}
MEAL_AMOUNTS = {"cancellation_wait_same_day": 15, "irrops_overnight": 25}


@dataclass
class Irrops:
    """The facts of one cancelled-flight record, shared by its script and its goal."""

    world: AirlineWorld
    caller: Person
    origin: str
    destination: str
    cabin: str
    cancelled: dict[str, Any]
    cause: str
    first: dict[str, Any]
    travel_day: date
    seat_pref: str
    code: str
    overnight: bool


def irrops_world(ctx: FlowContext, overnight: bool) -> Irrops:
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    origin, destination = world.route()
    cabin = rng.choice(("basic_economy", "main_cabin", "premium_economy"))
    now = world.set_now(origin, 7 * 60, 11 * 60)
    depart = now + rng.randrange(180, 300, 5) + (300 if overnight else 0)
    cancelled = world.journey(
        origin, destination, world.today, times(ctx, depart, depart + 5, 1)[0]
    )
    cause = rng.choice(sorted(CAUSES))
    world.disrupt(cancelled, cause, overnight=overnight)
    travel_day = world.today + timedelta(days=1) if overnight else world.today
    if overnight:
        world.journey(origin, destination, world.today, times(ctx, depart + 60, depart + 150, 1)[0],
                      sold_out=(cabin,))  # fmt: skip
        slots = times(ctx, 6 * 60, 9 * 60, 1) + times(ctx, 11 * 60, 14 * 60, 1)
    else:
        slots = times(ctx, depart + 60, depart + 150, 1) + times(ctx, depart + 180, 20 * 60, 1)
    first, _second = world.day_schedule(origin, destination, travel_day, slots)
    seat_pref = rng.choice(("window", "aisle"))
    reservation = world.reservation(caller, cancelled, cabin, seat_pref=seat_pref)
    world.background()
    return Irrops(world, caller, origin, destination, cabin, cancelled, cause, first, travel_day,
                  seat_pref, reservation["confirmation_number"], overnight)  # fmt: skip


def _find_replacement(convo: Conversation, x: Irrops) -> None:
    """Disruption record, search (tomorrow too when tonight is full), rebook for free."""
    number = leg(x.cancelled)["flight_number"]
    convo.call("get_disruption_info", flight_number=number, date=x.world.today.isoformat())
    search: dict[str, Any] = {"origin": x.origin, "destination": x.destination,
                              "passenger_count": 1, "fare_class": x.cabin}  # fmt: skip
    found = convo.call("search_rebooking_options", date=x.world.today.isoformat(), **search)
    intro = (
        f"Thank you, {x.caller.first}. Flight {flight(number)} to {city(x.destination)} was "
        f"cancelled because of {CAUSES[x.cause]}. Since that is on our side, I can rebook you "
        "at no cost, with no change fee and no fare difference."
    )
    if x.overnight:
        assert found["count"] == 0
        convo.agent(
            f"{intro} Unfortunately every later flight today is full in "
            f"{CABIN_WORDS[x.cabin]}. Would a flight tomorrow morning work for you?"
        )
        convo.user("If there's nothing tonight, then yes, the first flight tomorrow morning.")
        found = convo.call("search_rebooking_options", date=x.travel_day.isoformat(), **search)
        convo.agent(f"The first one tomorrow is {describe(x.first)}. Shall I put you on it?")
    else:
        convo.agent(f"{intro} The next flight with seats today is {describe(x.first)}. "
                    "Shall I put you on it?")  # fmt: skip
    assert found["options"][0]["journey_id"] == x.first["journey_id"]
    convo.user("Yes please, book that one.")
    convo.call(
        "rebook_flight", confirmation_number=x.code, journey_id=x.cancelled["journey_id"],
        new_journey_id=x.first["journey_id"], rebooking_type="irrops_cancellation",
        waive_change_fee=True,
    )  # fmt: skip


def _seat_and_vouchers(convo: Conversation, x: Irrops, rng: Random) -> None:
    convo.agent(
        f"You're confirmed on flight {flight(leg(x.first)['flight_number'])}, at no charge. "
        "Would you like a window, an aisle or a middle seat on it?"
    )
    convo.user(f"{article(x.seat_pref).capitalize()} seat, please.")
    passenger = {"confirmation_number": x.code, "passenger_id": "PAX001"}
    seat = convo.call("assign_seat", journey_id=x.first["journey_id"],
                      seat_preference=x.seat_pref, **passenger)  # fmt: skip
    reason = "irrops_overnight" if x.overnight else "cancellation_wait_same_day"
    extras = f"seat {seat_words(seat['seat_assigned'])}"
    if x.overnight:
        hotel = convo.call("issue_hotel_voucher", num_nights=1, **passenger)
        extras += (
            f". Because you have to stay overnight, I've issued a hotel voucher for one night, "
            f"code {spell(hotel['voucher_code'])}, good at any airport-area hotel"
        )
    meal = convo.call("issue_meal_voucher", voucher_reason=reason, **passenger)
    convo.agent(
        f"You have {extras}. I've also issued a meal voucher for {amount(MEAL_AMOUNTS[reason])}, "
        f"code {spell(meal['voucher_code'])}, for the airport restaurants. Your confirmation "
        f"code stays {spell(x.code)}. {CLOSING_QUESTION}"
    )
    convo.user(goodbye(rng))


def _irrops_goal(x: Irrops) -> Goal:
    when = "tomorrow morning" if x.overnight else "today"
    number = leg(x.cancelled)["flight_number"]
    info = base_info(x.caller, x.code) | {
        "Cancelled flight": f"{number} on {x.world.today.isoformat()}",
        "Seat preference": x.seat_pref,
    }
    accept = "Accept the earliest flight the agent offers that meets your must-haves."
    if x.overnight:
        accept += " Agree to tomorrow morning only if the agent says tonight is full."
    return Goal(
        summary=f"Your flight from {city(x.origin)} to {city(x.destination)} was cancelled. "
        f"You want the earliest replacement flight {when} in the same cabin at no cost, "
        f"with {article(x.seat_pref)} seat.",
        must_have=[
            f"You are rebooked from {x.origin} to {x.destination} in {CABIN_WORDS[x.cabin]}.",
            "You pay nothing for the change.",
            f"The new flight leaves {when}"
            + (" (only if nothing is available tonight)." if x.overnight else "."),
        ],
        nice_to_have=["Meal voucher" + (" and a hotel for the night." if x.overnight else ".")],
        negotiation=[
            "Give your confirmation code and last name when asked.",
            accept,
            f"When asked about a seat, ask for {article(x.seat_pref)} seat.",
        ],
        resolution="The agent confirms the new flight at no charge and your seat. Say "
        "goodbye and end the call.",
        failure="If the agent wants to charge you for the change, refuse, say goodbye and end "
        "the call.",
        information=info,
    )


def irrops_rebook(ctx: FlowContext, overnight: bool) -> Draft:
    """A cancelled flight, rebooked free; overnight when today's flights are full."""
    x = irrops_world(ctx, overnight)
    convo = Conversation("airline", x.world.db, ctx.tool_names)
    opening = pick(
        ctx.rng,
        "Hi, my flight today was just cancelled and I need to get on another one.",
        "Hello, I got a message that my flight this afternoon is cancelled. Can you rebook me?",
    )
    convo.user(opening)
    convo.agent(f"I'm sorry about that, let me help. {ASK_BOOKING}")
    convo.user(booking_words(x.code, x.caller.last))
    convo.call("get_reservation", confirmation_number=x.code, last_name=x.caller.last)
    _find_replacement(convo, x)
    _seat_and_vouchers(convo, x, ctx.rng)
    return new_draft(
        ctx, x.world, x.caller, convo, "irrops_rebook",
        "no_availability" if overnight else "success", _irrops_goal(x), opening,
        premise=f"{x.caller.first}'s flight {leg(x.cancelled)['flight_number']} from "
        f"{city(x.origin)} was cancelled by the airline on the day of travel ({x.cause}).",
        priorities=["Get to the destination as soon as possible", "Pay nothing extra",
                    f"Sit in {article(x.seat_pref)} seat"],
        flow="The agent reads the disruption, offers free rebooking, books the earliest "
        "option, sets the seat and issues the vouchers the disruption entitles.",
    )  # fmt: skip


def _delay_goal(caller: Person, code: str, number: str) -> Goal:
    return Goal(
        summary="Your flight today is badly delayed. You want a hotel room to rest in, or at "
        "least something for the wait.",
        must_have=["You get some compensation for the delay."],
        nice_to_have=["A hotel room for the wait."],
        negotiation=[
            "Give your confirmation code and last name when asked.",
            "Ask for a hotel room. If the agent explains the policy does not allow one, accept "
            "a meal voucher instead; do not argue more than once.",
        ],
        resolution="The agent gives you a voucher code. Say goodbye and end the call.",
        failure="If the agent offers nothing at all, say goodbye and end the call.",
        information=base_info(caller, code) | {"Delayed flight": f"{number} today"},
    )


def delay_voucher(ctx: FlowContext) -> Draft:
    """A long delay: the caller asks for a hotel, gets the meal voucher policy allows."""
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    origin, destination = world.route()
    cabin = rng.choice(("basic_economy", "main_cabin"))
    now = world.set_now(origin, 8 * 60, 12 * 60)
    departure = times(ctx, now + 120, now + 300, 1)[0]
    delayed = world.journey(origin, destination, world.today, departure)
    minutes = rng.choice((150, 165, 195, 260, 285))
    reason = "delay_over_4_hours" if minutes > 240 else "delay_over_2_hours"
    value = 15 if minutes > 240 else 12
    cause = rng.choice(sorted(CAUSES))
    world.disrupt(delayed, cause, delay_minutes=minutes)
    reservation = world.reservation(caller, delayed, cabin)
    world.background()
    code = reservation["confirmation_number"]
    hours_late = "four" if minutes > 240 else "two"
    convo = Conversation("airline", world.db, ctx.tool_names)
    opening = (
        f"Hi, my flight today is delayed more than {hours_late} hours. I'd like a hotel room "
        "to rest in while I wait."
    )
    convo.user(opening)
    convo.agent(f"I'm sorry about the delay. {ASK_BOOKING}")
    convo.user(booking_words(code, caller.last))
    convo.call("get_reservation", confirmation_number=code, last_name=caller.last)
    number = leg(delayed)["flight_number"]
    convo.call("get_disruption_info", flight_number=number, date=world.today.isoformat())
    convo.agent(
        f"Thank you, {caller.first}. Flight {flight(number)} is delayed by "
        f"{spoken_number(minutes // 60)} hours and {spoken_number(minutes % 60)} minutes because of {CAUSES[cause]}. Hotel vouchers are only "
        "for disruptions that force an overnight stay, and your flight still leaves today, so "
        "I can't offer a hotel. What I can do is give you a meal voucher for "
        f"{amount(value)} for the airport restaurants. Would you like that?"
    )
    convo.user(
        pick(rng, "That's disappointing, but fine, I'll take the meal voucher.",
             "Okay, I understand. Yes, please send the meal voucher.")
    )  # fmt: skip
    meal = convo.call("issue_meal_voucher", confirmation_number=code, passenger_id="PAX001",
                      voucher_reason=reason)  # fmt: skip
    convo.agent(
        f"Done. Your voucher code is {spell(meal['voucher_code'])}, worth {amount(value)}. "
        f"{CLOSING_QUESTION}"
    )
    convo.user(goodbye(rng))
    goal = _delay_goal(caller, code, number)
    return new_draft(
        ctx, world, caller, convo, "delay_voucher", "policy_refusal", goal, opening,
        premise=f"{caller.first}'s flight {number} is delayed {minutes} minutes ({cause}).",
        priorities=["Rest somewhere during the wait", "Some compensation"],
        flow="The agent checks the disruption, declines a hotel for a same-day delay and "
        "issues the meal voucher for the delay tier.",
    )  # fmt: skip
