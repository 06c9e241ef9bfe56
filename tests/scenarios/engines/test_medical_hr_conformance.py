"""Golden replay of the medical_hr engine against the reference engine's outputs.

``reference_replay/medical_hr.json`` holds every ground-truth call with the reference's
exact response and final DB hash; ``expected_trace`` replays must reproduce the expected
DB in every language (spec 1.8) and leave the expected session (spec 3, auth check).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scenarios.dbhash import db_hash
from scenarios.executor import ToolEngine
from scenarios.resolve import resolve_scenario_db, resolve_value


def load_records(eva_root: Path) -> dict[str, dict[str, Any]]:
    records = json.loads((eva_root / "data" / "medical_hr_dataset.json").read_text("utf-8"))
    return {r["id"]: r for r in records}


def load_initial_db(eva_root: Path, record: dict[str, Any], lang: str = "en") -> dict[str, Any]:
    """A record's initial DB, built exactly as the brief prescribes (no alias directory)."""
    path = eva_root / "data" / "medical_hr_scenarios" / f"{record['id']}.json"
    return resolve_scenario_db(json.loads(path.read_text("utf-8")), record, lang, None)


def agent_tool_names(eva_root: Path) -> list[str]:
    path = eva_root / "configs" / "agents" / "medical_hr_agent.yaml"
    return [tool["id"] for tool in yaml.safe_load(path.read_text("utf-8"))["tools"]]


def session_mismatches(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Keys whose values differ, compared like task_completion's auth check."""
    return [
        key
        for key, value in expected.items()
        if key not in actual or str(actual[key]).lower() != str(value).lower()
    ]


@pytest.fixture(scope="module")
def golden(eva_root: Path) -> dict[str, Any]:
    return json.loads((eva_root / "reference_replay" / "medical_hr.json").read_text("utf-8"))


def test_golden_replay_reproduces_every_response_hash_and_session(
    eva_root: Path, golden: dict[str, Any]
) -> None:
    records = load_records(eva_root)
    names = agent_tool_names(eva_root)
    bad_responses: list[str] = []
    bad_hashes: list[str] = []
    bad_sessions: list[str] = []
    total_calls = 0
    for record_id, entry in golden.items():
        record = records[record_id]
        engine = ToolEngine("medical_hr", load_initial_db(eva_root, record), names)
        for index, call in enumerate(entry["calls"]):
            total_calls += 1
            got = json.loads(json.dumps(engine.execute(call["tool"], call["params"])))
            if got != call["response"]:
                bad_responses.append(f"{record_id}#{index} {call['tool']}: {got}")
        if engine.final_hash != entry["final_db_sha256"]:
            bad_hashes.append(record_id)
        expected_session = record["ground_truth"]["expected_scenario_db"].get("session") or {}
        if session_mismatches(expected_session, engine.db.get("session") or {}):
            bad_sessions.append(record_id)
    assert total_calls > 0
    assert bad_responses == [], f"{len(bad_responses)}/{total_calls} responses differ"
    assert bad_hashes == [], f"{len(bad_hashes)}/{len(golden)} final DB hashes differ"
    assert bad_sessions == [], f"{len(bad_sessions)}/{len(golden)} sessions differ"


def test_expected_trace_replay_matches_expected_db_in_every_language(eva_root: Path) -> None:
    names = agent_tool_names(eva_root)
    failures: list[str] = []
    replays = 0
    for record in load_records(eva_root).values():
        for lang in sorted(record.get("culture_overrides") or {}):
            engine = ToolEngine("medical_hr", load_initial_db(eva_root, record, lang), names)
            trace = resolve_value(record["ground_truth"]["expected_trace"]["trace"], record, lang)
            for event in trace:
                if event["event_type"] == "tool_call":
                    engine.execute(event["tool_name"], event["params"])
            expected = resolve_scenario_db(
                record["ground_truth"]["expected_scenario_db"], record, lang, None
            )
            replays += 1
            if engine.final_hash != db_hash(expected):
                failures.append(f"{record['id']}/{lang}")
    assert replays > 0
    assert failures == [], f"{len(failures)}/{replays} trace replays end on a different DB"
