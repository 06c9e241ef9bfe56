"""Shared pieces of the airline flows: phrases, descriptions and the draft wrapper."""

from __future__ import annotations

from typing import Any

from scenarios.generate.airline_world import AIRPORTS, AirlineWorld, clock, draw_today
from scenarios.generate.conversation import Conversation
from scenarios.generate.flowkit import FlowContext
from scenarios.generate.people import Person, pick_persona
from scenarios.generate.record import Draft, Goal, PathKind
from scenarios.generate.spoken import flight, number, spell, spoken_time

VOLUNTARY_FEE = 75
ASK_BOOKING = "Could I have your confirmation code and the last name on the booking?"


def times(ctx: FlowContext, start: int, end: int, count: int) -> list[str]:
    """``count`` distinct departure times between ``start`` and ``end`` minutes, sorted."""
    picked = ctx.rng.sample(range(start, end, 5), count)
    return [clock(m) for m in sorted(picked)]


def city(code: str) -> str:
    return AIRPORTS[code].city


def seat_words(seat: str) -> str:
    """ "21A" -> "twenty one A"."""
    return f"{number(int(seat[:-1]))} {seat[-1]}"


def article(word: str) -> str:
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


def booking_words(code: str, last: str) -> str:
    return f"Sure, it's {spell(code)}, and the last name is {last}."


def base_info(person: Person, code: str) -> dict[str, Any]:
    return {
        "Booking confirmation code": code,
        "Passenger first name": person.first,
        "Passenger last name": person.last,
    }


def leg(journey: dict[str, Any]) -> dict[str, Any]:
    return journey["segments"][0]


def describe(journey: dict[str, Any]) -> str:
    seg = leg(journey)
    return (
        f"flight {flight(seg['flight_number'])}, leaving at "
        f"{spoken_time(seg['scheduled_departure'])} and arriving at "
        f"{spoken_time(seg['scheduled_arrival'])}"
    )


def new_draft(
    ctx: FlowContext,
    world: AirlineWorld,
    caller: Person,
    convo: Conversation,
    workflow: str,
    path: PathKind,
    goal: Goal,
    opening: str,
    premise: str,
    priorities: list[str],
    flow: str,
) -> Draft:
    return Draft(
        record_id=ctx.record_id,
        domain="airline",
        current_date_time=world.now,
        caller=caller,
        persona=pick_persona(ctx.rng),
        workflow=workflow,
        path=path,
        goal=goal,
        opening=opening,
        context={
            "premise": premise,
            "user_priorities": [
                {"rank": i + 1, "priority": p, "satisfied": path != "auth_failure" or i > 0}
                for i, p in enumerate(priorities)
            ],
        },
        convo=convo,
        with_phone=True,
        expected_flow=flow,
    )


def start_world(ctx: FlowContext) -> AirlineWorld:
    return AirlineWorld(ctx.rng, draw_today(ctx.rng))
