"""Fixtures shared by the trial-loop tests (tests/tasks/test_trial*.py)."""

from __future__ import annotations

import pytest

from scenarios.models import Scenario
from tasks.config import BenchmarkConfig, SystemSpec
from tasks.sources import load_source
from tasks.trial import expand_trials
from tasks.trial_spec import TrialSpec


@pytest.fixture(scope="module")
def text_trial() -> tuple[TrialSpec, Scenario]:
    """The embedded pack's first text-mode trial, up to three attempts."""
    config = BenchmarkConfig(
        run_id="text-trial",
        systems=[SystemSpec(name="text", agent="text")],
        mode="text",
        conditions=["clean"],
        trials=1,
        max_attempts=3,
    )
    scenarios = {s.key: s for s in load_source(config.scenarios)}
    spec = expand_trials(config, list(scenarios.values()), None)[0]
    return spec, scenarios[spec.scenario_key]
