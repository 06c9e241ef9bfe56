"""``scripted``: the offline default caller (see :mod:`tasks.simulate.caller.caller`)."""

from __future__ import annotations

from scenarios.models import Scenario
from tasks.simulate.caller.caller import ScriptedCaller
from tasks.simulate.callers import CALLERS
from tasks.simulate.config import SimulationConfig


@CALLERS.register("scripted")
class ScriptedCallerDefinition:
    def build(self, scenario: Scenario, config: SimulationConfig) -> ScriptedCaller:
        return ScriptedCaller(scenario)
