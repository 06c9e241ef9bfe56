"""Airline booking changes without a new flight: cancellations, refunds, seats and bags."""

from __future__ import annotations

from datetime import date, timedelta

from scenarios.generate.airline_talk import (
    ASK_BOOKING,
    article,
    base_info,
    booking_words,
    city,
    describe,
    new_draft,
    seat_words,
    start_world,
    times,
)
from scenarios.generate.airline_world import CABIN_WORDS
from scenarios.generate.conversation import Conversation
from scenarios.generate.flowkit import CLOSING_QUESTION, FlowContext, goodbye, pick
from scenarios.generate.record import Draft, Goal
from scenarios.generate.spoken import amount, number, spell, spoken_date

CANCELLATION_FEE = 100


def next_year(day: date) -> str:
    try:
        return day.replace(year=day.year + 1).isoformat()
    except ValueError:  # 29 February
        return day.replace(year=day.year + 1, day=28).isoformat()


def cancel_for_credit(ctx: FlowContext, accepts: bool) -> Draft:
    """A refund request on a non-refundable fare: credit offered, taken or declined."""
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    origin, destination = world.route()
    cabin = rng.choice(("main_cabin", "premium_economy"))
    day = world.today + timedelta(days=rng.randint(8, 45))
    journey = world.journey(origin, destination, day, times(ctx, 420, 1080, 1)[0])
    reservation = world.reservation(caller, journey, cabin)
    world.background()
    world.set_now(origin)
    code = reservation["confirmation_number"]
    fare = journey["fares"][cabin]
    credit = fare - CANCELLATION_FEE
    convo = Conversation("airline", world.db, ctx.tool_names)
    opening = pick(
        rng,
        "Hi, I need to cancel my trip and I'd like my money back.",
        "Hello, my plans fell through, so I want to cancel my flight and get a refund.",
    )
    convo.user(opening)
    convo.agent(f"I can look into that for you. {ASK_BOOKING}")
    convo.user(booking_words(code, caller.last))
    convo.call("get_reservation", confirmation_number=code, last_name=caller.last)
    expiry = next_year(world.today)
    convo.agent(
        f"Thank you, {caller.first}. I see your {CABIN_WORDS[cabin]} ticket from "
        f"{city(origin)} to {city(destination)} on {spoken_date(day.isoformat())}. This fare "
        "is non-refundable, so I'm not able to return the money to your card. If I cancel it, "
        f"you keep the fare of {amount(fare)} minus a cancellation fee of "
        f"{amount(CANCELLATION_FEE)} as travel credit, so {amount(credit)}, valid for twelve "
        "months. Would you like me "
        "to cancel and issue the credit?"
    )
    if accepts:
        convo.user(
            f"That's not what I hoped for, but all right. Yes, cancel it and give me the "
            f"{amount(credit)} in credit."
        )
        cancelled = convo.call("cancel_reservation", confirmation_number=code,
                               journey_id=journey["journey_id"],
                               cancellation_reason="voluntary")  # fmt: skip
        assert cancelled["credit_amount_eligible"] == credit
        issued = convo.call("issue_travel_credit", confirmation_number=code,
                            passenger_id="PAX001", amount=credit,
                            credit_reason="cancellation_non_refundable")  # fmt: skip
        convo.agent(
            f"Your flight is cancelled, and your travel credit of {amount(credit)} has the code "
            f"{spell(issued['credit_code'])}. It is valid until "
            f"{spoken_date(expiry, with_year=True)}. {CLOSING_QUESTION}"
        )
    else:
        convo.user("No, if I can't get a refund I'd rather keep the flight for now.")
        convo.agent(
            "Understood. I haven't changed anything, and your booking stays as it is. "
            f"{CLOSING_QUESTION}"
        )
    convo.user(goodbye(rng))
    decision = (
        f"If a refund is impossible, accept the travel credit if it is at least ${credit - 20:.0f}."
        if accepts
        else "If a refund is impossible, decline any credit and keep your flight."
    )
    goal = Goal(
        summary=f"You want to cancel your {city(origin)} to {city(destination)} trip on "
        f"{spoken_date(day.isoformat())} and get your money back.",
        must_have=["You get a cash refund, or " + decision[0].lower() + decision[1:]],
        negotiation=[
            "Give your confirmation code and last name when asked.",
            "Ask for a refund to your card.",
            decision + " Repeat the credit amount when you accept it." if accepts else decision,
        ],
        resolution="The agent confirms the outcome (credit code or unchanged booking). Say "
        "goodbye and end the call.",
        failure="If the agent can offer neither a refund nor an acceptable credit, keep the "
        "flight, say goodbye and end the call.",
        information=base_info(caller, code) | {"Flight date": day.isoformat()},
    )
    return new_draft(
        ctx, world, caller, convo, "cancel_for_credit", "policy_refusal", goal, opening,
        premise=f"{caller.first} holds a non-refundable {CABIN_WORDS[cabin]} ticket and wants "
        "cash back, which the fare rules do not allow.",
        priorities=["Get the money back", "Avoid losing the fare entirely"],
        flow="The agent declines a cash refund on a non-refundable fare and offers the fare "
        "minus the cancellation fee as twelve-month credit"
        + ("; the caller accepts." if accepts else "; the caller keeps the flight."),
    )  # fmt: skip


