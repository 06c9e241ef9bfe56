"""Shared plumbing of the ITSM tools: the tool decorator, auth gates, responses, IDs, lookups.

Lookups return either the found object or an error response (a dict with
``status == "error"``), so each tool reads as a straight line of checks.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from typing import Any, TypeVar

from pydantic import ValidationError

from evaflow_core.registry import Registry
from scenarios.engines import ToolFn
from scenarios.engines.itsm.fields import ItsmParams, validation_error_response
from scenarios.resolve import normalize_name

P = TypeVar("P", bound=ItsmParams)
Json = dict[str, Any]
Implementation = Callable[[P, Json, int], Json]

ITSM_TOOLS: Registry[ToolFn] = Registry("itsm tool")
# Parameter model of every registered tool, for schema checks against the agent YAML.
PARAM_MODELS: dict[str, type[ItsmParams]] = {}

# Session tiers (spec 2.4). Every tool not listed with another tier needs EMPLOYEE.
NO_AUTH: tuple[str, ...] = ()
EMPLOYEE: tuple[str, ...] = ("employee_auth",)
OTP: tuple[str, ...] = ("otp_auth",)
EMPLOYEE_OTP: tuple[str, ...] = ("employee_auth", "otp_auth")
MANAGER: tuple[str, ...] = ("manager_auth",)
MANAGER_OTP: tuple[str, ...] = ("manager_auth", "otp_auth")

DEFAULT_TODAY = "2026-08-12"

# Keys that change after a record is created; IDs must not depend on them (spec 2.6).
MUTABLE_KEYS = frozenset(
    {
        "status",
        "resolved_date",
        "sla_tier",
        "sla_response_hours",
        "sla_resolution_hours",
        "linked_known_error_id",
        "dispatch_id",
        "dispatch_date",
        "dispatch_window",
        "diagnostic_ref_code",
        "diagnostic_attached",
        "approval_routed_to",
        "approval_sla_deadline",
        "escalated_to",
        "escalation_sla_deadline",
        "remote_wipe_id",
        "access_review_id",
        "review_date",
    }
)
# Generated IDs inside a record (its own or a sibling's) are blanked before hashing.
GENERATED_ID = re.compile(r"^(REQ-[A-Z]+-|INC|CASE-[A-Z]+-|SEC-|CAL-)[A-Za-z0-9]+$")


def itsm_tool(
    name: str, model: type[P], auth: Sequence[str] = EMPLOYEE
) -> Callable[[Implementation[P]], ToolFn]:
    """Register ``name``: validate raw params with ``model``, check the session, then run."""

    def decorator(impl: Implementation[P]) -> ToolFn:
        @functools.wraps(impl)
        def tool(params: dict[str, Any], db: Json, call_index: int) -> Json:
            raw = params if isinstance(params, dict) else {}
            try:
                parsed = model.model_validate(raw)
            except ValidationError as exc:
                return validation_error_response(exc, raw)
            denied = require_auth(db, auth)
            if denied is not None:
                return denied
            return impl(parsed, db, call_index)

        ITSM_TOOLS.add(name, tool)
        PARAM_MODELS[name] = model
        return tool

    return decorator


def success(message: str | None = None, **payload: Any) -> Json:
    response: Json = {"status": "success", **payload}
    if message is not None:
        response["message"] = message
    return response


def error(error_type: str, message: str, **extra: Any) -> Json:
    return {"status": "error", "error_type": error_type, "message": message, **extra}


def is_error(value: Any) -> bool:
    """True for an error response (records also carry a ``status``, but never ``error_type``)."""
    return isinstance(value, dict) and value.get("status") == "error" and "error_type" in value


def session(db: Json) -> Json:
    value = db.get("session")
    if not isinstance(value, dict):
        value = {}
        db["session"] = value
    return value


def require_auth(db: Json, flags: Sequence[str]) -> Json | None:
    """``authentication_required`` naming the first missing tier (``employee_auth`` -> employee)."""
    current = db.get("session")
    if not isinstance(current, dict):
        current = {}
    for flag in flags:
        if not current.get(flag):
            return auth_required(flag)
    return None


def auth_required(flag: str) -> Json:
    tier = flag.removesuffix("_auth")
    return error("authentication_required", f"Authentication ({tier}) required")


def table(db: Json, name: str) -> Json:
    """A top-level dict table, created when a tool writes to it first."""
    value = db.get(name)
    if not isinstance(value, dict):
        value = {}
        db[name] = value
    return value


def sub_table(parent: Json, name: str) -> Json:
    value = parent.get(name)
    return value if isinstance(value, dict) else {}


# --- dates -------------------------------------------------------------------------------


def today(db: Json) -> date:
    raw = db.get("_current_date")
    try:
        return date.fromisoformat(str(raw)[:10])
    except ValueError:
        return date.fromisoformat(DEFAULT_TODAY)


def parse_date(value: Any) -> date | None:
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def plus_days(day: date, days: int) -> str:
    return (day + timedelta(days=days)).isoformat()


def deadline_48h(db: Json) -> str:
    """Today at 00:00 plus 48 hours, as the reference prints it."""
    return f"{plus_days(today(db), 2)} 00:00"


def whole_months(start: date, end: date) -> int:
    months = (end.year - start.year) * 12 + (end.month - start.month)
    return months - 1 if end.day < start.day else months


# --- generated identifiers ------------------------------------------------------------------


def _id_free(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _id_free(v) for k, v in value.items() if k not in MUTABLE_KEYS}
    if isinstance(value, list | tuple):
        return [_id_free(v) for v in value]
    if isinstance(value, str) and GENERATED_ID.match(value):
        return None
    return value


def content_hash(record: Json) -> str:
    """First 12 hex chars of the SHA-1 of a record's stable content (spec 2.6)."""
    text = json.dumps(_id_free(record), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


# --- lookups --------------------------------------------------------------------------------


def find_employee(db: Json, employee_id: str) -> Json:
    employee = sub_table(db, "employees").get(employee_id)
    if not isinstance(employee, dict):
        return error("not_found", f"Employee {employee_id} not found")
    return employee


def find_ticket(db: Json, ticket_number: str) -> Json:
    ticket = sub_table(db, "tickets").get(ticket_number)
    if not isinstance(ticket, dict):
        return error("ticket_not_found", f"Ticket {ticket_number} not found")
    return ticket


def find_request(db: Json, request_id: str) -> Json:
    request = sub_table(db, "requests").get(request_id)
    if not isinstance(request, dict):
        return error("not_found", f"Request {request_id} not found")
    return request


def full_name(employee: Json) -> str:
    return f"{employee.get('first_name') or ''} {employee.get('last_name') or ''}".strip()


def _matches_name(entry: Json, wanted: str) -> bool:
    names = [entry.get("name")] + list(entry.get("name_aliases") or [])
    return any(isinstance(n, str) and normalize_name(n) == wanted for n in names)


def resolve_place(db: Json, value: str, kind: str) -> str | Json:
    """Code of a building (``kind='building'``) or parking zone given by code, name or alias.

    Codes pass through unchanged; names match ``name``/``name_aliases`` after
    :func:`normalize_name` (spec 1.7). Failure lists the known names.
    """
    code_re, table_name, code_key = {
        "building": (r"^BLD\d{1,2}$", "buildings", "building_code"),
        "zone": (r"^PZ[A-Z]$", "zones", "zone_code"),
    }[kind]
    if re.match(code_re, value):
        return value
    entries = sub_table(sub_table(db, "facilities"), table_name)
    wanted = normalize_name(value)
    for key, entry in entries.items():
        if isinstance(entry, dict) and _matches_name(entry, wanted):
            return str(entry.get(code_key) or key)
    known = [str(e.get("name")) for e in entries.values() if isinstance(e, dict)]
    return error(
        "name_not_found",
        f"No {kind} matches '{value}'. Known {kind}s: {', '.join(known) or 'none'}",
        known_names=known,
    )


def catalog_section(db: Json, section: str) -> Json:
    """``software_catalog.applications`` / ``.licenses``; flat catalogs have none (spec 12.9)."""
    return sub_table(sub_table(db, "software_catalog"), section)


def find_catalog_entry(db: Json, section: str, name: str) -> tuple[str, Json] | None:
    wanted = normalize_name(name)
    for key, entry in catalog_section(db, section).items():
        if isinstance(entry, dict) and _matches_name(entry, wanted):
            return key, entry
    return None
