"""The medical HR catalogue: which workflows and paths the generator covers, in order."""

from __future__ import annotations

from functools import partial

from scenarios.generate.agents import AGENT_TEXTS
from scenarios.generate.flowkit import DOMAIN_CASES, Case
from scenarios.generate.medical_credentials import license_extension, malpractice_update
from scenarios.generate.medical_hr_policy import MEDICAL_HR_AGENT
from scenarios.generate.medical_i9 import i9_verification
from scenarios.generate.medical_staff import (
    orientation_followup,
    payroll_correction,
    pto_request,
    shift_swap,
)

CASES = (
    Case("license_extension", "success", "provisional",
         partial(license_extension, variant="provisional")),
    Case("shift_swap", "success", "certified", partial(shift_swap, variant="plain")),
    Case("pto_request", "success", "open_week", partial(pto_request, blackout=False)),
    Case("orientation_followup", "success", "first_choice",
         partial(orientation_followup, variant="plain")),
    Case("malpractice_update", "success", "new_carrier", malpractice_update),
    Case("payroll_correction", "success", "open_period", partial(payroll_correction, closed=False)),
    Case("license_extension", "success", "supervised",
         partial(license_extension, variant="supervised")),
    Case("shift_swap", "auth_failure", "wrong_dob", partial(shift_swap, variant="wrong_dob")),
    Case("orientation_followup", "no_availability", "day_full",
         partial(orientation_followup, variant="no_slots")),
    Case("pto_request", "policy_refusal", "blackout", partial(pto_request, blackout=True)),
    Case("license_extension", "policy_refusal", "too_early",
         partial(license_extension, variant="too_early")),
    Case("shift_swap", "policy_refusal", "missing_cert",
         partial(shift_swap, variant="missing_cert")),
    Case("payroll_correction", "policy_refusal", "period_closed",
         partial(payroll_correction, closed=True)),
    Case("orientation_followup", "auth_failure", "dob_refused",
         partial(orientation_followup, variant="dob_refused")),
    Case("i9_verification", "success", "asked", partial(i9_verification, variant="asked")),
    Case("i9_verification", "success", "described",
         partial(i9_verification, variant="described")),
)  # fmt: skip

DOMAIN_CASES.add("medical_hr", CASES)
AGENT_TEXTS.add("medical_hr", MEDICAL_HR_AGENT)
