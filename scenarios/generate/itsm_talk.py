"""Shared pieces of the ITSM flows: the world start, identity checks and the draft."""

from __future__ import annotations

from typing import Any

from scenarios.generate.conversation import Conversation
from scenarios.generate.flowkit import FlowContext, pick
from scenarios.generate.itsm_world import ItsmWorld, draw_today
from scenarios.generate.people import Person, pick_persona
from scenarios.generate.record import Draft, Goal, PathKind
from scenarios.generate.spoken import digits, spell

ASK_IDENTITY = (
    "First I need to verify you. Could I have your employee ID and the last four digits of "
    "the phone number on file?"
)
ZONES = ("EST", "CST", "MST", "PST")


def start_world(ctx: FlowContext) -> ItsmWorld:
    return ItsmWorld(ctx.rng, draw_today(ctx.rng))


def now_of(ctx: FlowContext, world: ItsmWorld) -> str:
    minutes = ctx.rng.randrange(8 * 60, 17 * 60, 5)
    return (
        f"{world.today.isoformat()} {minutes // 60:02d}:{minutes % 60:02d} {ctx.rng.choice(ZONES)}"
    )


def open_call(ctx: FlowContext, world: ItsmWorld, opening: str, reply: str) -> Conversation:
    """The caller's opening and the agent's request for the standard check."""
    convo = Conversation("itsm", world.db, ctx.tool_names)
    convo.user(opening)
    convo.agent(f"{reply} {ASK_IDENTITY}")
    return convo


def identity_info(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "employee_id": record["employee_id"],
        "phone_last_four": record["phone_last_four"],
        "first_name": record["first_name"],
        "last_name": record["last_name"],
    }


def other_digits(world: ItsmWorld, avoid: str) -> str:
    while True:
        candidate = world.digits(4)
        if candidate != avoid:
            return candidate


def verify(
    ctx: FlowContext,
    world: ItsmWorld,
    convo: Conversation,
    record: dict[str, Any],
    info: dict[str, Any],
    wrong_tries: int = 0,
) -> bool:
    """The standard check; ``wrong_tries`` old phone numbers come first (2 = refused)."""
    emp, phone = record["employee_id"], record["phone_last_four"]
    old = [other_digits(world, phone) for _ in range(wrong_tries)]
    for index, digits_said in enumerate(old):
        info[f"old_phone_last_four_{index + 1}"] = digits_said
    said = old[0] if old else phone
    convo.user(f"Sure, my employee ID is {spell(emp)}, and the last four are {digits(said)}.")
    for index, wrong in enumerate(old):
        convo.call("verify_employee_auth", "authentication_failed", employee_id=emp,
                   phone_last_four=wrong)  # fmt: skip
        if index == 0:
            convo.agent(
                "I'm sorry, those digits don't match the number on file. Could you double-check "
                "the last four digits of your phone number?"
            )
            retry = old[1] if len(old) > 1 else phone
            convo.user(
                pick(ctx.rng, "Oh sorry, that's my old phone.", "Hmm, let me think.")
                + f" Try {digits(retry)}."
            )
    if len(old) > 1:
        convo.agent(
            "I'm sorry, that doesn't match either, so I can't verify you over the phone and I "
            "can't make any changes today. The phone number on file can only be updated in "
            "person at the IT security desk; after that we can help you right away."
        )
        convo.user("All right, I'll stop by IT security then. Thanks, goodbye.")
        return False
    convo.call("verify_employee_auth", employee_id=emp, phone_last_four=phone)
    return True


def verify_negotiation(wrong_tries: int) -> str:
    if wrong_tries == 0:
        return "Give your employee ID and the last four digits of your phone when asked."
    if wrong_tries == 1:
        return (
            "Give your employee ID and, by mistake, the last four digits of your old phone "
            "(old_phone_last_four_1). If the agent says they do not match, give the correct "
            "phone_last_four."
        )
    return (
        "Give your employee ID and the digits of old_phone_last_four_1; if they do not match, "
        "try old_phone_last_four_2. You do not remember any other number."
    )


def new_draft(
    ctx: FlowContext,
    world: ItsmWorld,
    caller: Person,
    record: dict[str, Any],
    convo: Conversation,
    workflow: str,
    path: PathKind,
    goal: Goal,
    opening: str,
    premise: str,
    intent: str,
    satisfiable: bool,
) -> Draft:
    return Draft(
        record_id=ctx.record_id,
        domain="itsm",
        current_date_time=now_of(ctx, world),
        caller=caller,
        persona=pick_persona(ctx.rng),
        workflow=workflow,
        path=path,
        goal=goal,
        opening=opening,
        context={
            "premise": premise,
            "category": "single_intent",
            "intents": [{"intent": intent, "satisfiable": satisfiable}],
            "escalate_to_live_agent": False,
        },
        convo=convo,
        seed_data={
            "employee_id": record["employee_id"],
            "phone_last_four": record["phone_last_four"],
            "department_code": record["department_code"],
            "building_code": record["building_code"],
        },
    )


def refused_goal(summary: str, must_have: str, info: dict[str, Any]) -> Goal:
    """The goal of a caller who cannot pass the identity check."""
    return Goal(
        summary=summary,
        must_have=[must_have],
        negotiation=[verify_negotiation(2)],
        resolution="Not reachable on this call: the agent cannot verify you.",
        failure="If the agent cannot verify you, say you will visit IT security in person, say "
        "goodbye and end the call.",
        information=info,
    )
