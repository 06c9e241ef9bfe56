"""Medical HR I-9 flow: a new hire whose onboarding is set up submits I-9 documents.

The submission's enum parameters (verification action, document list, document type) are
values the caller knows as the schema's options said as words ("LIST A", "PERM RESIDENT
CARD"), the shape of EVA's I-9 records. Two ways the trace's caller gives them:

- ``asked``: the agent asks for each parameter in turn and the caller answers each with
  the option's words (EVA's own I-9 records read like this);
- ``described``: the caller describes the document in its own words once ("my green
  card, my first I-9"), so a policy that follows the trace cannot read the options there
  and has to ask the caller for each of them.
"""

from __future__ import annotations

from datetime import timedelta
from random import Random
from typing import Any

from scenarios.generate.conversation import Conversation
from scenarios.generate.flowkit import CLOSING_QUESTION, FlowContext, goodbye
from scenarios.generate.medical_staff import simple_goal
from scenarios.generate.medical_talk import (
    ASK_STAFF,
    new_draft,
    open_call,
    staff_info,
    staff_negotiation,
    start_world,
    verify_staff,
)
from scenarios.generate.record import Draft
from scenarios.generate.spoken import spell, spoken_date

# Document type -> (the caller's own words for it, how its number looks).
DOCUMENTS = {
    "PERM_RESIDENT_CARD": ("my green card, my permanent resident card", "LLLDDDDDDD"),
    "US_PASSPORT": ("my U.S. passport", "LDDDDDDDD"),
    "EAD": ("my employment authorization card", "LLLDDDDDDDDD"),
}
ASKS = (
    ("verification_action", "Is this an initial verification or a reverification?"),
    ("document_list_type", "Which document list is it from: List A, List B or List C?"),
    ("document_type_code", "What type of document is it?"),
    ("document_number", "What is the document number?"),
    ("document_expiration_date", "When does it expire, and which country issued it?"),
)


def _number(shape: str, rng: Random) -> str:
    letters = "ABCDEFGHJKLMNPRSTUVWXYZ"
    return "".join(rng.choice(letters) if c == "L" else str(rng.randint(0, 9)) for c in shape)


def option_words(value: str) -> str:
    """An enum option said as the caller's information shows it: "LIST_A" -> "LIST A"."""
    return value.replace("_", " ")


def _answer(key: str, value: str, country: str) -> str:
    if key == "document_number":
        return f"It's {spell(value)}."
    if key == "document_expiration_date":  # asked together with the issuing country
        return f"{spoken_date(value, with_year=True)}. {option_words(country)}."
    return f"{option_words(value)}."


def _give_documents(convo: Conversation, submit: dict[str, Any], variant: str) -> None:
    if variant == "asked":
        for index, (key, ask) in enumerate(ASKS):
            prefix = "Great, I can submit that for you. " if index == 0 else ""
            convo.agent(prefix + ask)
            convo.user(_answer(key, submit[key], submit["issuing_country_code"]))
        return
    words = DOCUMENTS[submit["document_type_code"]][0]
    convo.agent("Great, which document are you using for your I-9?")
    convo.user(
        f"It's my first one. I'm using {words}, number {spell(submit['document_number'])}, "
        f"and it expires {spoken_date(submit['document_expiration_date'], with_year=True)}. "
        "It was issued in the US."
    )


def i9_verification(ctx: FlowContext, variant: str) -> Draft:
    """A new hire submits I-9 documents after checking the onboarding checklist is live."""
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    record = world.employee(caller, hired_days=rng.randint(2, 12))
    record["onboarding_checklist"]["tasks"] = {
        "I9_VERIFY": {"status": "pending", "completion_code": _number("LLDDDD", rng)},
        "BADGE_PICKUP": {"status": "pending", "completion_code": _number("LLDDDD", rng)},
    }
    kind = rng.choice(sorted(DOCUMENTS))
    expires = world.today + timedelta(days=rng.randint(400, 3000))
    emp = record["employee_id"]
    submit = {
        "employee_id": emp,
        "verification_action": "initial_verification",
        "document_list_type": "LIST_A",
        "document_type_code": kind,
        "document_number": _number(DOCUMENTS[kind][1], rng),
        "document_expiration_date": expires.isoformat(),
        "issuing_country_code": "US",
    }
    opening = "Hi, I'm a new hire and I need to submit my I-nine documents."
    convo = open_call(ctx, world, opening, f"Happy to help with that. {ASK_STAFF}")
    info = staff_info(record) | {k: v for k, v in submit.items() if k != "employee_id"}
    verify_staff(convo, record, info)
    convo.call("get_onboarding_checklist", employee_id=emp)
    _give_documents(convo, submit, variant)
    # Submitting cannot be undone: the agent reads the details back and waits for a yes.
    words = DOCUMENTS[submit["document_type_code"]][0].split(", ")[-1]
    convo.agent(
        f"So that's an initial verification with {words.replace('my ', 'your ')}, number "
        f"{spell(submit['document_number'])}, expiring "
        f"{spoken_date(submit['document_expiration_date'], with_year=True)}, issued in the US. "
        "Shall I submit it?"
    )
    convo.user("Yes, please submit it.")
    case = convo.call("submit_i9_verification", **submit)["case_id"]
    convo.call("notify_hr_compliance", employee_id=emp, case_id=case,
               notification_type="i9_verified")  # fmt: skip
    convo.agent(f"Your I-9 is verified, case number {spell(case)}, and HR compliance has been "
                f"notified. {CLOSING_QUESTION}")  # fmt: skip
    convo.user(goodbye(rng))
    goal = simple_goal(
        "You are a new hire and want your I-9 work authorization verified.",
        "Your I-9 initial verification is submitted with your document.",
        [staff_negotiation(0),
         "Give each detail of your document the agent asks for, as your information shows it."],
        "The agent confirms the I-9 with a case number.", info,
    )  # fmt: skip
    return new_draft(
        ctx, world, caller, convo, "i9_verification", "success", goal, opening,
        premise=f"{caller.first} started recently and must complete the I-9.",
        intent="I-9 verification", seed={"employee_id": emp},
    )  # fmt: skip
