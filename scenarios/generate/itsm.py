"""The ITSM catalogue: which workflows and paths the generator covers, in order."""

from __future__ import annotations

from functools import partial

from scenarios.generate.agents import AGENT_TEXTS
from scenarios.generate.flowkit import DOMAIN_CASES, Case
from scenarios.generate.itsm_flows import account_unlock, incident_dispatch, laptop_replacement
from scenarios.generate.itsm_policy import ITSM_AGENT
from scenarios.generate.itsm_workspace import desk_assignment, parking_assignment, room_booking

CASES = (
    Case("account_unlock", "success", "plain", partial(account_unlock, variant="plain")),
    Case("laptop_replacement", "success", "plain", partial(laptop_replacement, variant="plain")),
    Case("desk_assignment", "success", "window_desk", partial(desk_assignment, none_free=False)),
    Case("incident_dispatch", "success", "first_slot", partial(incident_dispatch, slot_taken=False)),
    Case("room_booking", "success", "first_time", partial(room_booking, busy=False)),
    Case("parking_assignment", "success", "covered", partial(parking_assignment, too_soon=False)),
    Case("account_unlock", "auth_failure", "wrong_phone",
         partial(account_unlock, variant="wrong_phone")),
    Case("laptop_replacement", "policy_refusal", "too_new",
         partial(laptop_replacement, variant="too_new")),
    Case("desk_assignment", "no_availability", "waitlist", partial(desk_assignment, none_free=True)),
    Case("incident_dispatch", "no_availability", "slot_taken",
         partial(incident_dispatch, slot_taken=True)),
    Case("room_booking", "no_availability", "later_hour", partial(room_booking, busy=True)),
    Case("parking_assignment", "policy_refusal", "too_soon",
         partial(parking_assignment, too_soon=True)),
    Case("account_unlock", "policy_refusal", "security_hold",
         partial(account_unlock, variant="security_hold")),
    Case("laptop_replacement", "auth_failure", "phone_refused",
         partial(laptop_replacement, variant="wrong_phone")),
)  # fmt: skip

DOMAIN_CASES.add("itsm", CASES)
AGENT_TEXTS.add("itsm", ITSM_AGENT)
