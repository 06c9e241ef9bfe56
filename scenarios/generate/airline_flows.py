"""Airline workflows: voluntary changes, disruptions, cancellations, extras.

Each flow builds its world, scripts the call with the real engine, and writes the
caller's goal from what actually happened (amounts, flights, codes).
"""

from __future__ import annotations

from datetime import timedelta
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


def voluntary_change(ctx: FlowContext, variant: str) -> Draft:
    """Move a trip to a later date for a fee; variants fail auth or find the date full."""
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
    code = reservation["confirmation_number"]
    convo = Conversation("airline", world.db, ctx.tool_names)
    opening = pick(
        rng,
        "Hi, I need to move my flight to a later date.",
        "Hello, I'd like to change the date of my flight, please.",
        "Hi there, I have to push my trip back a few days.",
    )
    convo.user(opening)
    convo.agent(f"I can help with that. {ASK_BOOKING}")
    info = base_info(caller, code)
    if variant == "wrong_code":
        return _wrong_code_refusal(ctx, world, caller, convo, opening, original)
    if variant == "wrong_name":
        married = world.names.surname()
        info["Your new married last name"] = married
        convo.user(f"Sure, it's {spell(code)}, and the last name is {married}.")
        convo.call("get_reservation", "authentication_failed", confirmation_number=code,
                   last_name=married)  # fmt: skip
        convo.agent(
            f"I'm sorry, I found the code {spell(code)}, but the name {married} does not match "
            "the booking. Is it possible the ticket is under a different last name?"
        )
        convo.user(
            f"Oh, of course. I booked it before I got married, under {caller.last}. "
            f"That's {spell(caller.last)}."
        )
    else:
        convo.user(booking_words(code, caller.last))
    convo.call("get_reservation", confirmation_number=code, last_name=caller.last)
    old_leg = leg(original)
    convo.agent(
        f"Thank you, {caller.first}. I see you on {describe(original)}, from "
        f"{city(origin)} to {city(destination)} on {spoken_date(old_day.isoformat())}, in "
        f"{CABIN_WORDS[cabin]}. What date would you like to travel instead?"
    )
    first_choice = sold_out_day or wanted
    convo.user(
        f"I'd like to fly on {spoken_date(first_choice.isoformat())} instead, same route, and "
        "I'd prefer a morning flight."
    )
    search = {"origin": origin, "destination": destination, "passenger_count": 1}
    if sold_out_day is not None:
        empty = convo.call("search_rebooking_options", date=sold_out_day.isoformat(),
                           fare_class=cabin, **search)  # fmt: skip
        assert empty["count"] == 0
        convo.agent(
            f"I'm sorry, {CABIN_WORDS[cabin]} is sold out on every flight on "
            f"{spoken_date(sold_out_day.isoformat())}. Would another day work for you?"
        )
        convo.user(
            f"Then {spoken_date(wanted.isoformat())}, please, same route and a morning flight."
        )
    found = convo.call("search_rebooking_options", date=wanted.isoformat(), fare_class=cabin,
                       **search)  # fmt: skip
    option = next(o for o in found["options"] if o["journey_id"] == morning["journey_id"])
    difference = option["fare"] - original["fares"][cabin]
    total = VOLUNTARY_FEE + difference
    convo.agent(
        f"On {spoken_date(wanted.isoformat())} the morning option is {describe(morning)}. "
        f"Because this is a change you're choosing, there is a change fee of "
        f"{amount(VOLUNTARY_FEE)}, and the fare is {amount(difference)} higher, so the total would be "
        f"{amount(total)}. Would you like me to make that change?"
    )
    convo.user(f"Yes, {amount(total)} is fine. Please go ahead with the morning flight.")
    rebooked = convo.call(
        "rebook_flight", confirmation_number=code, journey_id=original["journey_id"],
        new_journey_id=morning["journey_id"], rebooking_type="voluntary", waive_change_fee=False,
    )  # fmt: skip
    assert rebooked["cost_summary"]["total_collected"] == total
    convo.agent(
        f"Done. You're now on flight {flight(leg(morning)['flight_number'])} on "
        f"{spoken_date(wanted.isoformat())}. Your old seat doesn't carry over. Would you like "
        "a window, an aisle or a middle seat?"
    )
    convo.user(f"{article(seat_pref).capitalize()} seat, please.")
    seat = convo.call("assign_seat", confirmation_number=code, passenger_id="PAX001",
                      journey_id=morning["journey_id"], seat_preference=seat_pref)  # fmt: skip
    convo.agent(
        f"You're in seat {seat_words(seat['seat_assigned'])}. The total charge was {amount(total)}, "
        f"and your confirmation code is still {spell(code)}. {CLOSING_QUESTION}"
    )
    convo.user(goodbye(rng))
    info.update(
        {
            "Current flight": f"{old_leg['flight_number']} from {origin} to {destination} on "
            f"{old_day.isoformat()}",
            "Preferred new travel date": (sold_out_day or wanted).isoformat(),
            "Seat preference": seat_pref,
            "Maximum total cost in dollars": f"${total + 25:.0f}",
        }
    )
    if sold_out_day is not None:
        info["Fallback travel date"] = wanted.isoformat()
    dates = spoken_date((sold_out_day or wanted).isoformat())
    goal = Goal(
        summary=f"You want to move your {city(origin)} to {city(destination)} flight from "
        f"{spoken_date(old_day.isoformat())} to {dates}, on a morning departure, for no more "
        f"than ${total + 25:.0f} in total, with a {seat_pref} seat on the new flight.",
        must_have=[
            f"The new flight is {origin} to {destination} and departs before noon.",
            f"The new date is {(sold_out_day or wanted).isoformat()}"
            + (f", or {wanted.isoformat()} if that day is full." if sold_out_day else "."),
            f"The total cost of the change is at most ${total + 25:.0f}.",
            f"A {seat_pref} seat is assigned on the new flight.",
        ],
        negotiation=[
            "Give the confirmation code and last name when asked"
            + (
                f"; first give your new last name {married}, and if the agent cannot find the "
                f"booking, explain it is under your previous name {caller.last} and spell it."
                if variant == "wrong_name"
                else "."
            ),
            "Ask for a morning flight on the new date and let the agent state the total cost.",
            "Accept the morning option if the total is within your limit; say the amount back.",
            f"When asked about a seat, ask for a {seat_pref} seat.",
        ],
        resolution="The agent confirms the new flight, the total charged and your seat. "
        "Say goodbye and end the call.",
        failure="If no morning flight within budget is offered after two searches, keep your "
        "original flight, say goodbye and end the call.",
        edge_cases=["If the agent offers standby instead of a confirmed seat, decline."],
        information=info,
    )
    path: PathKind = {"wrong_name": "auth_failure", "sold_out": "no_availability"}.get(
        variant, "success"
    )  # type: ignore[assignment]
    return new_draft(
        ctx, world, caller, convo, "voluntary_change", path, goal, opening,
        premise=f"{caller.first} booked {CABIN_WORDS[cabin]} from {city(origin)} to "
        f"{city(destination)} on {old_day.isoformat()} and now needs to travel later.",
        priorities=["Travel on the new date in the morning", "Keep the total cost low",
                    f"Get a {seat_pref} seat"],
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