def refund_24h(ctx: FlowContext) -> Draft:
    """A ticket booked last night is cancelled under the 24-hour rule for a full refund."""
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    origin, destination = world.route()
    cabin = rng.choice(("basic_economy", "main_cabin"))
    day = world.today + timedelta(days=rng.randint(10, 60))
    journey = world.journey(origin, destination, day, times(ctx, 420, 1080, 1)[0])
    reservation = world.reservation(caller, journey, cabin, booked_hours_ago=rng.randint(2, 12))
    world.background()
    world.set_now(origin)
    code = reservation["confirmation_number"]
    fare = journey["fares"][cabin]
    convo = Conversation("airline", world.db, ctx.tool_names)
    opening = "Hi, I booked a flight last night but I picked the wrong trip. Can I cancel it?"
    convo.user(opening)
    convo.agent(f"Let me check. {ASK_BOOKING}")
    convo.user(booking_words(code, caller.last))
    convo.call("get_reservation", confirmation_number=code, last_name=caller.last)
    convo.agent(
        f"Thank you, {caller.first}. This booking from {city(origin)} to {city(destination)} "
        f"on {spoken_date(day.isoformat())} was made within the last twenty four hours, so you "
        f"can cancel it for a full refund of {amount(fare)} to your original payment. Shall I "
        "cancel it?"
    )
    convo.user(f"Yes please, cancel it and refund the {amount(fare)}.")
    cancelled = convo.call("cancel_reservation", confirmation_number=code,
                           journey_id=journey["journey_id"],
                           cancellation_reason="24_hour_rule")  # fmt: skip
    assert cancelled["refund_amount_eligible"] == fare
    refund = convo.call("process_refund", confirmation_number=code, refund_amount=fare,
                        refund_type="full_fare")  # fmt: skip
    convo.agent(
        f"It's done. The booking is cancelled and a refund of {amount(fare)} is on its way; "
        f"it can take up to {number(refund['processing_days'])} business days. The refund "
        f"reference is {spell(refund['refund_id'])}. {CLOSING_QUESTION}"
    )
    convo.user(goodbye(rng))
    goal = Goal(
        summary=f"You booked a {city(origin)} to {city(destination)} flight last night by "
        "mistake and want to cancel it for a full refund.",
        must_have=[f"The booking is cancelled and the full ${fare:.0f} is refunded to you."],
        negotiation=[
            "Give your confirmation code and last name when asked.",
            "Ask to cancel for a full refund; confirm the amount when the agent states it.",
        ],
        resolution="The agent confirms the cancellation and the refund. Say goodbye and end "
        "the call.",
        failure="If the agent offers only credit, say you booked less than a day ago; if it "
        "still refuses, say goodbye and end the call.",
        information=base_info(caller, code) | {"When you booked": "last night"},
    )
    return new_draft(
        ctx, world, caller, convo, "refund_24h", "success", goal, opening,
        premise=f"{caller.first} booked the wrong trip less than a day ago.",
        priorities=["Full refund to the card"],
        flow="The agent checks the booking time, cancels under the 24-hour rule and starts a "
        "full refund.",
    )  # fmt: skip


