"""Fuzz: arbitrary tool names and parameters never crash the medical_hr engine.

Calls run through :class:`ToolEngine` on real records' DBs with random session tiers.
Every error keeps the DB hash unchanged, except the documented quirk of
``reactivate_privileges`` (spec 12.10): codes listed before an unknown one stay active.
"""

from __future__ import annotations

import copy
import functools
import json
import typing
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scenarios.dbhash import db_hash
from scenarios.engines.medical_hr import PARAM_MODELS, TOOLS
from scenarios.executor import ToolEngine
from tests.conftest import find_eva_root
from tests.scenarios.engines.test_medical_hr_conformance import load_initial_db, load_records

# Provider-heavy, employee-heavy, payroll/swap and onboarding records.
FUZZ_RECORDS = ("T2.1", "T5.1", "D8.1", "4.1", "D10.1")
TIERS = {
    "employee": {"employee_auth": True},
    "provider": {"provider_auth": True},
    "otp": {"otp_issued": True, "otp_auth": True},
}
JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=16),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def _dates(db: dict[str, Any]) -> list[str]:
    found = {db["_current_date"], "2025-01-01", "2026-12-31"}
    for by_dept in db["appointment_availability"].values():
        for by_date in by_dept.values():
            found.update(by_date)
    found.update(shift["date"] for shift in db["shifts"].values())
    return sorted(found)


def _slots(db: dict[str, Any]) -> list[str]:
    return sorted(
        f"{day} {time}"
        for by_dept in db["appointment_availability"].values()
        for by_date in by_dept.values()
        for day, times in by_date.items()
        for time in times
    ) + ["2026-12-31 09:00"]


def field_pools(db: dict[str, Any]) -> dict[str, list[Any]]:
    """Real identifiers of the record per parameter, so fuzzed calls reach business rules."""
    employees = list(db["employees"].values())
    providers = list(db["providers"].values())
    people = [e["employee_id"] for e in employees] + ["EMP000000"]
    deas = [p["dea_registration"] for p in providers if p.get("dea_registration")]
    privileges = [i["code"] for p in providers for i in p["privileges"]["privilege_list"]]
    tasks = [
        t["completion_code"]
        for e in employees
        for t in ((e.get("onboarding_checklist") or {}).get("tasks") or {}).values()
    ]
    pools: dict[str, list[Any]] = {
        "employee_id": people,
        "npi": [p["npi"] for p in providers] + ["0000000000"],
        "facility_code": [p["facility_code"] for p in providers] + ["ZZ-00Z"],
        "pin": [p["pin"] for p in providers] + ["0000"],
        "otp_code": [e["otp_code"] for e in employees] + ["000000"],
        "date_of_birth": [e["date_of_birth"] for e in employees] + ["1970-01-01"],
        "date": _dates(db),
        "appointment_datetime": _slots(db),
        "dea_number": [d["dea_number"] for d in deas] + ["ZZ0000000"],
        "state_license_number": [n for p in providers for n in p["licenses"]] + ["MA-MD-000000"],
        "shift_id": list(db["shifts"]) + ["SHF-20990101-0000"],
        "case_id": [f"CASE-{x}-{e[-6:]}" for x in ("FMLA", "PRV", "LIC") for e in people],
        "completion_code": tasks + ["ZZZZ", "zz"],
        "clearance_code": [p["clearance_code"] for p in providers if p["clearance_code"]],
        "state_code": ["MA", "CA", "ny"],
        "unit_code": list(db["unit_cert_requirements"]) + ["9Z-NONE"],
        "privilege_code": privileges + ["PRV-ZZZ-999"],
        "visa_petition_number": [
            e["visa_record"]["petition_number"] for e in employees if e.get("visa_record")
        ]
        + ["WAC0000000000"],
        "extension_days": [30, 60, 90, 45, "60", 60.0],
        "usd": [0, 500_000, 999_999, 1_000_000, 2_000_000, "1000000"],
        "corrected_hours": [0, 0.5, 8, 12.0, 24, 24.01, "8"],
        "name": ["Jean-Luc", "O'Brien", "X", "Priya"],
        "text": ["A12345678", "US", "POL-2026-ABC123", "IOE0912345678", "help"],
    }
    pools["clearance_code"].append("CLR-OCC-000000")
    return pools


