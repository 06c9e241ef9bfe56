"""tool_call_validity (spec 4.6): share of the agent's tool calls that were well-formed.

A call is invalid when the executor rejected it (unknown tool, missing function, crash),
when no field-specific rule caught a bad parameter (``invalid_parameter``), or when a
parameter failed validation with one of the field error types **of the call's own domain**.

Deliberate fix of the reference quirk (spec 12.8): the reference checks every domain
against the airline field map, so ITSM / medical HR format errors such as
``invalid_employee_id_format`` count as valid calls there. Here each domain's own field map
is read from its engine (the single source of truth for which error types mean "bad
parameter"), and any ``*_format`` error type is a format rejection by construction.
Business errors (not_found, authentication_failed, invalid_access_level, ...) are answers
to well-formed calls and stay valid.
"""

from __future__ import annotations

import importlib
from collections import Counter
from functools import cache
from typing import Any

from tasks.metrics.base import MetricInfo, make_score, register_metric, sub_score
from tasks.metrics.context import MetricContext
from tasks.records import MetricScore, ToolCallRecord

INFO = MetricInfo(
    name="tool_call_validity",
    category="diagnostic",
    version="v0.1",
    exclude_from_pass_at_k=True,
    description="Share of tool calls not rejected as malformed (per-domain validation errors)",
)

EXECUTOR_ERRORS: tuple[str, ...] = (
    "tool_not_found",
    "function_not_found",
    "execution_error",
    "invalid_parameter",
)
# Spec 2.3, used if the airline engine cannot be imported.
AIRLINE_FIELD_ERRORS = frozenset(
    {
        "invalid_rebooking_type",
        "invalid_fare_class",
        "invalid_meal_type",
        "invalid_credit_reason",
        "invalid_voucher_reason",
        "invalid_refund_type",
        "invalid_seat_preference",
        "invalid_cancellation_reason",
        "invalid_confirmation_number_format",
        "invalid_flight_number_format",
        "invalid_date_format",
        "invalid_journey_id_format",
        "invalid_passenger_id_format",
        "invalid_airport_code_format",
        "invalid_bag_count",
    }
)
# Where each domain engine keeps its field -> error type table.
ENGINE_FIELD_MAPS: dict[str, tuple[str, str]] = {
    "airline": ("scenarios.engines.airline.params", "FIELD_ERROR_TYPES"),
    "itsm": ("scenarios.engines.itsm.fields", "FIELD_FORMATS"),
    "medical_hr": ("scenarios.engines.medical_hr.validation", "FIELD_ERROR_TYPES"),
}


@cache
def field_error_types(domain: str) -> frozenset[str]:
    """The parameter-validation error types of ``domain`` (empty for an unknown domain)."""
    found: set[str] = set(AIRLINE_FIELD_ERRORS) if domain == "airline" else set()
    location = ENGINE_FIELD_MAPS.get(domain)
    if location is None:
        return frozenset(found)
    try:
        table = getattr(importlib.import_module(location[0]), location[1])
    except (ImportError, AttributeError):
        return frozenset(found)
    for value in table.values():
        error_type = value if isinstance(value, str) else getattr(value, "error_type", None)
        if isinstance(error_type, str):
            found.add(error_type)
    return frozenset(found)


def is_invalid_call(domain: str, error_type: str | None) -> bool:
    if not error_type:
        return False
    return (
        error_type in EXECUTOR_ERRORS
        or error_type in field_error_types(domain)
        or error_type.endswith("_format")
    )


def _error_entry(call: ToolCallRecord) -> dict[str, Any]:
    return {
        "index": call.index,
        "tool": call.tool_name,
        "error_type": call.error_type,
        "message": call.response.get("message"),
        "parameters": call.params,
    }


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    domain = ctx.scenario.domain
    calls = ctx.tool_calls
    if not calls:
        subs = {"num_tool_calls": sub_score(INFO, "num_tool_calls", 0, None)}
        return make_score(INFO, 1.0, details={"num_tool_calls": 0}, sub_metrics=subs)
    invalid = [c for c in calls if is_invalid_call(domain, c.error_type)]
    counts = Counter(str(c.error_type) for c in invalid)
    known = sorted(set(EXECUTOR_ERRORS) | field_error_types(domain) | set(counts))
    subs = {"num_tool_calls": sub_score(INFO, "num_tool_calls", len(calls), None)}
    for error_type in known:
        key = f"{error_type}_rate"
        subs[key] = sub_score(INFO, key, round(counts.get(error_type, 0) / len(calls), 4))
    score = round((len(calls) - len(invalid)) / len(calls), 4)
    details = {
        "domain": domain,
        "num_tool_calls": len(calls),
        "num_valid": len(calls) - len(invalid),
        "num_invalid": len(invalid),
        "errors": [_error_entry(c) for c in invalid],
    }
    return make_score(INFO, score, details=details, sub_metrics=subs)
