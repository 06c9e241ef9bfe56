"""``pipecat``: a Pipecat pipeline, in its own process and environment, as the agent under test.

The system's params (``architecture`` + ``components``, systems contract; ``${VAR}``
already resolved) go to the bot (:mod:`tasks.systems.pipecat_bot`) as its
``--system-json``; :mod:`tasks.systems.pipecat_process` starts one bot per system and
harness process and stops it at exit. From then on a call is an external agent's: the
real-time clock, timing from the wire, and every tool call through the trial's tool bridge
(``out_of_process``), whose URL and token arrive in ``start.customParameters`` together with
what a deployed agent of the domain is configured with: its system prompt (today's date,
the domain agent's role and policy, EVA spec 7.5), the domain and its agent configuration
(the recogniser's vocabulary: ``tasks.simulate.voices.agent_recognizer_for_domain``). Never the scenario's caller data.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from tasks.simulate.agents import AGENTS, AgentContext, UnsupportedModeError
from tasks.simulate.llm_prompts import agent_system_prompt

# customParameters keys the bot reads (tasks.systems.pipecat_bot.app).
PARAM_SYSTEM_PROMPT = "system_prompt"
PARAM_AGENT_CONFIG = "agent_config"
PARAM_DOMAIN = "domain"


def bot_system(ctx: AgentContext) -> dict[str, Any]:
    """The bot's ``--system-json``: the system's params plus the recogniser's LM cache;
    during a rehearsal, its hosts moved to the stand-ins (tasks.systems.rehearsal)."""
    from tasks.systems.rehearsal import apply_to_bot_system

    system = {**ctx.config.agent_params, "cache_dir": str(ctx.config.cache_dir)}
    return apply_to_bot_system(system, os.environ)


@AGENTS.register("pipecat")
class PipecatAgent:
    """A Pipecat pipeline (cascade, hybrid or speech-to-speech) served by its own process."""

    modes = frozenset({"audio"})
    out_of_process = True

    def text_session(self, ctx: AgentContext) -> Any:
        raise UnsupportedModeError("agent 'pipecat' speaks audio only; use mode='audio'")

    def start_parameters(self, ctx: AgentContext) -> dict[str, str]:
        return {
            PARAM_SYSTEM_PROMPT: agent_system_prompt(ctx.scenario),
            PARAM_AGENT_CONFIG: ctx.scenario.agent.model_dump_json(),
            PARAM_DOMAIN: ctx.scenario.domain,
        }

    @asynccontextmanager
    async def serve(self, ctx: AgentContext) -> AsyncIterator[str]:
        from tasks.systems.pipecat_process import shared_bot

        bot = await asyncio.to_thread(shared_bot, bot_system(ctx))
        yield bot.url