def seat_and_bags(ctx: FlowContext, window_full: bool) -> Draft:
    """A seat and checked bags on an upcoming flight; window seats may be gone."""
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    origin, destination = world.route()
    cabin = "basic_economy" if window_full else rng.choice(("main_cabin", "premium_economy"))
    day = world.today + timedelta(days=rng.randint(3, 30))
    types = {"basic_economy": ["aisle", "middle"]} if window_full else None
    journey = world.journey(origin, destination, day, times(ctx, 420, 1080, 1)[0],
                            seat_types=types)  # fmt: skip
    reservation = world.reservation(caller, journey, cabin, seat_pref="window")
    world.background()
    world.set_now(origin)
    code = reservation["confirmation_number"]
    bags = rng.choice((1, 2))
    bag_words = f"{number(bags)} checked bag" + ("s" if bags > 1 else "")
    convo = Conversation("airline", world.db, ctx.tool_names)
    opening = f"Hi, I'd like to choose a seat and add {bag_words} for my upcoming trip."
    convo.user(opening)
    convo.agent(f"Happy to help. {ASK_BOOKING}")
    convo.user(booking_words(code, caller.last))
    convo.call("get_reservation", confirmation_number=code, last_name=caller.last)
    convo.agent(
        f"Thank you, {caller.first}. I see you on {describe(journey)}, from {city(origin)} to "
        f"{city(destination)} on {spoken_date(day.isoformat())}, in {CABIN_WORDS[cabin]}. "
        "Which kind of seat would you like?"
    )
    convo.user(f"A window seat, please, and {bag_words}.")
    base = {"confirmation_number": code, "journey_id": journey["journey_id"]}
    if window_full:
        convo.call("assign_seat", "seat_type_unavailable", passenger_id="PAX001",
                   seat_preference="window", **base)  # fmt: skip
        convo.agent(
            f"I'm sorry, there are no window seats left in {CABIN_WORDS[cabin]} on this flight. "
            "I can give you an aisle seat instead. Would that work?"
        )
        convo.user("Okay, an aisle seat is fine then.")
    preference = "aisle" if window_full else "window"
    seat = convo.call("assign_seat", passenger_id="PAX001", seat_preference=preference, **base)
    convo.agent(
        f"You're in {article(preference)} seat, {seat_words(seat['seat_assigned'])}. Now the "
        f"bags: I'll set {bag_words} on this trip. Shall I go ahead?"
    )
    convo.user("Yes, go ahead.")
    convo.call("add_baggage_allowance", num_bags=bags, **base)
    convo.agent(
        f"All set: seat {seat_words(seat['seat_assigned'])} and {bag_words}. Your confirmation "
        f"code is {spell(code)}. {CLOSING_QUESTION}"
    )
    convo.user(goodbye(rng))
    goal = Goal(
        summary=f"You want a window seat and {bag_words} on your flight from {city(origin)} to "
        f"{city(destination)} on {spoken_date(day.isoformat())}.",
        must_have=[f"{bag_words.capitalize()} on the booking.", "A seat assigned."],
        nice_to_have=["A window seat; an aisle seat is the acceptable second choice."],
        negotiation=[
            "Give your confirmation code and last name when asked.",
            f"Ask for a window seat and {bag_words}.",
            "If no window seat is left, accept an aisle seat.",
        ],
        resolution="The agent confirms the seat number and the bags. Say goodbye and end "
        "the call.",
        failure="If the agent can assign neither a window nor an aisle seat, take the bags "
        "only, say goodbye and end the call.",
        information=base_info(caller, code)
        | {"Seat preference": {"first_choice": "window", "second_choice": "aisle"},
           "Number of checked bags": bags},
    )  # fmt: skip
    return new_draft(
        ctx, world, caller, convo, "seat_and_bags",
        "no_availability" if window_full else "success", goal, opening,
        premise=f"{caller.first} flies {CABIN_WORDS[cabin]} soon and wants a seat and bags.",
        priorities=["Window seat", f"{bag_words.capitalize()}"],
        flow="The agent verifies the booking, assigns the seat type the caller asks for "
        "(offering the alternative when it is gone) and sets the checked bags after consent.",
    )  # fmt: skip
