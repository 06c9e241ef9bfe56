"""Trials are submitted longest conversation first; which trials run does not change."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from flows.benchmark import longest_first


def _spec(key: str, trial: int, condition: str = "clean") -> Any:
    return SimpleNamespace(scenario_key=key, trial=trial, condition=condition)


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


def test_among_equally_long_trials_the_most_perturbed_go_first() -> None:
    """In the quick run the clean call of a scenario was submitted before its noisy twin;
    the noisy one (the longer) then started last and kept one worker busy for 9 s alone."""
    scenarios: Any = {
        "itsm/short": SimpleNamespace(expected_trace=[{}] * 2),
        "airline/long": SimpleNamespace(expected_trace=[{}] * 6),
    }
    pending = [
        _spec(key, 0, condition)
        for key in ("itsm/short", "airline/long")
        for condition in ("clean", "noise", "accent+noise")
    ]
    ordered = longest_first(pending, scenarios)
    assert [(s.scenario_key, s.condition) for s in ordered] == [
        ("airline/long", "accent+noise"),
        ("airline/long", "noise"),
        ("airline/long", "clean"),
        ("itsm/short", "accent+noise"),
        ("itsm/short", "noise"),
        ("itsm/short", "clean"),
    ]
