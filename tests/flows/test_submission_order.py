"""Trials are submitted longest conversation first; which trials run does not change."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from flows.benchmark import longest_first


def _spec(key: str, trial: int) -> Any:
    return SimpleNamespace(scenario_key=key, trial=trial)


def test_longest_golden_trace_first_and_stable() -> None:
    scenarios: Any = {
        "airline/short": SimpleNamespace(expected_trace=[{}] * 2),
        "itsm/long": SimpleNamespace(expected_trace=[{}] * 9),
        "airline/mid": SimpleNamespace(expected_trace=[{}] * 5),
    }
    pending = [_spec(k, t) for k in ("airline/short", "itsm/long", "airline/mid") for t in (0, 1)]
    ordered = longest_first(pending, scenarios)
    assert [(s.scenario_key, s.trial) for s in ordered] == [
        ("itsm/long", 0),
        ("itsm/long", 1),
        ("airline/mid", 0),
        ("airline/mid", 1),
        ("airline/short", 0),
        ("airline/short", 1),
    ]
    assert sorted(map(id, ordered)) == sorted(map(id, pending))
