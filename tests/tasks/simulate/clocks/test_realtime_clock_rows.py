"""A failed attempt of an external agent is stored with the clock it ran on: real time."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarios.loader import load_scenario_dir
from scenarios.models import Scenario
from tasks.config import SystemSpec
from tasks.simulate import simulate
from tasks.simulate.config import SimulationConfig
from tasks.trial import TrialSpec, clock_used, run_attempt
from tests.tasks.specs import trial_spec

PACK = Path(__file__).resolve().parents[4] / "scenarios" / "pack"


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return load_scenario_dir(PACK)[0]


def spec_for(agent: str, mode: str = "audio", clock: str = "virtual") -> TrialSpec:
    system = SystemSpec(name="mine", agent=agent)
    return trial_spec(system, scenario_id="x", seed=1, mode=mode, clock=clock, max_duration_s=30)


def test_a_realtime_attempt_that_fails_before_its_call_says_realtime(
    scenario: Scenario, tmp_path: Path
) -> None:
    # The configured clock is virtual; a ws:// agent runs on the real-time clock anyway.
    config = SimulationConfig(
        agent="ws://127.0.0.1:9/ws",
        mode="audio",
        clock="virtual",
        condition="nonsense-cond",
        cache_dir=tmp_path,
    )
    record = simulate(scenario, config)
    assert (record.status, record.end_reason) == ("infra_error", "harness_error")
    assert "nonsense-cond" in (record.error or "")
    assert record.clock == "realtime"


def test_the_trials_own_failure_row_names_the_clock_used(
    scenario: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tasks.simulation

    def crash(*_: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(tasks.simulation, "simulate_attempt", crash)
    record = run_attempt(spec_for("ws://127.0.0.1:9/ws"), scenario, 1).record
    assert (record.status, record.clock) == ("infra_error", "realtime")
    assert "boom" in (record.error or "")
    assert clock_used(spec_for("reference")) == "virtual"
    assert clock_used(spec_for("external")) == "realtime"
    assert clock_used(spec_for("reference", clock="realtime")) == "realtime"
    assert clock_used(spec_for("ws://x", mode="text")) == "none"
