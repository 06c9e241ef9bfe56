"""ITSM golden replay and agent-YAML consistency (EVA spec 2.1-2.6).

The replay feeds every reference tool call of ``reference_replay/itsm.json`` (IDs already
chained) through :class:`ToolEngine` and demands the reference response and final DB hash.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml

from scenarios.dbhash import db_hash
from scenarios.engines.itsm import PARAM_MODELS, TOOLS, content_hash
from scenarios.executor import ToolEngine
from scenarios.resolve import load_aliases, resolve_scenario_db

# Stored records whose key is "<prefix><content hash of the record>" (spec 2.6).
HASHED_TABLES = {"tickets": "INC", "requests": "REQ-", "security_cases": "SEC-"}


def load_records(eva_root: Path) -> dict[str, dict[str, Any]]:
    records = json.loads((eva_root / "data" / "itsm_dataset.json").read_text("utf-8"))
    return {r["id"]: r for r in records}


def load_initial_db(eva_root: Path, record: dict[str, Any]) -> dict[str, Any]:
    """A record's initial DB, built exactly as the brief prescribes (with ITSM aliases)."""
    raw = json.loads((eva_root / "data" / "itsm_scenarios" / f"{record['id']}.json").read_text())
    aliases = load_aliases(eva_root / "data" / "itsm_aliases")
    return resolve_scenario_db(raw, record, "en", aliases)


def agent_tools(eva_root: Path) -> list[dict[str, Any]]:
    config = yaml.safe_load((eva_root / "configs" / "agents" / "itsm_agent.yaml").read_text())
    return list(config["tools"])


def literal_values(annotation: Any) -> set[Any]:
    """All values of the Literal types inside an annotation (through Optional/Annotated)."""
    if typing.get_origin(annotation) is typing.Literal:
        return set(typing.get_args(annotation))
    found: set[Any] = set()
    for arg in typing.get_args(annotation):
        found |= literal_values(arg)
    return found


@pytest.fixture(scope="module")
def golden(eva_root: Path) -> dict[str, Any]:
    return json.loads((eva_root / "reference_replay" / "itsm.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def replayed(eva_root: Path, golden: dict[str, Any]) -> dict[str, tuple[ToolEngine, list[Any]]]:
    """Each record's engine after the golden calls, with the responses it gave."""
    records = load_records(eva_root)
    names = [t["id"] for t in agent_tools(eva_root)]
    out: dict[str, tuple[ToolEngine, list[Any]]] = {}
    for record_id, entry in golden.items():
        engine = ToolEngine("itsm", load_initial_db(eva_root, records[record_id]), names)
        responses = [
            json.loads(json.dumps(engine.execute(call["tool"], call["params"])))
            for call in entry["calls"]
        ]
        out[record_id] = (engine, responses)
    return out


def test_replay_reproduces_every_response(
    golden: dict[str, Any], replayed: dict[str, tuple[ToolEngine, list[Any]]]
) -> None:
    total = 0
    bad: list[str] = []
    for record_id, entry in golden.items():
        _, responses = replayed[record_id]
        for call, got in zip(entry["calls"], responses, strict=True):
            total += 1
            if got != call["response"]:
                bad.append(f"{record_id} {call['tool']}: {got} != {call['response']}")
    assert total > 0
    assert bad == [], f"{len(bad)}/{total} responses differ:\n" + "\n".join(bad[:5])


def test_replay_reproduces_every_final_hash(
    golden: dict[str, Any], replayed: dict[str, tuple[ToolEngine, list[Any]]]
) -> None:
    bad = [
        record_id
        for record_id, entry in golden.items()
        if replayed[record_id][0].final_hash != entry["final_db_sha256"]
    ]
    assert golden
    assert bad == [], f"{len(bad)}/{len(golden)} final DB hashes differ: {bad}"


def test_stored_records_are_keyed_by_their_content_hash(
    replayed: dict[str, tuple[ToolEngine, list[Any]]],
) -> None:
    checked = 0
    for engine, _ in replayed.values():
        for table_name, prefix in HASHED_TABLES.items():
            for key, record in engine.db.get(table_name, {}).items():
                if key.startswith(prefix):
                    checked += 1
                    assert key.endswith(content_hash(record)), (table_name, key)
    assert checked > 0


def test_tool_table_matches_agent_yaml(eva_root: Path) -> None:
    assert sorted(TOOLS) == sorted(t["id"] for t in agent_tools(eva_root))


def test_yaml_parameters_match_models(eva_root: Path) -> None:
    for spec in agent_tools(eva_root):
        fields = PARAM_MODELS[spec["id"]].model_fields
        for param in spec.get("required_parameters") or []:
            assert fields[param["name"]].is_required(), (spec["id"], param["name"])
        for param in spec.get("optional_parameters") or []:
            assert not fields[param["name"]].is_required(), (spec["id"], param["name"])


def test_yaml_enums_match_models(eva_root: Path) -> None:
    checked = 0
    for spec in agent_tools(eva_root):
        fields = PARAM_MODELS[spec["id"]].model_fields
        params = (spec.get("required_parameters") or []) + (spec.get("optional_parameters") or [])
        for param in params:
            if not param.get("enum"):
                continue
            checked += 1
            allowed = {str(v) for v in literal_values(fields[param["name"]].annotation)}
            if param["name"] == "duration_days":  # YAML strings, accepted as integers
                allowed = {"30", "60", "90"}
            assert allowed == {str(v) for v in param["enum"]}, (spec["id"], param["name"])
    assert checked > 0


def test_replay_outcome_is_the_same_in_every_language(
    eva_root: Path, golden: dict[str, Any]
) -> None:
    """Spec 1.8: English golden calls reproduce the expected DB resolved in any language."""
    records = load_records(eva_root)
    aliases = load_aliases(eva_root / "data" / "itsm_aliases")
    bad: list[str] = []
    checked = 0
    for record_id, entry in golden.items():
        record = records[record_id]
        raw = json.loads((eva_root / "data" / "itsm_scenarios" / f"{record_id}.json").read_text())
        for lang in record["culture_overrides"]:
            engine = ToolEngine("itsm", resolve_scenario_db(raw, record, lang, aliases))
            for call in entry["calls"]:
                engine.execute(call["tool"], call["params"])
            expected_db = record["ground_truth"]["expected_scenario_db"]
            expected = db_hash(resolve_scenario_db(expected_db, record, lang, aliases))
            checked += 1
            if engine.final_hash != expected:
                bad.append(f"{record_id}/{lang}")
    assert checked > len(golden)
    assert bad == [], f"{len(bad)}/{checked} record-languages differ: {bad[:10]}"
