"""Shared pieces of the medical HR flows: world start, identity checks and the draft."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from scenarios.generate.conversation import Conversation
from scenarios.generate.flowkit import FlowContext
from scenarios.generate.medical_world import MedicalWorld, draw_today
from scenarios.generate.people import Person, pick_persona
from scenarios.generate.record import Draft, Goal, PathKind
from scenarios.generate.spoken import digits, spell, spoken_date

ASK_STAFF = "First I need to verify you. Could I have your employee ID and your date of birth?"
ASK_PROVIDER = (
    "Since this is about your credentials, I need to verify you as a provider. Could I have "
    "your NPI number, your home facility code and your four-digit PIN?"
)
ZONES = ("EST", "CST", "MST", "PST")


def start_world(ctx: FlowContext) -> MedicalWorld:
    return MedicalWorld(ctx.rng, draw_today(ctx.rng))


def open_call(ctx: FlowContext, world: MedicalWorld, opening: str, reply: str) -> Conversation:
    """The caller's opening and the agent's first reply (which asks for credentials)."""
    convo = Conversation("medical_hr", world.db, ctx.tool_names)
    convo.user(opening)
    convo.agent(reply)
    return convo


def staff_info(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "employee_id": record["employee_id"],
        "date_of_birth": record["date_of_birth"],
        "first_name": record["first_name"],
        "last_name": record["last_name"],
    }


def provider_info(provider: dict[str, Any]) -> dict[str, Any]:
    return {
        "npi": provider["npi"],
        "facility_code": provider["facility_code"],
        "pin": provider["pin"],
        "first_name": provider["first_name"],
        "last_name": provider["last_name"],
    }


def misremembered(born: str, shift_days: int) -> str:
    return (date.fromisoformat(born) + timedelta(days=shift_days)).isoformat()


def verify_staff(
    convo: Conversation, record: dict[str, Any], info: dict[str, Any], wrong_tries: int = 0
) -> bool:
    """The staff check; ``wrong_tries`` wrong birth dates come first (2 = refused)."""
    emp, born = record["employee_id"], record["date_of_birth"]
    wrong = [misremembered(born, shift) for shift in (1, 365)[:wrong_tries]]
    for index, day in enumerate(wrong):
        info[f"date_of_birth_you_first_say_{index + 1}"] = day
    first = wrong[0] if wrong else born
    convo.user(
        f"Sure, my employee ID is {spell(emp)}, and my date of birth is "
        f"{spoken_date(first, with_year=True)}."
    )
    for index, day in enumerate(wrong):
        convo.call("verify_employee_auth", "authentication_failed", employee_id=emp,
                   date_of_birth=day)  # fmt: skip
        if index == 0:
            convo.agent(
                "I'm sorry, that doesn't match our records. Could you check the date of birth "
                "for me once more?"
            )
            retry = wrong[1] if len(wrong) > 1 else born
            convo.user(f"Sorry about that, it's {spoken_date(retry, with_year=True)}.")
    if len(wrong) > 1:
        convo.agent(
            "I'm sorry, that doesn't match either, so I can't verify you over the phone and I "
            "can't make any changes today. The HR office can verify you in person with a photo "
            "ID."
        )
        convo.user("Okay, I'll go to the HR office then. Thank you, goodbye.")
        return False
    convo.call("verify_employee_auth", employee_id=emp, date_of_birth=born)
    return True


def verify_provider(convo: Conversation, provider: dict[str, Any]) -> None:
    convo.user(
        f"Sure. My NPI is {digits(provider['npi'])}, my facility code is "
        f"{spell(provider['facility_code'])}, and my PIN is {digits(provider['pin'])}."
    )
    convo.call("verify_provider_auth", npi=provider["npi"],
               facility_code=provider["facility_code"], pin=provider["pin"])  # fmt: skip


def staff_negotiation(wrong_tries: int) -> str:
    if wrong_tries == 0:
        return "Give your employee ID and date of birth when asked."
    if wrong_tries == 1:
        return (
            "Give your employee ID and, by mistake, date_of_birth_you_first_say_1. If the agent "
            "says it does not match, give your real date_of_birth."
        )
    return (
        "Give your employee ID and date_of_birth_you_first_say_1; if it does not match, say "
        "date_of_birth_you_first_say_2. You are sure one of them is right."
    )


def new_draft(
    ctx: FlowContext,
    world: MedicalWorld,
    caller: Person,
    convo: Conversation,
    workflow: str,
    path: PathKind,
    goal: Goal,
    opening: str,
    premise: str,
    intent: str,
    seed: dict[str, Any],
    satisfiable: bool = True,
) -> Draft:
    minutes = ctx.rng.randrange(7 * 60, 18 * 60, 5)
    return Draft(
        record_id=ctx.record_id,
        domain="medical_hr",
        current_date_time=f"{world.today.isoformat()} {minutes // 60:02d}:{minutes % 60:02d} "
        f"{ctx.rng.choice(ZONES)}",
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
        },
        convo=convo,
        seed_data=seed,
    )
