"""Airline workflows: voluntary changes, disruptions, cancellations, extras.

Each flow builds its world, scripts the call with the real engine, and writes the
caller's goal from what actually happened (amounts, flights, codes).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from random import Random
from typing import Any

from scenarios.generate.airline_talk import (
    ASK_BOOKING,
    VOLUNTARY_FEE,
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
from scenarios.generate.record import Draft, Goal, PathKind
from scenarios.generate.spoken import amount, flight, spell, spoken_date

# --------------------------------------------------------------------------- voluntary


@dataclass
class Change:
    """The facts of one voluntary-change record, shared by its script and its goal."""

    world: AirlineWorld
    caller: Person
    origin: str
    destination: str
    cabin: str
    original: dict[str, Any]
    old_day: date
    wanted: date
    sold_out_day: date | None
    morning: dict[str, Any]
    seat_pref: str
    code: str
    married: str | None = None
    total: float = 0.0

    @property
    def first_choice(self) -> date:
        return self.sold_out_day or self.wanted


def _change_world(ctx: FlowContext, variant: str) -> Change:
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    origin, destination = world.route()
    cabin = rng.choice(("basic_economy", "main_cabin", "premium_economy"))
    old_day = world.today + timedelta(days=rng.randint(4, 25))
    wanted = old_day + timedelta(days=rng.randint(2, 6))
    base = world.base_fare()
    original = world.journey(origin, destination, old_day, times(ctx, 420, 1020, 1)[0], base=base)
    sold_out_day = wanted if variant == "sold_out" else None
    if sold_out_day is not None:
        world.day_schedule(origin, destination, wanted, times(ctx, 420, 1080, 2), sold_out=(cabin,))
        wanted = wanted + timedelta(days=1)
    morning_t, later_t = times(ctx, 390, 690, 1)[0], times(ctx, 780, 1080, 1)[0]
    morning = world.journey(
        origin, destination, wanted, morning_t, base=base + rng.randrange(15, 90, 5)
    )
    world.journey(origin, destination, wanted, later_t, base=base + rng.randrange(0, 60, 5))
    seat_pref = rng.choice(("window", "aisle"))
    reservation = world.reservation(caller, original, cabin, seat_pref=seat_pref)
    world.background()
    world.set_now(origin)
    return Change(world, caller, origin, destination, cabin, original, old_day, wanted,
                  sold_out_day, morning, seat_pref, reservation["confirmation_number"])  # fmt: skip


def _identify(convo: Conversation, c: Change, info: dict[str, Any]) -> None:
    """Booking lookup; with a married name, the first attempt fails on the name."""
    if c.married is not None:
        info["Your new married last name"] = c.married
        convo.user(f"Sure, it's {spell(c.code)}, and the last name is {c.married}.")
        convo.call("get_reservation", "authentication_failed", confirmation_number=c.code,
                   last_name=c.married)  # fmt: skip
        convo.agent(
            f"I'm sorry, I found the code {spell(c.code)}, but the name {c.married} does not "
            "match the booking. Is it possible the ticket is under a different last name?"
        )
        convo.user(
            f"Oh, of course. I booked it before I got married, under {c.caller.last}. "
            f"That's {spell(c.caller.last)}."
        )
    else:
        convo.user(booking_words(c.code, c.caller.last))
    convo.call("get_reservation", confirmation_number=c.code, last_name=c.caller.last)


def _choose_flight(convo: Conversation, c: Change) -> None:
    """Ask for the date, search (twice when it is sold out), quote the total, rebook."""
    convo.agent(
        f"Thank you, {c.caller.first}. I see you on {describe(c.original)}, from "
        f"{city(c.origin)} to {city(c.destination)} on {spoken_date(c.old_day.isoformat())}, "
        f"in {CABIN_WORDS[c.cabin]}. What date would you like to travel instead?"
    )
    convo.user(
        f"I'd like to fly on {spoken_date(c.first_choice.isoformat())} instead, same route, and "
        "I'd prefer a morning flight."
    )
    search: dict[str, Any] = {"origin": c.origin, "destination": c.destination,
                              "passenger_count": 1, "fare_class": c.cabin}  # fmt: skip
    if c.sold_out_day is not None:
        empty = convo.call("search_rebooking_options", date=c.sold_out_day.isoformat(), **search)
        assert empty["count"] == 0
        convo.agent(
            f"I'm sorry, {CABIN_WORDS[c.cabin]} is sold out on every flight on "
            f"{spoken_date(c.sold_out_day.isoformat())}. Would another day work for you?"
        )
        convo.user(
            f"Then {spoken_date(c.wanted.isoformat())}, please, same route and a morning flight."
        )
    found = convo.call("search_rebooking_options", date=c.wanted.isoformat(), **search)
    option = next(o for o in found["options"] if o["journey_id"] == c.morning["journey_id"])
    difference = option["fare"] - c.original["fares"][c.cabin]
    c.total = VOLUNTARY_FEE + difference
    convo.agent(
        f"On {spoken_date(c.wanted.isoformat())} the morning option is {describe(c.morning)}. "
        f"Because this is a change you're choosing, there is a change fee of "
        f"{amount(VOLUNTARY_FEE)}, and the fare is {amount(difference)} higher, so the total "
        f"would be {amount(c.total)}. Would you like me to make that change?"
    )
    convo.user(f"Yes, {amount(c.total)} is fine. Please go ahead with the morning flight.")
    rebooked = convo.call(
        "rebook_flight", confirmation_number=c.code, journey_id=c.original["journey_id"],
        new_journey_id=c.morning["journey_id"], rebooking_type="voluntary",
        waive_change_fee=False,
    )  # fmt: skip
    assert rebooked["cost_summary"]["total_collected"] == c.total


def _assign_new_seat(convo: Conversation, c: Change, rng: Random) -> None:
    convo.agent(
        f"Done. You're now on flight {flight(leg(c.morning)['flight_number'])} on "
        f"{spoken_date(c.wanted.isoformat())}. Your old seat doesn't carry over. Would you like "
        "a window, an aisle or a middle seat?"
    )
    convo.user(f"{article(c.seat_pref).capitalize()} seat, please.")
    seat = convo.call("assign_seat", confirmation_number=c.code, passenger_id="PAX001",
                      journey_id=c.morning["journey_id"], seat_preference=c.seat_pref)  # fmt: skip
    convo.agent(
        f"You're in seat {seat_words(seat['seat_assigned'])}. The total charge was "
        f"{amount(c.total)}, and your confirmation code is still {spell(c.code)}. "
        f"{CLOSING_QUESTION}"
    )
    convo.user(goodbye(rng))


def _change_goal(c: Change, info: dict[str, Any]) -> Goal:
    budget = f"${c.total + 25:.0f}"
    info.update(
        {
            "Current flight": f"{leg(c.original)['flight_number']} from {c.origin} to "
            f"{c.destination} on {c.old_day.isoformat()}",
            "Preferred new travel date": c.first_choice.isoformat(),
            "Seat preference": c.seat_pref,
            "Maximum total cost in dollars": budget,
        }
    )
    if c.sold_out_day is not None:
        info["Fallback travel date"] = c.wanted.isoformat()
    lookup = "Give the confirmation code and last name when asked" + (
        f"; first give your new last name {c.married}, and if the agent cannot find the "
        f"booking, explain it is under your previous name {c.caller.last} and spell it."
        if c.married
        else "."
    )
    return Goal(
        summary=f"You want to move your {city(c.origin)} to {city(c.destination)} flight from "
        f"{spoken_date(c.old_day.isoformat())} to {spoken_date(c.first_choice.isoformat())}, "
        f"on a morning departure, for no more than {budget} in total, with a {c.seat_pref} "
        "seat on the new flight.",
        must_have=[
            f"The new flight is {c.origin} to {c.destination} and departs before noon.",
            f"The new date is {c.first_choice.isoformat()}"
            + (f", or {c.wanted.isoformat()} if that day is full." if c.sold_out_day else "."),
            f"The total cost of the change is at most {budget}.",
            f"A {c.seat_pref} seat is assigned on the new flight.",
        ],
        negotiation=[
            lookup,
            "Ask for a morning flight on the new date and let the agent state the total cost.",
            "Accept the morning option if the total is within your limit; say the amount back.",
            f"When asked about a seat, ask for a {c.seat_pref} seat.",
        ],
        resolution="The agent confirms the new flight, the total charged and your seat. "
        "Say goodbye and end the call.",
        failure="If no morning flight within budget is offered after two searches, keep your "
        "original flight, say goodbye and end the call.",
        edge_cases=["If the agent offers standby instead of a confirmed seat, decline."],
        information=info,
    )


def voluntary_change(ctx: FlowContext, variant: str) -> Draft:
    """Move a trip to a later date for a fee; variants fail auth or find the date full."""
    c = _change_world(ctx, variant)
    convo = Conversation("airline", c.world.db, ctx.tool_names)
    opening = pick(
        ctx.rng,
        "Hi, I need to move my flight to a later date.",
        "Hello, I'd like to change the date of my flight, please.",
        "Hi there, I have to push my trip back a few days.",
    )
    convo.user(opening)
    convo.agent(f"I can help with that. {ASK_BOOKING}")
    if variant == "wrong_code":
        return _wrong_code_refusal(ctx, c.world, c.caller, convo, opening, c.original)
    info = base_info(c.caller, c.code)
    if variant == "wrong_name":
        c.married = c.world.names.surname()
    _identify(convo, c, info)
    _choose_flight(convo, c)
    _assign_new_seat(convo, c, ctx.rng)
    path: PathKind = {"wrong_name": "auth_failure", "sold_out": "no_availability"}.get(
        variant, "success"
    )  # type: ignore[assignment]
    return new_draft(
        ctx, c.world, c.caller, convo, "voluntary_change", path, _change_goal(c, info), opening,
        premise=f"{c.caller.first} booked {CABIN_WORDS[c.cabin]} from {city(c.origin)} to "
        f"{city(c.destination)} on {c.old_day.isoformat()} and now needs to travel later.",
        priorities=["Travel on the new date in the morning", "Keep the total cost low",
                    f"Get a {c.seat_pref} seat"],
        flow="The agent verifies the booking, searches the new date, quotes the change fee and "
        "fare difference, rebooks after consent and assigns the seat type the caller asks for.",
    )  # fmt: skip


def _wrong_code_refusal(
    ctx: FlowContext,
    world: AirlineWorld,
    caller: Person,
    convo: Conversation,
    opening: str,
    original: dict[str, Any],
) -> Draft:
    """The caller reads two codes that match no booking; the agent changes nothing."""
    wrong = [world.confirmation_code(), world.confirmation_code()]
    info = {
        "Confirmation code you read from an old email": wrong[0],
        "Confirmation code you read on second look": wrong[1],
        "Passenger first name": caller.first,
        "Passenger last name": caller.last,
    }
    convo.user(booking_words(wrong[0], caller.last))
    convo.call("get_reservation", "not_found", confirmation_number=wrong[0], last_name=caller.last)
    convo.agent(
        f"I'm sorry, I can't find a booking with the code {spell(wrong[0])}. Could you check "
        "the code once more? It's six letters and numbers."
    )
    convo.user(f"Hmm, let me look again. Maybe it's {spell(wrong[1])}.")
    convo.call("get_reservation", "not_found", confirmation_number=wrong[1], last_name=caller.last)
    convo.agent(
        f"I'm afraid there's no booking under {spell(wrong[1])} either. Without a matching "
        "booking I can't make any changes. Your confirmation email has the correct code; "
        "please call us back once you have it."
    )
    convo.user("Okay, I'll find the email and call back. Thanks anyway, goodbye.")
    origin = original["origin"]
    goal = Goal(
        summary="You want to move your upcoming flight to a later date, but you only have "
        "the confirmation code from an old email.",
        must_have=["Your trip is moved to a later date."],
        negotiation=[
            "Give the first confirmation code and your last name when asked.",
            "If the agent cannot find it, read the second code.",
            "If that fails too, accept that nothing can be changed today.",
        ],
        resolution="Not reachable on this call; the agent cannot find the booking.",
        failure="If the agent cannot find the booking after the second code, say you will "
        "find the email and call back, say goodbye and end the call.",
        information=info,
    )
    return new_draft(
        ctx, world, caller, convo, "voluntary_change", "auth_failure", goal, opening,
        premise=f"{caller.first} wants to change a flight from {city(origin)} but reads the "
        "confirmation code from the wrong email.",
        priorities=["Find the booking", "Change the date"],
        flow="The agent tries both codes the caller reads, finds no booking, explains it "
        "cannot change anything without one and makes no change.",
    )  # fmt: skip
