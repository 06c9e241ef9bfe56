"""Airline disruptions: rebooking after a cancellation, vouchers after a delay."""

from __future__ import annotations

from datetime import timedelta

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
from scenarios.generate.airline_world import CABIN_WORDS
from scenarios.generate.conversation import Conversation
from scenarios.generate.flowkit import CLOSING_QUESTION, FlowContext, goodbye, pick
from scenarios.generate.record import Draft, Goal
from scenarios.generate.spoken import amount, flight, spell
from scenarios.generate.spoken import number as spoken_number

CAUSES = {
    "mechanical": "a mechanical problem with the aircraft",
    "crew_availability": "a crew scheduling problem",
    "aircraft_maintenance": "unscheduled aircraft maintenance",
}
MEAL_AMOUNTS = {"cancellation_wait_same_day": 15, "irrops_overnight": 25}


def irrops_rebook(ctx: FlowContext, overnight: bool) -> Draft:
    """A cancelled flight, rebooked free; overnight when today's flights are full."""
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
    code = reservation["confirmation_number"]
    convo = Conversation("airline", world.db, ctx.tool_names)
    opening = pick(
        rng,
        "Hi, my flight today was just cancelled and I need to get on another one.",
        "Hello, I got a message that my flight this afternoon is cancelled. Can you rebook me?",
    )
    convo.user(opening)
    convo.agent(f"I'm sorry about that, let me help. {ASK_BOOKING}")
    convo.user(booking_words(code, caller.last))
    convo.call("get_reservation", confirmation_number=code, last_name=caller.last)
    number = leg(cancelled)["flight_number"]
    convo.call("get_disruption_info", flight_number=number, date=world.today.isoformat())
    search = {"origin": origin, "destination": destination, "passenger_count": 1,
              "fare_class": cabin}  # fmt: skip
    found = convo.call("search_rebooking_options", date=world.today.isoformat(), **search)
    intro = (
        f"Thank you, {caller.first}. Flight {flight(number)} to {city(destination)} was "
        f"cancelled because of {CAUSES[cause]}. Since that is on our side, I can rebook you at "
        "no cost, with no change fee and no fare difference."
    )
    if overnight:
        assert found["count"] == 0
        convo.agent(
            f"{intro} Unfortunately every later flight today is full in "
            f"{CABIN_WORDS[cabin]}. Would a flight tomorrow morning work for you?"
        )
        convo.user("If there's nothing tonight, then yes, the first flight tomorrow morning.")
        found = convo.call("search_rebooking_options", date=travel_day.isoformat(), **search)
        convo.agent(f"The first one tomorrow is {describe(first)}. Shall I put you on it?")
    else:
        convo.agent(f"{intro} The next flight with seats today is {describe(first)}. "
                    "Shall I put you on it?")  # fmt: skip
    assert found["options"][0]["journey_id"] == first["journey_id"]
    convo.user("Yes please, book that one.")
    convo.call(
        "rebook_flight", confirmation_number=code, journey_id=cancelled["journey_id"],
        new_journey_id=first["journey_id"], rebooking_type="irrops_cancellation",
        waive_change_fee=True,
    )  # fmt: skip
    convo.agent(
        f"You're confirmed on flight {flight(leg(first)['flight_number'])}, at no charge. "
        "Would you like a window, an aisle or a middle seat on it?"
    )
    convo.user(f"{article(seat_pref).capitalize()} seat, please.")
    seat = convo.call("assign_seat", confirmation_number=code, passenger_id="PAX001",
                      journey_id=first["journey_id"], seat_preference=seat_pref)  # fmt: skip
    reason = "irrops_overnight" if overnight else "cancellation_wait_same_day"
    extras = f"seat {seat_words(seat['seat_assigned'])}"
    if overnight:
        hotel = convo.call("issue_hotel_voucher", confirmation_number=code,
                           passenger_id="PAX001", num_nights=1)  # fmt: skip
        extras += (
            f". Because you have to stay overnight, I've issued a hotel voucher for one night, "
            f"code {spell(hotel['voucher_code'])}, good at any airport-area hotel"
        )
    meal = convo.call("issue_meal_voucher", confirmation_number=code, passenger_id="PAX001",
                      voucher_reason=reason)  # fmt: skip
    convo.agent(
        f"You have {extras}. I've also issued a meal voucher for {amount(MEAL_AMOUNTS[reason])}, "
        f"code {spell(meal['voucher_code'])}, for the airport restaurants. Your confirmation "
        f"code stays {spell(code)}. {CLOSING_QUESTION}"
    )
    convo.user(goodbye(rng))
    when = "tomorrow morning" if overnight else "today"
    info = base_info(caller, code) | {
        "Cancelled flight": f"{number} on {world.today.isoformat()}",
        "Seat preference": seat_pref,
    }
    goal = Goal(
        summary=f"Your flight from {city(origin)} to {city(destination)} was cancelled. You "
        f"want the earliest replacement flight {when} in the same cabin at no cost, "
        f"with {article(seat_pref)} seat.",
        must_have=[
            f"You are rebooked from {origin} to {destination} in {CABIN_WORDS[cabin]}.",
            "You pay nothing for the change.",
            f"The new flight leaves {when}"
            + (" (only if nothing is available tonight)." if overnight else "."),
        ],
        nice_to_have=["Meal voucher" + (" and a hotel for the night." if overnight else ".")],
        negotiation=[
            "Give your confirmation code and last name when asked.",
            "Accept the earliest flight the agent offers that meets your must-haves."
            + (
                " Agree to tomorrow morning only if the agent says tonight is full."
                if overnight
                else ""
            ),
            f"When asked about a seat, ask for {article(seat_pref)} seat.",
        ],  # fmt: skip
        resolution="The agent confirms the new flight at no charge and your seat. Say "
        "goodbye and end the call.",
        failure="If the agent wants to charge you for the change, refuse, say goodbye and end "
        "the call.",
        information=info,
    )
    return new_draft(
        ctx, world, caller, convo, "irrops_rebook",
        "no_availability" if overnight else "success", goal, opening,
        premise=f"{caller.first}'s flight {number} from {city(origin)} was cancelled by the "
        f"airline on the day of travel ({cause}).",
        priorities=["Get to the destination as soon as possible", "Pay nothing extra",
                    f"Sit in {article(seat_pref)} seat"],
        flow="The agent reads the disruption, offers free rebooking, books the earliest "
        "option, sets the seat and issues the vouchers the disruption entitles.",
    )  # fmt: skip


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
    goal = Goal(
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
    return new_draft(
        ctx, world, caller, convo, "delay_voucher", "policy_refusal", goal, opening,
        premise=f"{caller.first}'s flight {number} is delayed {minutes} minutes ({cause}).",
        priorities=["Rest somewhere during the wait", "Some compensation"],
        flow="The agent checks the disruption, declines a hotel for a same-day delay and "
        "issues the meal voucher for the delay tier.",
    )  # fmt: skip
