"""Thin Prefect task wrappers around the pure pipeline functions (one task per trial)."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from scenarios.models import Scenario
from tasks.trial import TrialResult, TrialSpec, run_trial


@task(name="run-trial", cache_policy=NO_CACHE, persist_result=False, log_prints=False)
def run_trial_step(spec: TrialSpec, scenario: Scenario) -> TrialResult:
    """Simulate, judge and validate one trial, regenerating invalid attempts."""
    return run_trial(spec, scenario)
