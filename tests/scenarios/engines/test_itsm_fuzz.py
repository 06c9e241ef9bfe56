"""Fuzz: arbitrary ITSM tool names and parameters never crash the engine or corrupt the DB.

Calls mix real identifiers from a reference record's DB (so business rules are reached)
with missing, extra, mistyped and malformed values. Every error must leave the DB hash
unchanged, except the one documented quirk: ``submit_mfa_reset`` stores a security case
and still answers ``in_person_required`` (spec 2.6).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scenarios.dbhash import db_hash
from scenarios.executor import ToolEngine
from tests.scenarios.engines.test_itsm_conformance import (
    agent_tools,
    load_initial_db,
    load_records,
)

# Hardware + access requests, group approval, off-boarding: together they touch most tables.
FUZZ_RECORDS = ("12", "27", "30", "35")
FULL_SESSION = {"employee_auth": True, "manager_auth": True, "otp_auth": True, "otp_issued": True}
JUNK = (
    st.none()
    | st.booleans()
    | st.integers(-3, 10**7)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["", " ", "n/a", "NULL", "EMP", "REQ-HW-", "INC", "FL", "BLD", "2026-02-30"])
    | st.lists(st.integers(), max_size=2)
    | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
)


def _names(entries: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for entry in entries.values():
        if isinstance(entry, dict):
            out += [entry.get("name") or ""] + list(entry.get("name_aliases") or [])
    return out


def value_pool(db: dict[str, Any]) -> list[Any]:
    """Real identifiers and plausible values taken from the record's DB."""
    facilities = db["facilities"]
    catalog = db["software_catalog"]
    employees = db["employees"].values()
    pool: list[Any] = [*db["employees"], *db["assets"], *db["tickets"], *db["requests"]]
    pool += [*facilities["desks"], *facilities["parking"], *facilities["conference_rooms"]]
    pool += _names(facilities["buildings"]) + _names(facilities["zones"]) + ["BLD3", "PZA"]
    for section in ("applications", "licenses"):
        entries = catalog.get(section) or {}
        pool += [*entries] + _names(entries)
    pool += [*db["access_groups"], *db["permission_templates"], *db["field_dispatch_availability"]]
    pool += [e.get(k) for e in employees for k in ("phone_last_four", "otp_code")]
    pool += [e.get("manager_auth_code") for e in employees] + ["FL1", "FL2", "FL3"]
    pool += [lic["license_assignment_id"] for e in employees for lic in e["software_licenses"]]
    pool += [db["_current_date"], "2026-12-01", "2020-01-01", "09:00", "10:30", "23:59", 4, 30]
    return [v for v in pool if v is not None]


@pytest.fixture(scope="module")
def worlds(eva_root: Path) -> list[tuple[dict[str, Any], list[dict[str, Any]], list[Any]]]:
    records = load_records(eva_root)
    tools = agent_tools(eva_root)
    out = []
    for record_id in FUZZ_RECORDS:
        db = load_initial_db(eva_root, records[record_id])
        out.append((db, tools, value_pool(db)))
    return out


@st.composite
def tool_call(draw: st.DrawFn, tools: list[dict[str, Any]], pool: list[Any]) -> tuple[str, Any]:
    spec = draw(st.sampled_from(tools))
    name = draw(st.sampled_from([spec["id"]] * 8 + ["no_such_tool", spec["id"].upper(), ""]))
    declared = [p for key in ("required_parameters", "optional_parameters")
                for p in spec.get(key) or []]  # fmt: skip
    params: dict[str, Any] = {}
    for param in declared:
        if draw(st.integers(0, 9)) == 0:
            continue  # missing
        choices = st.sampled_from(pool) | JUNK
        if param.get("enum"):
            choices = st.sampled_from(param["enum"]) | choices
        if param["type"] in ("list", "array"):
            choices = st.lists(st.sampled_from(pool) | JUNK, max_size=3) | choices
        params[param["name"]] = draw(choices)
    params.update(draw(st.dictionaries(st.sampled_from(["extra", "note", "id"]), JUNK, max_size=1)))
    raw: Any = draw(st.sampled_from([params] * 9 + [None, [params], "params"]))
    return name, raw


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_fuzzed_calls_never_crash_or_corrupt(
    worlds: list[tuple[dict[str, Any], list[dict[str, Any]], list[Any]]], data: st.DataObject
) -> None:
    db, tools, pool = data.draw(st.sampled_from(worlds))
    start = dict(db, session=dict(FULL_SESSION) if data.draw(st.booleans()) else {})
    engine = ToolEngine("itsm", start, [t["id"] for t in tools])
    for name, raw in data.draw(st.lists(tool_call(tools, pool), min_size=1, max_size=6)):
        before = db_hash(engine.db)
        cases_before = set(engine.db.get("security_cases", {}))
        response = engine.execute(name, raw)
        json.dumps(response)  # responses must stay JSON-serialisable
        assert response["status"] in ("success", "error")
        if response["status"] == "success":
            continue
        assert isinstance(response["error_type"], str) and isinstance(response["message"], str)
        assert response["error_type"] != "execution_error", response["message"]
        if name == "submit_mfa_reset" and response["error_type"] == "in_person_required":
            added = set(engine.db["security_cases"]) - cases_before
            assert added <= {response["security_case_id"]}
            assert response["security_case_id"] in engine.db["security_cases"]
        else:
            assert db_hash(engine.db) == before, (name, raw, response)
