"""A trial spec becomes a SimulationConfig: agent params with a field of their own go there."""

from __future__ import annotations

from tasks.config import SystemSpec
from tasks.simulation import simulation_config
from tasks.trial import TrialSpec
from tests.tasks.specs import trial_spec


def spec(params: dict[str, object]) -> TrialSpec:
    system = SystemSpec(name="ref-wall", agent="reference", params=params)
    return trial_spec(system, domain="itsm", scenario_id="14")


def test_virtual_timing_is_a_system_param() -> None:
    config = simulation_config(spec({"virtual_timing": "wall", "cascade": {}}), 1)
    assert config.virtual_timing == "wall"
    assert config.agent_params == {"cascade": {}}
    assert simulation_config(spec({}), 1).virtual_timing == "cpu"
