"""The airline catalogue: which workflows and paths the generator covers, in order."""

from __future__ import annotations

from functools import partial

from scenarios.generate.agents import AGENT_TEXTS
from scenarios.generate.airline_bookings import cancel_for_credit, refund_24h, seat_and_bags
from scenarios.generate.airline_choice import irrops_choice
from scenarios.generate.airline_disruptions import delay_voucher, irrops_rebook
from scenarios.generate.airline_flows import voluntary_change
from scenarios.generate.airline_policy import AIRLINE_AGENT
from scenarios.generate.flowkit import DOMAIN_CASES, Case

CASES = (
    Case("voluntary_change", "success", "plain", partial(voluntary_change, variant="plain")),
    Case("irrops_rebook", "success", "same_day", partial(irrops_rebook, overnight=False)),
    Case("cancel_for_credit", "policy_refusal", "takes_credit",
         partial(cancel_for_credit, accepts=True)),
    Case("seat_and_bags", "success", "window", partial(seat_and_bags, window_full=False)),
    Case("voluntary_change", "auth_failure", "wrong_name",
         partial(voluntary_change, variant="wrong_name")),
    Case("refund_24h", "success", "full_refund", refund_24h),
    Case("voluntary_change", "no_availability", "sold_out",
         partial(voluntary_change, variant="sold_out")),
    Case("delay_voucher", "policy_refusal", "no_hotel", delay_voucher),
    Case("irrops_rebook", "no_availability", "overnight", partial(irrops_rebook, overnight=True)),
    Case("cancel_for_credit", "policy_refusal", "keeps_flight",
         partial(cancel_for_credit, accepts=False)),
    Case("seat_and_bags", "no_availability", "window_full",
         partial(seat_and_bags, window_full=True)),
    Case("voluntary_change", "auth_failure", "wrong_code",
         partial(voluntary_change, variant="wrong_code")),
    Case("irrops_rebook", "success", "choice_and_extras",
         partial(irrops_choice, closes_in_answer=False)),
    Case("irrops_rebook", "success", "choice_extras_goodbye",
         partial(irrops_choice, closes_in_answer=True)),
)  # fmt: skip

DOMAIN_CASES.add("airline", CASES)
AGENT_TEXTS.add("airline", AIRLINE_AGENT)
