"""Conformance replay against the reference engine's golden outputs, and own-pack replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scenarios.replay import first_difference, replay_own_pack, replay_reference
from tests.scenarios.conftest import PACK_DOMAIN

REPORT_KEYS = {"records", "hash_match", "calls", "response_match", "failures"}


@pytest.mark.parametrize("domain", ["airline", "itsm", "medical_hr"])
def test_reference_conformance(
    eva_root: Path, eva_reference: dict[str, dict[str, Any]], domain: str
) -> None:
    """Every reference call gives the reference response and every final DB hash matches."""
    report = replay_reference(eva_root, eva_root / "reference_replay", [domain])
    result = report.domains[domain]
    assert result.error is None
    assert [f.model_dump() for f in result.failures] == []
    golden = eva_reference[domain]
    assert result.records == result.hash_match == len(golden)
    assert result.calls == result.response_match == sum(len(r["calls"]) for r in golden.values())


@pytest.mark.parametrize(
    ("expected", "actual", "difference"),
    [
        ({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}, "$.a[1].b: expected 2, actual 3"),
        ({"a": 1, "b": 2}, {"a": 1}, "$.b: missing (expected 2)"),
        ({"a": 1}, {"a": 1, "c": "x"}, '$.c: unexpected ("x")'),
        ([1, 2], [1, 2, 3], "$: expected 2 items, actual 3"),
        ({"f": True}, {"f": 1}, "$.f: expected true, actual 1"),
        ({"f": 1.0}, {"f": 1}, None),
        ({"s": "a"}, {"s": "a"}, None),
    ],
)
def test_first_difference(expected: Any, actual: Any, difference: str | None) -> None:
    assert first_difference(expected, actual) == difference


def test_report_shape_matches_the_cli_json(mini_pack: Path, fake_engine: Any) -> None:
    dumped = replay_own_pack(mini_pack).model_dump()
    assert set(dumped) == {"domains"}
    assert set(dumped["domains"]) == {PACK_DOMAIN}
    assert set(dumped["domains"][PACK_DOMAIN]) == REPORT_KEYS
    json.dumps(dumped)


def test_unregistered_engine_reports_an_error(eva_root: Path, no_engine: None) -> None:
    report = replay_reference(eva_root, eva_root / "reference_replay", ["medical_hr"])
    dumped = report.model_dump()["domains"]["medical_hr"]
    assert set(dumped) == REPORT_KEYS | {"error"}
    assert "no tool engine" in dumped["error"] and not report.ok


def test_missing_reference_file_reports_an_error(eva_root: Path, tmp_path: Path) -> None:
    report = replay_reference(eva_root, tmp_path, ["airline"])
    error = report.domains["airline"].error
    assert error is not None and "reference file not found" in error


def test_own_pack_replays_to_expected_hash(mini_pack: Path, fake_engine: Any) -> None:
    result = replay_own_pack(mini_pack).domains[PACK_DOMAIN]
    assert (result.records, result.hash_match, result.calls) == (1, 1, 2)
    assert result.failures == [] and result.error is None
    # The trace quotes the stale ID, so no response equals the trace's verbatim.
    assert result.response_match == 0


def test_strict_own_pack_reports_response_differences(mini_pack: Path, fake_engine: Any) -> None:
    result = replay_own_pack(mini_pack, strict_responses=True).domains[PACK_DOMAIN]
    assert [(f.call_index, f.tool) for f in result.failures] == [
        (0, "create_ticket"),
        (1, "close_ticket"),
    ]
    assert result.failures[0].first_difference.startswith("$.ticket_number: expected")


def test_own_pack_hash_miss_names_the_first_db_difference(
    mini_pack: Path, fake_engine: Any
) -> None:
    dataset = mini_pack / f"{PACK_DOMAIN}_dataset.json"
    records = json.loads(dataset.read_text())
    records[0]["ground_truth"]["expected_scenario_db"]["tickets"] = {}
    dataset.write_text(json.dumps(records))
    result = replay_own_pack(mini_pack).domains[PACK_DOMAIN]
    assert result.hash_match == 0
    (failure,) = result.failures
    assert failure.call_index is None
    assert failure.first_difference.startswith("final DB hash differs: tickets.INC")
