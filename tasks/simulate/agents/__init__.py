"""Agents under test (registry ``AGENTS``).

An agent definition builds, for one trial, either a text session (``greet``/``respond``,
text mode) or a WebSocket endpoint speaking ``docs/agent-protocol.md`` (audio mode). Adding
one is one module in this package with ``@AGENTS.register("<name>")`` on a class;
modules here (and ``evaflow.agents`` entry points) are found on first lookup.

Registered: ``reference`` (trace-guided policy; in audio mode a real VAD -> STT ->
policy -> TTS cascade served on loopback), ``text`` (the same policy, text only: the
harness's integrity check), ``echo`` (weak-agent baseline), ``llm`` (an OpenAI-compatible
chat model), ``external`` (any ws:// URL) and ``pipecat``; ``AGENTS.names()`` is the list.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from evaflow_core.registry import Registry
from scenarios.models import Scenario
from tasks.simulate.config import SimulationConfig
from tasks.simulate.meter import ComputeMeter
from tasks.simulate.reference.policy import AgentReply


class AgentContext(BaseModel):
    """What an agent gets for one trial: the scenario, the trial's tools, the settings and,
    on the virtual clock, the meter its compute is charged to."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    scenario: Scenario
    tools: Any = Field(description="The trial's ToolGateway (harness-owned DB)")
    config: SimulationConfig
    meter: ComputeMeter | None = Field(
        default=None,
        description=(
            "Virtual clock: where an in-process agent charges its compute (engage it first);"
            " None when nobody measures it (text mode, real-time clock, served agents)"
        ),
    )


class TextAgent(Protocol):
    def greet(self) -> AgentReply: ...

    def respond(self, heard: str) -> AgentReply: ...


class AgentDefinition(Protocol):
    """A kind of agent. ``modes`` lists what it supports ("text", "audio")."""

    modes: frozenset[str]

    def text_session(self, ctx: AgentContext) -> TextAgent: ...

    def serve(self, ctx: AgentContext) -> AbstractAsyncContextManager[str]:
        """Start the agent for one call; the context yields its ws:// URL."""
        ...


class UnsupportedModeError(ValueError):
    """The agent cannot run in the requested mode."""


AGENTS: Registry[type[AgentDefinition]] = Registry(
    "agent", package=__name__, entry_point_group="evaflow.agents"
)


def get_agent(name: str, mode: str) -> AgentDefinition:
    """The named agent, checked to support ``mode`` (unknown names list the valid ones)."""
    agent = AGENTS.get(name)()
    if mode not in agent.modes:
        raise UnsupportedModeError(
            f"agent {name!r} does not support mode {mode!r} (supports: {sorted(agent.modes)})"
        )
    return agent
