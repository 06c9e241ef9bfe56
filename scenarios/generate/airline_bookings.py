"""Airline booking changes without a new flight: cancellations, refunds, seats and bags."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

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
from scenarios.generate.airline_world import CABIN_WORDS, AirlineWorld
from scenarios.generate.conversation import Conversation
from scenarios.generate.flowkit import CLOSING_QUESTION, FlowContext, goodbye, pick
from scenarios.generate.people import Person
from scenarios.generate.record import Draft, Goal
from scenarios.generate.spoken import amount, number, spell, spoken_date

CANCELLATION_FEE = 100


def next_year(day: date) -> str:
    try:
        return day.replace(year=day.year + 1).isoformat()
    except ValueError:  # 29 February
        return day.replace(year=day.year + 1, day=28).isoformat()


@dataclass
class Trip:
    """One upcoming nonstop trip of the caller, the starting point of these flows."""

    world: AirlineWorld
    caller: Person
    origin: str
    destination: str
    cabin: str
    day: date
    journey: dict[str, Any]
    code: str

    @property
    def fare(self) -> float:
        return float(self.journey["fares"][self.cabin])

    @property
    def route(self) -> str:
        return f"{city(self.origin)} to {city(self.destination)}"


def upcoming_trip(
    ctx: FlowContext,
    cabins: tuple[str, ...],
    days: tuple[int, int],
    seat_types: dict[str, list[str]] | None = None,
    **booking: Any,
) -> Trip:
    world = start_world(ctx)
    caller = world.names.person()
    origin, destination = world.route()
    cabin = ctx.rng.choice(cabins)
    day = world.today + timedelta(days=ctx.rng.randint(*days))
    journey = world.journey(origin, destination, day, times(ctx, 420, 1080, 1)[0],
                            seat_types=seat_types)  # fmt: skip
    if "booked_hours_ago" in booking:
        booking["booked_hours_ago"] = ctx.rng.randint(*booking["booked_hours_ago"])
    reservation = world.reservation(caller, journey, cabin, **booking)
    world.background()
    world.set_now(origin)
    return Trip(world, caller, origin, destination, cabin, day, journey,
                reservation["confirmation_number"])  # fmt: skip


def open_call(ctx: FlowContext, trip: Trip, opening: str, reply: str) -> Conversation:
    """Caller's opening, the agent's request for the booking, and the lookup."""
    convo = Conversation("airline", trip.world.db, ctx.tool_names)
    convo.user(opening)
    convo.agent(f"{reply} {ASK_BOOKING}")
    convo.user(booking_words(trip.code, trip.caller.last))
    convo.call("get_reservation", confirmation_number=trip.code, last_name=trip.caller.last)
    return convo


def _credit_goal(trip: Trip, accepts: bool) -> Goal:
    credit = trip.fare - CANCELLATION_FEE
    decision = (
        f"If a refund is impossible, accept the travel credit if it is at least ${credit - 20:.0f}."
        if accepts
        else "If a refund is impossible, decline any credit and keep your flight."
    )
    return Goal(
        summary=f"You want to cancel your {trip.route} trip on "
        f"{spoken_date(trip.day.isoformat())} and get your money back.",
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
        information=base_info(trip.caller, trip.code) | {"Flight date": trip.day.isoformat()},
    )


def cancel_for_credit(ctx: FlowContext, accepts: bool) -> Draft:
    """A refund request on a non-refundable fare: credit offered, taken or declined."""
    trip = upcoming_trip(ctx, ("main_cabin", "premium_economy"), (8, 45))
    credit = trip.fare - CANCELLATION_FEE
    opening = pick(
        ctx.rng,
        "Hi, I need to cancel my trip and I'd like my money back.",
        "Hello, my plans fell through, so I want to cancel my flight and get a refund.",
    )
    convo = open_call(ctx, trip, opening, "I can look into that for you.")
    convo.agent(
        f"Thank you, {trip.caller.first}. I see your {CABIN_WORDS[trip.cabin]} ticket from "
        f"{trip.route} on {spoken_date(trip.day.isoformat())}. This fare is non-refundable, so "
        "I'm not able to return the money to your card. If I cancel it, you keep the fare of "
        f"{amount(trip.fare)} minus a cancellation fee of {amount(CANCELLATION_FEE)} as travel "
        f"credit, so {amount(credit)}, valid for twelve months. Would you like me to cancel "
        "and issue the credit?"
    )
    if accepts:
        convo.user(
            f"That's not what I hoped for, but all right. Yes, cancel it and give me the "
            f"{amount(credit)} in credit."
        )
        cancelled = convo.call("cancel_reservation", confirmation_number=trip.code,
                               journey_id=trip.journey["journey_id"],
                               cancellation_reason="voluntary")  # fmt: skip
        assert cancelled["credit_amount_eligible"] == credit
        issued = convo.call("issue_travel_credit", confirmation_number=trip.code,
                            passenger_id="PAX001", amount=credit,
                            credit_reason="cancellation_non_refundable")  # fmt: skip
        convo.agent(
            f"Your flight is cancelled, and your travel credit of {amount(credit)} has the code "
            f"{spell(issued['credit_code'])}. It is valid until "
            f"{spoken_date(next_year(trip.world.today), with_year=True)}. {CLOSING_QUESTION}"
        )
    else:
        convo.user("No, if I can't get a refund I'd rather keep the flight for now.")
        convo.agent("Understood. I haven't changed anything, and your booking stays as it is. "
                    f"{CLOSING_QUESTION}")  # fmt: skip
    convo.user(goodbye(ctx.rng))
    return new_draft(
        ctx, trip.world, trip.caller, convo, "cancel_for_credit", "policy_refusal",
        _credit_goal(trip, accepts), opening,
        premise=f"{trip.caller.first} holds a non-refundable {CABIN_WORDS[trip.cabin]} ticket "
        "and wants cash back, which the fare rules do not allow.",
        priorities=["Get the money back", "Avoid losing the fare entirely"],
        flow="The agent declines a cash refund on a non-refundable fare and offers the fare "
        "minus the cancellation fee as twelve-month credit"
        + ("; the caller accepts." if accepts else "; the caller keeps the flight."),
    )  # fmt: skip


def refund_24h(ctx: FlowContext) -> Draft:
    """A ticket booked last night is cancelled under the 24-hour rule for a full refund."""
    trip = upcoming_trip(ctx, ("basic_economy", "main_cabin"), (10, 60), booked_hours_ago=(2, 12))
    opening = "Hi, I booked a flight last night but I picked the wrong trip. Can I cancel it?"
    convo = open_call(ctx, trip, opening, "Let me check.")
    convo.agent(
        f"Thank you, {trip.caller.first}. This booking from {trip.route} on "
        f"{spoken_date(trip.day.isoformat())} was made within the last twenty four hours, so you "
        f"can cancel it for a full refund of {amount(trip.fare)} to your original payment. "
        "Shall I cancel it?"
    )
    convo.user(f"Yes please, cancel it and refund the {amount(trip.fare)}.")
    cancelled = convo.call("cancel_reservation", confirmation_number=trip.code,
                           journey_id=trip.journey["journey_id"],
                           cancellation_reason="24_hour_rule")  # fmt: skip
    assert cancelled["refund_amount_eligible"] == trip.fare
    refund = convo.call("process_refund", confirmation_number=trip.code, refund_amount=trip.fare,
                        refund_type="full_fare")  # fmt: skip
    convo.agent(
        f"It's done. The booking is cancelled and a refund of {amount(trip.fare)} is on its way; "
        f"it can take up to {number(refund['processing_days'])} business days. The refund "
        f"reference is {spell(refund['refund_id'])}. {CLOSING_QUESTION}"
    )
    convo.user(goodbye(ctx.rng))
    goal = Goal(
        summary=f"You booked a {trip.route} flight last night by mistake and want to cancel it "
        "for a full refund.",
        must_have=[f"The booking is cancelled and the full ${trip.fare:.0f} is refunded to you."],
        negotiation=["Give your confirmation code and last name when asked.",
                     "Ask to cancel for a full refund; confirm the amount when the agent states it."],
        resolution="The agent confirms the cancellation and the refund. Say goodbye and end "
        "the call.",
        failure="If the agent offers only credit, say you booked less than a day ago; if it "
        "still refuses, say goodbye and end the call.",
        information=base_info(trip.caller, trip.code) | {"When you booked": "last night"},
    )  # fmt: skip
    return new_draft(
        ctx, trip.world, trip.caller, convo, "refund_24h", "success", goal, opening,
        premise=f"{trip.caller.first} booked the wrong trip less than a day ago.",
        priorities=["Full refund to the card"],
        flow="The agent checks the booking time, cancels under the 24-hour rule and starts a "
        "full refund.",
    )  # fmt: skip


def _bags_goal(trip: Trip, bags: int, bag_words: str) -> Goal:
    return Goal(
        summary=f"You want a window seat and {bag_words} on your flight from {trip.route} on "
        f"{spoken_date(trip.day.isoformat())}.",
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
        information=base_info(trip.caller, trip.code)
        | {"Seat preference": {"first_choice": "window", "second_choice": "aisle"},
           "Number of checked bags": bags},
    )  # fmt: skip


def seat_and_bags(ctx: FlowContext, window_full: bool) -> Draft:
    """A seat and checked bags on an upcoming flight; window seats may be gone."""
    cabins = ("basic_economy",) if window_full else ("main_cabin", "premium_economy")
    types = {"basic_economy": ["aisle", "middle"]} if window_full else None
    trip = upcoming_trip(ctx, cabins, (3, 30), seat_types=types, seat_pref="window")
    bags = ctx.rng.choice((1, 2))
    bag_words = f"{number(bags)} checked bag" + ("s" if bags > 1 else "")
    opening = f"Hi, I'd like to choose a seat and add {bag_words} for my upcoming trip."
    convo = open_call(ctx, trip, opening, "Happy to help.")
    convo.agent(
        f"Thank you, {trip.caller.first}. I see you on {describe(trip.journey)}, from "
        f"{trip.route} on {spoken_date(trip.day.isoformat())}, in {CABIN_WORDS[trip.cabin]}. "
        "Which kind of seat would you like?"
    )
    convo.user(f"A window seat, please, and {bag_words}.")
    base = {"confirmation_number": trip.code, "journey_id": trip.journey["journey_id"]}
    if window_full:
        convo.call("assign_seat", "seat_type_unavailable", passenger_id="PAX001",
                   seat_preference="window", **base)  # fmt: skip
        convo.agent(
            f"I'm sorry, there are no window seats left in {CABIN_WORDS[trip.cabin]} on this "
            "flight. I can give you an aisle seat instead. Would that work?"
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
        f"code is {spell(trip.code)}. {CLOSING_QUESTION}"
    )
    convo.user(goodbye(ctx.rng))
    return new_draft(
        ctx, trip.world, trip.caller, convo, "seat_and_bags",
        "no_availability" if window_full else "success", _bags_goal(trip, bags, bag_words),
        opening,
        premise=f"{trip.caller.first} flies {CABIN_WORDS[trip.cabin]} soon and wants a seat "
        "and bags.",
        priorities=["Window seat", f"{bag_words.capitalize()}"],
        flow="The agent verifies the booking, assigns the seat type the caller asks for "
        "(offering the alternative when it is gone) and sets the checked bags after consent.",
    )  # fmt: skip