def _pool_key(name: str) -> str:
    if name in ("colleague_employee_id",):
        return "employee_id"
    if name == "supervising_physician_npi":
        return "npi"
    if name.endswith("facility_code"):
        return "facility_code"
    if name.endswith("state_code"):
        return "state_code"
    if name.endswith("date") or name.endswith("_date_of_birth"):
        return "date"
    if name.endswith("limit_usd"):
        return "usd"
    if name.startswith("dependent_") and name.endswith("name"):
        return "name"
    if name == "uscis_receipt_number":
        return "visa_petition_number"
    return name


def plausible(name: str, annotation: Any, pools: dict[str, list[Any]]) -> st.SearchStrategy[Any]:
    if typing.get_origin(annotation) is typing.Literal:
        return st.sampled_from([*typing.get_args(annotation), "bogus"])
    if name == "privilege_codes":
        return st.lists(st.sampled_from(pools["privilege_code"]), max_size=4)
    if name == "blackout_dates":
        return st.lists(st.sampled_from(pools["date"]), max_size=3)
    key = _pool_key(name)
    return st.sampled_from(pools[key] if key in pools else pools["text"])


@st.composite
def tool_call(draw: st.DrawFn, pools: dict[str, list[Any]]) -> tuple[str, Any]:
    name = draw(st.sampled_from([*sorted(TOOLS), "", "drop_db", "Verify_Employee_Auth"]))
    if name not in PARAM_MODELS or draw(st.integers(0, 9)) == 0:
        return name, draw(st.dictionaries(st.text(max_size=10), JUNK, max_size=4) | JUNK)
    params: dict[str, Any] = {}
    for field, info in PARAM_MODELS[name].model_fields.items():
        choice = draw(st.sampled_from(["plausible"] * 30 + ["omit", "junk"]))
        if choice == "plausible":
            params[field] = draw(plausible(field, info.annotation, pools))
        elif choice == "junk":
            params[field] = draw(JUNK)
    if draw(st.booleans()):
        params[draw(st.text(max_size=8))] = draw(JUNK)
    return name, params


@functools.cache
def record_setup(record_id: str) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    root = find_eva_root()
    assert root is not None
    db = load_initial_db(root, load_records(root)[record_id])
    return db, field_pools(db)


@st.composite
def scenario(draw: st.DrawFn) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    db, pools = record_setup(draw(st.sampled_from(FUZZ_RECORDS)))
    db = copy.deepcopy(db)
    for tier in draw(st.sets(st.sampled_from(sorted(TIERS)))):
        db["session"].update(TIERS[tier])
    return db, draw(st.lists(tool_call(pools), min_size=1, max_size=6))


def expected_after_quirk(before: dict[str, Any], npi: Any, activated: list[str]) -> str:
    """The hash after ``reactivate_privileges`` activated ``activated`` then failed."""
    patched = copy.deepcopy(before)
    for item in patched["providers"][npi]["privileges"]["privilege_list"]:
        if item["code"] in activated:
            item["status"] = "active"
    return db_hash(patched)


def check_response(
    name: str, params: Any, response: Any, before: dict[str, Any], after: str
) -> None:
    assert isinstance(response, dict)
    json.dumps(response)  # responses must be JSON-serialisable as the agent receives them
    assert response["status"] in ("success", "error")
    if response["status"] == "success":
        return
    assert isinstance(response["error_type"], str) and response["error_type"]
    assert isinstance(response["message"], str) and response["message"]
    assert response["error_type"] != "execution_error", response
    if name == "reactivate_privileges" and response["error_type"] == "privilege_not_found":
        assert after == expected_after_quirk(
            before, params["npi"], response["activated_privileges"]
        )
    else:
        assert after == db_hash(before), (name, params, response)


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=scenario())
def test_random_calls_never_crash_and_errors_keep_the_db(
    eva_root: Path, case: tuple[dict[str, Any], list[tuple[str, Any]]]
) -> None:
    db, calls = case
    engine = ToolEngine("medical_hr", db, sorted(TOOLS))
    for name, params in calls:
        before = copy.deepcopy(engine.db)
        response = engine.execute(name, params)
        check_response(name, params, response, before, engine.final_hash)
