"""A trial spec becomes a SimulationConfig: agent params with a field of their own go there."""

from __future__ import annotations

from tasks.config import CallerSpec, JudgeSpec, SystemSpec
from tasks.simulation import simulation_config
from tasks.trial import TrialSpec


def spec(params: dict[str, object]) -> TrialSpec:
    return TrialSpec(
        run_id="r",
        system=SystemSpec(name="ref-wall", agent="reference", params=params),
        domain="itsm",
        scenario_id="14",
        condition="clean",
        trial=0,
        seed=3,
        mode="audio",
        clock="virtual",
        caller=CallerSpec(),
        judge=JudgeSpec(),
        max_attempts=1,
        max_duration_s=60.0,
    )


def test_virtual_timing_is_a_system_param() -> None:
    config = simulation_config(spec({"virtual_timing": "wall", "cascade": {}}), 1)
    assert config.virtual_timing == "wall"
    assert config.agent_params == {"cascade": {}}
    assert simulation_config(spec({}), 1).virtual_timing == "cpu"
