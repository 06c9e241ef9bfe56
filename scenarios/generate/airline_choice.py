"""Airline disruption with a choice: two replacement flights, extras asked in one breath.

The agent offers both flights and, in the same turn, asks for a seat preference and a
meal request. The caller's decision tree picks the offered option that meets its goal
(the earliest flight leaving at or after the time it can make), names it by its
departure time, and answers every part of the compound question in one line. In the
``closes_in_answer`` variant that line also says "that's all, goodbye": the agent then
books, sets the seat and the meal, issues the voucher and closes the call itself (the
shape of EVA records whose trace ends with the agent's confirmation).
"""

from __future__ import annotations

from typing import Any

from scenarios.generate.airline_disruptions import CAUSES, MEAL_AMOUNTS, Irrops, irrops_world
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
)
from scenarios.generate.airline_world import CABIN_WORDS, clock, minutes_of
from scenarios.generate.conversation import Conversation, GenerationError
from scenarios.generate.flowkit import CLOSING_QUESTION, FlowContext, goodbye, pick
from scenarios.generate.record import Draft, Goal
from scenarios.generate.spoken import amount, flight, spell, spoken_time

MEALS = ("vegetarian", "vegan", "kosher", "halal", "gluten_free")


def departure(option: dict[str, Any]) -> str:
    return str(leg(option)["scheduled_departure"])


def choose_option(options: list[dict[str, Any]], not_before: str) -> dict[str, Any] | None:
    """The caller's pick among offered flights: the earliest leaving at or after
    ``not_before`` ("HH:MM"); None when no offered flight qualifies."""
    fitting = [o for o in options if minutes_of(departure(o)) >= minutes_of(not_before)]
    return min(fitting, key=lambda o: minutes_of(departure(o)), default=None)


