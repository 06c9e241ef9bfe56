"""Shared machinery of the medical_hr tools: registration, auth gates, lookups, IDs.

Every tool is registered with :func:`medical_tool`, which validates the parameters
against the tool's model, enforces the session tier (spec 2.4) and only then runs the
business rules. Tools return error dicts for business failures; they never raise.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from enum import Enum
from typing import Any, TypeVar

from evaflow_core.registry import Registry
from scenarios.engines import ToolFn
from scenarios.engines.medical_hr.params import ToolParams
from scenarios.engines.medical_hr.validation import parse_params

P = TypeVar("P", bound=ToolParams)
Response = dict[str, Any]
Db = dict[str, Any]

MEDICAL_HR_TOOLS: Registry[ToolFn] = Registry("medical_hr tool")
PARAM_MODELS: dict[str, type[ToolParams]] = {}
"""Tool name -> its parameter model (for schema checks against the agent config)."""


class Gate(Enum):
    """Session tier a tool requires; the value names the tier in error messages."""

    NONE = "none"
    EMPLOYEE = "employee"
    PROVIDER = "provider"
    OTP = "otp"
    EMPLOYEE_OR_OTP = "employee or otp"
    PROVIDER_OR_OTP = "provider or otp"
    PROVIDER_AND_OTP = "provider and otp"


_GATE_FLAGS: dict[Gate, tuple[str, ...]] = {
    Gate.EMPLOYEE: ("employee_auth",),
    Gate.PROVIDER: ("provider_auth",),
    Gate.OTP: ("otp_auth",),
    Gate.EMPLOYEE_OR_OTP: ("employee_auth", "otp_auth"),
    Gate.PROVIDER_OR_OTP: ("provider_auth", "otp_auth"),
}


def error(error_type: str, message: str, **extra: Any) -> Response:
    return {"status": "error", "error_type": error_type, "message": message, **extra}


def success(**payload: Any) -> Response:
    return {"status": "success", **payload}


def session_of(db: Db) -> dict[str, Any]:
    """The DB's session dict, created on first use (the hash ignores it)."""
    session = db.get("session")
    if not isinstance(session, dict):
        session = db["session"] = {}
    return session


def check_gate(gate: Gate, session: dict[str, Any]) -> Response | None:
    """``None`` when the session satisfies ``gate``, else the authentication error."""
    if gate is Gate.NONE:
        return None
    if gate is Gate.PROVIDER_AND_OTP:
        if session.get("provider_auth") is not True:
            return error("authentication_required", "Authentication (provider) required")
        if session.get("otp_auth") is not True:
            return error(
                "second_factor_required",
                "OTP verification is required as a second factor for DEA records",
            )
        return None
    if any(session.get(flag) is True for flag in _GATE_FLAGS[gate]):
        return None
    return error("authentication_required", f"Authentication ({gate.value}) required")


def medical_tool(
    name: str, model: type[P], gate: Gate
) -> Callable[[Callable[[P, Db, int], Response]], ToolFn]:
    """Register ``fn(params_model, db, call_index)`` as the tool ``name``.

    The registered (and returned) function has the executor's signature
    ``fn(params: dict, db: dict, call_index: int) -> dict``.
    """

    def decorator(rules: Callable[[P, Db, int], Response]) -> ToolFn:
        def tool(params: dict[str, Any], db: Db, call_index: int) -> Response:
            parsed = parse_params(model, params if isinstance(params, dict) else {})
            if isinstance(parsed, dict):
                return parsed
            denied = check_gate(gate, session_of(db))
            if denied is not None:
                return denied
            return rules(parsed, db, call_index)

        tool.__name__ = tool.__qualname__ = name
        tool.__doc__ = rules.__doc__
        MEDICAL_HR_TOOLS.add(name, tool)
        PARAM_MODELS[name] = model
        return tool

    return decorator


# -- lookups ---------------------------------------------------------------------------


def find_employee(db: Db, employee_id: str) -> dict[str, Any] | None:
    found = (db.get("employees") or {}).get(employee_id)
    return found if isinstance(found, dict) else None


def find_provider(db: Db, npi: str) -> dict[str, Any] | None:
    found = (db.get("providers") or {}).get(npi)
    return found if isinstance(found, dict) else None


def employee_not_found(employee_id: str) -> Response:
    return error("employee_not_found", f"Employee {employee_id} not found")


def provider_not_found(npi: str) -> Response:
    return error("provider_not_found", f"Provider NPI {npi} not found")


def owned_shift(
    db: Db, employee_id: str, shift_id: str
) -> tuple[dict[str, Any], None] | tuple[None, Response]:
    """``(shift, None)`` if it exists and belongs to ``employee_id``, else ``(None, error)``."""
    shift = (db.get("shifts") or {}).get(shift_id)
    if not isinstance(shift, dict):
        return None, error("shift_not_found", f"Shift {shift_id} not found")
    if shift.get("employee_id") != employee_id:
        return None, error(
            "shift_not_owned", f"Shift {shift_id} does not belong to employee {employee_id}"
        )
    return shift, None


def today(db: Db) -> str:
    """The simulated current date (ISO strings compare chronologically)."""
    return str(db.get("_current_date") or "")


def snapshot(value: Any) -> Any:
    """A deep copy for responses, so later mutations never alter an earlier response."""
    return copy.deepcopy(value)


# -- identifiers and side effects ------------------------------------------------------


def case_id(prefix: str, person_id: str) -> str:
    """Deterministic case id: ``CASE-<PREFIX>-<last 6 chars of the id>``."""
    return f"CASE-{prefix}-{person_id[-6:]}"


def provider_case_id(prefix: str, provider: dict[str, Any]) -> str:
    # Provider cases are keyed by the provider's employee id, falling back to the NPI.
    return case_id(prefix, str(provider.get("employee_id") or provider.get("npi") or ""))


def add_notification(db: Db, notification: dict[str, Any]) -> None:
    """Append ``notification`` unless an identical one is already recorded."""
    notifications = db.get("notifications")
    if not isinstance(notifications, list):
        notifications = db["notifications"] = []
    if notification not in notifications:
        notifications.append(notification)
