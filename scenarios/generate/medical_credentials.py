"""Medical HR provider workflows: license extensions and malpractice coverage."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from random import Random
from typing import Any

from scenarios.generate.conversation import Conversation
from scenarios.generate.flowkit import CLOSING_QUESTION, FlowContext, goodbye, pick
from scenarios.generate.medical_talk import (
    ASK_PROVIDER,
    new_draft,
    open_call,
    provider_info,
    start_world,
    verify_provider,
)
from scenarios.generate.medical_world import CARRIERS, MedicalWorld
from scenarios.generate.record import Draft, Goal
from scenarios.generate.spoken import amount, digits, number, spell, spoken_date

EXTENSION_WINDOW = 60


def _refuse_early(convo: Conversation, expires: date, days_left: int) -> None:
    opens = (expires - timedelta(days=EXTENSION_WINDOW)).isoformat()
    convo.agent(
        f"Your license expires on {spoken_date(expires.isoformat())}, {number(days_left)} days "
        f"from now. Extensions can only be requested within sixty days of expiration, so I "
        f"can't submit one today. You can call back from {spoken_date(opens)}."
    )
    convo.user("Oh, I see. I'll call back closer to the date then. Thanks, goodbye.")


def _submit_extension(
    convo: Conversation,
    lic: dict[str, str],
    supervisor: dict[str, Any] | None,
    expires: date,
    rng: Random,
) -> dict[str, Any]:
    """Choice, read-back, submission and committee notice; returns the caller's choice."""
    convo.agent(
        f"Your license expires on {spoken_date(expires.isoformat())} and is eligible. I can "
        "request a provisional extension, or a supervised one with a supervising "
        "physician, for thirty, sixty or ninety days. Which would you like?"
    )
    days = rng.choice((30, 60, 90))
    kind = "supervised" if supervisor else "provisional"
    said = f"A {kind} extension for {number(days)} days, please."
    extra, who = {}, ""
    if supervisor:
        said += f" My supervising physician's NPI is {digits(supervisor['npi'])}."
        extra = {"supervising_physician_npi": supervisor["npi"]}
        who = f", supervised by Dr. {supervisor['last_name']}"
    convo.user(said)
    convo.agent(
        f"To confirm: a {kind} extension of {number(days)} days on license "
        f"{spell(lic['state_license_number'])}{who}. Shall I submit it?"
    )
    convo.user("Yes, go ahead.")
    case = convo.call("submit_license_extension", extension_type=kind, extension_days=days,
                      **lic, **extra)["case_id"]  # fmt: skip
    convo.call("notify_credentialing_committee", npi=lic["npi"], case_id=case,
               notification_type="license_extension_submitted")  # fmt: skip
    convo.agent(
        f"It's submitted. Your case number is {spell(case)}, and the credentialing "
        f"committee has been notified. {CLOSING_QUESTION}"
    )
    convo.user(goodbye(rng))
    return {"extension_type": kind, "extension_days": days} | extra


def _extension_goal(variant: str, info: dict[str, Any]) -> Goal:
    early = variant == "too_early"
    ask = "Ask for the extension type and length in information_required" + (
        " and give your supervising physician's NPI." if variant == "supervised" else "."
    )
    return Goal(
        summary="Your license expires soon and you want a temporary extension"
        + (
            "."
            if early
            else f": a {info.get('extension_type')} one for {info.get('extension_days')} days."
        ),  # fmt: skip
        must_have=["An extension request is submitted, if the license is eligible."],
        negotiation=[
            "Give your NPI, facility code and PIN when asked, then the license number.",
            "If the agent says it is too early, accept it." if early else ask,
        ],
        resolution="The agent gives you a case number, or explains when you can apply. Say "
        "goodbye and end the call.",
        failure="If the agent refuses, do not argue; say goodbye and end the call.",
        information=info,
    )


def license_extension(ctx: FlowContext, variant: str) -> Draft:
    """A license extension: provisional, supervised, or refused as too early."""
    rng = ctx.rng
    world = start_world(ctx)
    caller = world.names.person()
    role = rng.choice(("RN", "MD", "NP"))
    provider = world.provider(caller, role)
    supervisor = world.provider(world.names.person(), "MD")
    number_on_file, license_ = next(iter(provider["licenses"].items()))
    early = variant == "too_early"
    days_left = rng.randint(75, 140) if early else rng.randint(10, 55)
    expires = world.today + timedelta(days=days_left)
    license_["expiration_date"] = expires.isoformat()
    world.provider(world.names.person(), "RN")
    opening = pick(
        rng,
        "Hi, my license expires soon and I need a temporary extension while my renewal is "
        "processed.",
        "Hello, I'd like to request an extension on my state license.",
    )
    convo = open_call(ctx, world, opening, f"I can help with that. {ASK_PROVIDER}")
    verify_provider(convo, provider)
    convo.agent(f"Thank you, {caller.first}, you're verified. What's the state license number?")
    convo.user(f"It's {spell(number_on_file)}.")
    lic = {"npi": provider["npi"], "state_license_number": number_on_file}
    convo.call("get_license_record", **lic)
    info = provider_info(provider) | {"state_license_number": number_on_file}
    if early:
        convo.call("check_extension_eligibility", "extension_too_early", **lic)
        _refuse_early(convo, expires, days_left)
    else:
        convo.call("check_extension_eligibility", **lic)
        chosen = supervisor if variant == "supervised" else None
        info |= _submit_extension(convo, lic, chosen, expires, rng)
    return new_draft(
        ctx, world, caller, convo, "license_extension",
        "policy_refusal" if early else "success", _extension_goal(variant, info), opening,
        premise=f"{caller.first}'s {role} license expires on {expires.isoformat()}.",
        intent="license extension", satisfiable=not early, seed=lic,
    )  # fmt: skip


