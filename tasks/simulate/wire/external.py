"""``external``: an agent under test that is somebody else's server at a ws:// or wss:// URL.

Selected by ``agent="ws://host:port/path"`` (any URL) or ``agent="external"`` with
``agent_params={"url": ...}``. It always runs on the real-time clock and reaches the
trial's tools through the tool bridge (:mod:`tasks.simulate.tools.bridge`), whose URL and token
it finds in the ``start`` message's ``customParameters``. Agent params:

* ``url``: the agent's WebSocket URL (when ``agent`` is ``"external"``);
* ``share_scenario`` (default false): also serve the resolved scenario at ``/scenario``;
  only for trace-guided reference agents served with ``evaflow serve-agent``;
* ``bridge_host`` (default ``127.0.0.1``): where the bridge listens.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from tasks.simulate.config import SimulationConfig

EXTERNAL = "external"
SCHEMES = ("ws://", "wss://")


class ExternalAgentError(ValueError):
    """An external agent without a usable URL."""


def is_url(agent: str) -> bool:
    return agent.lower().startswith(SCHEMES)


def external_url(config: SimulationConfig) -> str | None:
    """The URL of an external agent, or None for an in-process (registered) agent."""
    if is_url(config.agent):
        return config.agent
    if config.agent != EXTERNAL:
        return None
    url = str(config.agent_params.get("url") or "")
    if not is_url(url):
        raise ExternalAgentError(
            f"agent 'external' needs agent_params.url starting with ws:// or wss://, got {url!r}"
        )
    return url


def served_out_of_process(agent: str) -> bool:
    """A registered agent that serves from its own process (``out_of_process = True``, e.g.
    ``pipecat``): like a URL agent, real-time clock and tools through the bridge."""
    if is_url(agent) or agent == EXTERNAL:
        return False
    from tasks.simulate.agents import AGENTS

    try:
        return bool(getattr(AGENTS.get(agent), "out_of_process", False))
    except Exception:  # noqa: BLE001 - an unknown name fails where it is resolved
        return False


def uses_realtime(config: SimulationConfig) -> bool:
    """External agents cannot follow the virtual clock's sync ticks: always real time."""
    return (
        config.clock == "realtime"
        or external_url(config) is not None
        or served_out_of_process(config.agent)
    )


class ExternalAgent:
    """Registry entry (see :mod:`tasks.simulate.agents.external`); audio only."""

    modes = frozenset({"audio"})

    def text_session(self, ctx: object) -> object:
        from tasks.simulate.agents import UnsupportedModeError

        raise UnsupportedModeError("agent 'external' speaks audio only; use mode='audio'")

    @asynccontextmanager
    async def serve(self, ctx: object) -> AsyncIterator[str]:
        """Nothing to start: the agent is already running; yields its URL."""
        config = ctx.config  # type: ignore[attr-defined]
        url = external_url(config)
        if url is None:
            raise ExternalAgentError("the external agent needs a URL")
        if config.clock != "realtime":
            raise ExternalAgentError(
                "an external agent cannot follow the virtual clock's sync ticks; "
                "use clock='realtime' (tasks.simulate.clocks.realtime)"
            )
        yield url
