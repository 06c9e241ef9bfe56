"""``scripted``: the offline default caller (see :mod:`tasks.simulate.caller.caller`).

Under a behaviour persona condition (``elderly_slow``, ``forgetful_disorganized``, ...) the
caller plays the persona, its draws seeded from the trial's channel seed (seed, scenario,
condition, trial; never the agent)."""

from __future__ import annotations

from scenarios.models import Scenario
from tasks.simulate.caller.caller import ScriptedCaller
from tasks.simulate.caller.persona import condition_persona, persona_rngs
from tasks.simulate.callers import CALLERS
from tasks.simulate.channel import channel_seed
from tasks.simulate.config import SimulationConfig


@CALLERS.register("scripted")
class ScriptedCallerDefinition:
    def build(self, scenario: Scenario, config: SimulationConfig) -> ScriptedCaller:
        persona = condition_persona(config.condition)
        if persona is None:
            return ScriptedCaller(scenario)
        return ScriptedCaller(scenario, persona, persona_rngs(channel_seed(scenario, config)))