def _not_before(options: list[dict[str, Any]]) -> str:
    """A round half hour after the first offer and no later than the second."""
    first, second = (minutes_of(departure(o)) for o in options[:2])
    limit = (first // 30 + 1) * 30
    if limit > second:
        raise GenerationError(f"no half hour between departures {first} and {second}")
    return clock(limit)


def _choice_goal(x: Irrops, not_before: str, meal: str) -> Goal:
    info = base_info(x.caller, x.code) | {
        "Cancelled flight": f"{leg(x.cancelled)['flight_number']} on {x.world.today}",
        "Seat preference": x.seat_pref,
        "Meal request": meal,
    }
    when = spoken_time(not_before)
    return Goal(
        summary=f"Your flight from {city(x.origin)} to {city(x.destination)} was cancelled. "
        f"You want a replacement flight today at no cost that leaves at or after {when}, "
        f"with {article(x.seat_pref)} seat and a {meal.replace('_', ' ')} meal.",
        must_have=[
            f"You are rebooked from {x.origin} to {x.destination} today in {CABIN_WORDS[x.cabin]}.",
            f"The new flight leaves at or after {when}: you cannot make an earlier one.",
            "You pay nothing for the change.",
        ],
        nice_to_have=[f"{article(x.seat_pref).capitalize()} seat.", "A meal voucher."],
        negotiation=[
            "Give your confirmation code and last name when asked.",
            f"When the agent offers flights, pick the earliest one that leaves at or after "
            f"{when}; say which one by its departure time. Never accept an earlier one.",
            "If the agent asks several things in one turn, answer every part you have an "
            f"answer for: {article(x.seat_pref)} seat, a {meal.replace('_', ' ')} meal.",
        ],
        resolution="The agent confirms the new flight at no charge, your seat and your "
        "meal. Say goodbye and end the call.",
        failure="If no offered flight leaves at or after the time you can make, or the "
        "agent wants to charge you, say goodbye and end the call.",
        information=info,
    )


def _offer(convo: Conversation, x: Irrops) -> list[dict[str, Any]]:
    number = leg(x.cancelled)["flight_number"]
    convo.agent(
        f"Thank you, {x.caller.first}. I have you on flight {flight(number)} from "
        f"{city(x.origin)} to {city(x.destination)} today. Is that the flight that was cancelled?"
    )
    convo.user("Yes, that's the one. I'd like something later today, please.")
    convo.call("get_disruption_info", flight_number=number, date=x.world.today.isoformat())
    found = convo.call(
        "search_rebooking_options", origin=x.origin, destination=x.destination,
        date=x.world.today.isoformat(), passenger_count=1, fare_class=x.cabin,
    )  # fmt: skip
    options = list(found["options"])
    if len(options) < 2:
        raise GenerationError(f"expected two same-day options, got {len(options)}")
    convo.agent(
        f"I see it. Flight {flight(number)} was cancelled because of "
        f"{CAUSES[x.cause]}, so I can rebook you at no cost. Today I have "
        f"{describe(options[0])}, or {describe(options[1])}. Which one would you like, and "
        "do you have a seat preference and a meal request for the new flight?"
    )
    return options


def _extras(convo: Conversation, x: Irrops, chosen: dict[str, Any], meal: str) -> str:
    """Rebook, seat, meal request, voucher; returns what the agent confirms."""
    convo.call(
        "rebook_flight", confirmation_number=x.code, journey_id=x.cancelled["journey_id"],
        new_journey_id=chosen["journey_id"], rebooking_type="irrops_cancellation",
        waive_change_fee=True,
    )  # fmt: skip
    passenger = {"confirmation_number": x.code, "passenger_id": "PAX001"}
    seat = convo.call("assign_seat", journey_id=chosen["journey_id"],
                      seat_preference=x.seat_pref, **passenger)  # fmt: skip
    convo.call("add_meal_request", journey_id=chosen["journey_id"], meal_type=meal, **passenger)
    reason = "cancellation_wait_same_day"
    voucher = convo.call("issue_meal_voucher", voucher_reason=reason, **passenger)
    return (
        f"You're confirmed on {describe(chosen)}, at no charge, in seat "
        f"{seat_words(seat['seat_assigned'])}, with a {meal.replace('_', ' ')} meal requested. "
        f"I've also issued a meal voucher for {amount(MEAL_AMOUNTS[reason])}, code "
        f"{spell(voucher['voucher_code'])}, for the airport restaurants. Your confirmation "
        f"code stays {spell(x.code)}."
    )


def irrops_choice(ctx: FlowContext, closes_in_answer: bool) -> Draft:
    """A cancelled flight, two offers and a compound question about seat and meal."""
    x = irrops_world(ctx, overnight=False)
    meal = ctx.rng.choice(MEALS)
    convo = Conversation("airline", x.world.db, ctx.tool_names)
    opening = pick(
        ctx.rng,
        "Hi, my flight was cancelled this morning. I need another one today, but not too early.",
        "Hello, my flight today got cancelled and I need to be rebooked on a later one.",
    )
    convo.user(opening)
    convo.agent(f"I'm sorry to hear that. {ASK_BOOKING}")
    convo.user(booking_words(x.code, x.caller.last))
    convo.call("get_reservation", confirmation_number=x.code, last_name=x.caller.last)
    options = _offer(convo, x)
    not_before = _not_before(options)
    chosen = choose_option(options, not_before)
    if chosen is None or chosen is options[0]:
        raise GenerationError("the caller's pick must be the later offer")
    answer = (
        f"I'll take the {spoken_time(departure(chosen))} one. {article(x.seat_pref).capitalize()}"
        f" seat, and a {meal.replace('_', ' ')} meal."
    )
    if closes_in_answer:
        convo.agent_closes = True
        convo.user(f"{answer} That's all I need, thank you, goodbye.")
        convo.agent(f"{_extras(convo, x, chosen, meal)} Have a good trip, goodbye.")
    else:
        convo.user(answer)
        convo.agent(f"{_extras(convo, x, chosen, meal)} {CLOSING_QUESTION}")
        convo.user(goodbye(ctx.rng))
    return new_draft(
        ctx, x.world, x.caller, convo, "irrops_rebook", "success",
        _choice_goal(x, not_before, meal), opening,
        premise=f"{x.caller.first}'s flight {leg(x.cancelled)['flight_number']} from "
        f"{city(x.origin)} was cancelled by the airline ({x.cause}); "
        f"{x.caller.first} cannot fly before {not_before}.",
        priorities=[f"Leave no earlier than {not_before}", "Pay nothing extra",
                    f"Sit in {article(x.seat_pref)} seat with a {meal} meal"],
        flow="The agent offers two same-day flights and asks for seat and meal in one turn; "
        "it books the later one the caller picks, sets seat and meal, issues the voucher.",
    )  # fmt: skip