@dataclass(frozen=True)
class Coverage:
    """A new malpractice policy as the caller reads it out."""

    carrier: str
    policy: str
    per_occurrence: int
    aggregate: int
    start: date
    end: date

    def params(self) -> dict[str, Any]:
        return {
            "new_carrier": self.carrier,
            "new_policy_number": self.policy,
            "per_occurrence_limit_usd": self.per_occurrence,
            "aggregate_limit_usd": self.aggregate,
            "effective_date": self.start.isoformat(),
            "expiration_date": self.end.isoformat(),
        }


def _new_coverage(world: MedicalWorld, old: str, rng: Random) -> Coverage:
    carrier = rng.choice(sorted(c for c in CARRIERS if c != old))
    policy = f"POL-{world.today.year}-{world.code(6)}"
    per_occurrence = rng.choice((500_000, 1_000_000, 2_000_000))
    start = (date(world.today.year, world.today.month, 1) + timedelta(days=32)).replace(day=1)
    end = start.replace(year=start.year + 1) - timedelta(days=1)
    return Coverage(carrier, policy, per_occurrence, per_occurrence * 3, start, end)


def _read_back(convo: Conversation, new: Coverage) -> None:
    """The caller gives the policy; the agent reads it back (flagging low limits)."""
    name = CARRIERS[new.carrier]
    convo.user(
        f"The new carrier is {name}, policy number {spell(new.policy)}. The limits are "
        f"{amount(new.per_occurrence)} per occurrence and {amount(new.aggregate)} aggregate, "
        f"effective {spoken_date(new.start.isoformat(), with_year=True)} through "
        f"{spoken_date(new.end.isoformat(), with_year=True)}."
    )
    warning = (
        " Because the per occurrence limit is under one million dollars, your file will be "
        "flagged for a re-credentialing review."
        if new.per_occurrence < 1_000_000
        else ""
    )
    convo.agent(
        f"Let me read that back: {name}, policy {spell(new.policy)}, "
        f"{amount(new.per_occurrence)} per occurrence, {amount(new.aggregate)} aggregate, from "
        f"{spoken_date(new.start.isoformat())} to {spoken_date(new.end.isoformat())}.{warning} "
        "Shall I update your record?"
    )
    convo.user("Yes, that's all correct. Please update it.")


def _coverage_goal(new: Coverage, info: dict[str, Any]) -> Goal:
    return Goal(
        summary=f"You switched your malpractice insurance to {CARRIERS[new.carrier]} and want "
        "the new coverage recorded.",
        must_have=["The new carrier, policy number, limits and dates are on file exactly."],
        negotiation=[
            "Give your NPI, facility code and PIN when asked.",
            "Give all policy details in one go when asked; confirm the read-back if it is "
            "correct, otherwise correct it.",
        ],
        resolution="The agent confirms the update with a case number. Say goodbye and end "
        "the call.",
        failure="If the agent cannot record the coverage, say goodbye and end the call.",
        information=info,
    )


def malpractice_update(ctx: FlowContext) -> Draft:
    """New malpractice coverage recorded with its dollar limits."""
    world = start_world(ctx)
    caller = world.names.person()
    provider = world.provider(caller, ctx.rng.choice(("MD", "DO")))
    old = provider["malpractice"]["carrier"]
    new = _new_coverage(world, old, ctx.rng)
    opening = "Hi, I changed malpractice carriers and need to update my coverage on file."
    convo = open_call(ctx, world, opening, f"I can update that. {ASK_PROVIDER}")
    verify_provider(convo, provider)
    npi = provider["npi"]
    convo.call("get_malpractice_record", npi=npi)
    convo.agent(
        f"Thank you, {caller.first}. I see your current policy with {CARRIERS[old]}. What are "
        "the details of the new policy: carrier, policy number, limits and dates?"
    )
    _read_back(convo, new)
    case = convo.call("update_malpractice_coverage", npi=npi, **new.params())["case_id"]
    convo.call("notify_credentialing_committee", npi=npi, case_id=case,
               notification_type="malpractice_updated")  # fmt: skip
    convo.agent(
        f"Your coverage is updated, case number {spell(case)}, and the credentialing committee "
        f"has been notified. {CLOSING_QUESTION}"
    )
    convo.user(goodbye(ctx.rng))
    info = provider_info(provider) | new.params() | {"new_carrier": CARRIERS[new.carrier]}
    return new_draft(
        ctx, world, caller, convo, "malpractice_update", "success", _coverage_goal(new, info),
        opening, premise=f"{caller.first} moved from {CARRIERS[old]} to {CARRIERS[new.carrier]}"
        + (" with a lower per-occurrence limit." if new.per_occurrence < 1_000_000 else "."),
        intent="malpractice coverage update", seed={"npi": npi},
    )  # fmt: skip
