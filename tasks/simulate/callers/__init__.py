"""Simulated callers (registry ``CALLERS``).

A caller definition builds, for one trial, a caller policy: ``respond(heard_agent_text)
-> CallerTurn``, plus how it sounds (``voice``/``style``) for audio mode. Adding one is one
module in this package with ``@CALLERS.register("<name>")``; modules here (and
``evaflow.callers`` entry points) are found on first lookup.

Registered: ``scripted`` (offline default: the golden trace's lines, listening first),
``llm`` (an OpenAI-compatible chat endpoint with a prompt built from the goal, decision
tree and persona) and ``openai_realtime`` (an OpenAI Realtime session that hears the
agent's audio and speaks in its own voice: an audio caller,
:mod:`tasks.simulate.caller.spoken`).
"""

from __future__ import annotations

from typing import Protocol

from evaflow_core.registry import Registry
from scenarios.models import Scenario
from tasks.simulate.caller.caller import CallerTurn
from tasks.simulate.config import SimulationConfig


class CallerPolicy(Protocol):
    def respond(self, heard: str) -> CallerTurn: ...


class CallerDefinition(Protocol):
    def build(self, scenario: Scenario, config: SimulationConfig) -> CallerPolicy: ...


CALLERS: Registry[type[CallerDefinition]] = Registry(
    "caller", package=__name__, entry_point_group="evaflow.callers"
)


def build_caller(name: str, scenario: Scenario, config: SimulationConfig) -> CallerPolicy:
    """The named caller for one trial (unknown names list the valid ones)."""
    return CALLERS.get(name)().build(scenario, config)
