"""Fixtures for scenario-core tests: the EVA data loaded once, and a tiny scenario pack.

The tiny pack runs on a fake two-tool engine (patched into ``scenarios.executor``) that
derives ticket IDs from a content hash like the ITSM engine, while its golden trace
quotes a stale counter-style ID. That reproduces the chaining problem without depending
on the real domain engines.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from scenarios.loader import load_eva_scenarios
from scenarios.models import Scenario

PACK_DOMAIN = "itsm"
STALE_ID = "INC0000001"


def create_ticket(params: dict[str, Any], db: dict[str, Any], call_index: int) -> dict[str, Any]:
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()
    ticket = f"INC{digest[:12]}"
    db.setdefault("tickets", {})[ticket] = {
        "employee_id": params["employee_id"],
        "summary": params["summary"],
        "status": "open",
    }
    return {"status": "success", "ticket_number": ticket, "message": f"Created {ticket}"}


def close_ticket(params: dict[str, Any], db: dict[str, Any], call_index: int) -> dict[str, Any]:
    ticket = db.get("tickets", {}).get(params.get("ticket_number"))
    if ticket is None:
        return {"status": "error", "error_type": "ticket_not_found", "message": "No such ticket"}
    ticket["status"] = "closed"
    return {"status": "success", "ticket_number": params["ticket_number"]}


FAKE_TOOLS = {"create_ticket": create_ticket, "close_ticket": close_ticket}

AGENT: dict[str, Any] = {
    "id": "agent_itsm",
    "name": "Test agent",
    "description": "Test service desk",
    "role": "You are a test agent.",
    "instructions": "Help the caller.",
    "tools": [
        {
            "id": "create_ticket",
            "name": "create_ticket",
            "description": "Create a ticket",
            "tool_type": "write",
            "required_parameters": [
                {"name": "employee_id", "type": "string", "description": "Employee"},
                {"name": "summary", "type": "string", "description": "Summary"},
            ],
        },
        {
            "id": "close_ticket",
            "name": "close_ticket",
            "description": "Close a ticket",
            "tool_type": "write",
            "required_parameters": [
                {"name": "ticket_number", "type": "string", "description": "Ticket"}
            ],
        },
    ],
}

RAW_DB: dict[str, Any] = {
    "_current_date": "2026-03-10",
    "session": {},
    "employees": {
        "EMP000001": {
            "first_name": "<FIRST_NAME_ROMANIZED>",
            "last_name": "<LAST_NAME_ROMANIZED>",
        }
    },
    "facilities": {"buildings": [{"building_code": "BLD1", "name": "Headquarters"}]},
    "tickets": {},
}

CREATE_PARAMS: dict[str, Any] = {"employee_id": "EMP000001", "summary": "Laptop broken"}


def golden_trace() -> list[dict[str, Any]]:
    """A trace whose create response quotes a stale ID that the close call reuses."""
    return [
        {"event_type": "user_utterance", "utterance": "Hi, this is <FIRST_NAME>."},
        {"event_type": "tool_call", "tool_name": "create_ticket", "params": CREATE_PARAMS},
        {
            "event_type": "tool_response",
            "tool_name": "create_ticket",
            "status": "success",
            "response": {"status": "success", "ticket_number": STALE_ID, "message": "Created"},
        },
        {
            "event_type": "tool_call",
            "tool_name": "close_ticket",
            "params": {"ticket_number": STALE_ID},
        },
        {
            "event_type": "tool_response",
            "tool_name": "close_ticket",
            "status": "success",
            "response": {"status": "success", "ticket_number": STALE_ID},
        },
        {"event_type": "agent_utterance", "utterance": "Done, <FIRST_NAME>."},
    ]


def expected_db() -> dict[str, Any]:
    """The expected DB, computed by running the fake tools (never written by hand)."""
    db = copy.deepcopy(RAW_DB)
    ticket = create_ticket(CREATE_PARAMS, db, 1)["ticket_number"]
    close_ticket({"ticket_number": ticket}, db, 1)
    db["session"] = {"employee_auth": True}
    return db


def make_record(record_id: str = "T1") -> dict[str, Any]:
    return {
        "id": record_id,
        "current_date_time": "2026-03-10 09:15 EST",
        "user_goal": {
            "high_level_user_goal": "You, <FIRST_NAME>, want your laptop ticket at "
            "<LOC:Headquarters> handled.",
            "decision_tree": {"must_have_criteria": ["The ticket is closed."]},
            "information_required": {"employee_id": "EMP000001"},
        },
        "user_config": {
            "name": "<FIRST_NAME> <LAST_NAME>",
            "gender": "woman",
            "user_persona_id": 1,
        },
        "scenario_context": {"premise": "<FIRST_NAME> has a broken laptop."},
        "ground_truth": {
            "expected_scenario_db": expected_db(),
            "expected_trace": {"trace": golden_trace(), "end_reason": "user_ended_call"},
        },
        "starting_utterances": {
            "en": "Hi, it's <FIRST_NAME>.",
            "fr": "Bonjour, c'est <FIRST_NAME>.",
        },
        "culture_overrides": {
            "en": {"first_name": "Ada", "last_name": "Lovelace"},
            "fr": {"first_name": "Élodie", "last_name": "Brûlé"},
        },
        "romanized_culture_overrides": {"fr": {"first_name": "Elodie", "last_name": "Brule"}},
    }


ALIAS: dict[str, Any] = {
    "name": "Headquarters",
    "translatable": True,
    "base": ["HQ", "Main Office"],
    "translations": {"fr": ["Siège", "HQ"]},
}


def write_pack(root: Path, records: list[dict[str, Any]], nested: bool = False) -> Path:
    """Write a pack in the flat layout, or the EVA layout (``data/`` + ``configs/agents``)."""
    data = root / "data" if nested else root
    agents = root / "configs" / "agents" if nested else root / "agents"
    (data / f"{PACK_DOMAIN}_scenarios").mkdir(parents=True, exist_ok=True)
    (data / f"{PACK_DOMAIN}_aliases").mkdir(exist_ok=True)
    agents.mkdir(parents=True, exist_ok=True)
    (data / f"{PACK_DOMAIN}_dataset.json").write_text(json.dumps(records, indent=1), "utf-8")
    for record in records:
        db_file = data / f"{PACK_DOMAIN}_scenarios" / f"{record['id']}.json"
        db_file.write_text(json.dumps(RAW_DB), "utf-8")
    (data / f"{PACK_DOMAIN}_aliases" / "headquarters.json").write_text(json.dumps(ALIAS), "utf-8")
    (agents / f"{PACK_DOMAIN}_agent.yaml").write_text(yaml.safe_dump(AGENT), "utf-8")
    return root


@pytest.fixture
def mini_pack(tmp_path: Path) -> Path:
    return write_pack(tmp_path / "pack", [make_record()])


@pytest.fixture
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> dict[str, Callable[..., dict[str, Any]]]:
    """Route every ToolEngine to the fake tools, whatever domain it is built for."""
    monkeypatch.setattr("scenarios.executor.domain_tools", lambda domain: FAKE_TOOLS)
    return FAKE_TOOLS


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every domain look unregistered."""

    def missing(domain: str) -> Any:
        raise KeyError(f"unknown domain {domain!r}; valid names: (none registered)")

    monkeypatch.setattr("scenarios.executor.domain_tools", missing)


@pytest.fixture(scope="session")
def eva_scenarios(eva_root: Path) -> list[Scenario]:
    return load_eva_scenarios(eva_root)


@pytest.fixture(scope="session")
def eva_datasets(eva_root: Path) -> dict[str, list[dict[str, Any]]]:
    """Raw dataset records per domain, to derive expectations from the data itself."""
    return {
        domain: json.loads((eva_root / "data" / f"{domain}_dataset.json").read_text("utf-8"))
        for domain in ("airline", "itsm", "medical_hr")
    }


@pytest.fixture(scope="session")
def eva_reference(eva_root: Path) -> dict[str, dict[str, Any]]:
    return {
        domain: json.loads((eva_root / "reference_replay" / f"{domain}.json").read_text("utf-8"))
        for domain in ("airline", "itsm", "medical_hr")
    }
