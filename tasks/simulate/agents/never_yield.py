"""``never_yield``: the reference cascade that never stops talking when the caller barges in.

A fault agent for turn-taking: everything else (ears, policy, voice, endpointing) is the
reference's, so on the same trials only its yielding differs, and the metric must score it
lower wherever the caller cuts in (``--conditions barge-in``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from tasks.simulate.agents import AGENTS, AgentContext
from tasks.simulate.reference.policy import ReferencePolicy


@AGENTS.register("never_yield")
class NeverYieldAgent:
    modes = frozenset({"audio"})

    def text_session(self, ctx: AgentContext) -> ReferencePolicy:
        raise ValueError("never_yield is an audio fault agent: it has no text mode")

    @contextlib.asynccontextmanager
    async def serve(self, ctx: AgentContext) -> AsyncIterator[str]:
        from tasks.simulate.reference.cascade import serve_cascade

        params = dict(ctx.config.agent_params)
        params["cascade"] = {**params.get("cascade", {}), "yield_to_caller": False}
        stubborn = ctx.model_copy(
            update={"config": ctx.config.model_copy(update={"agent_params": params})}
        )
        async with serve_cascade(stubborn, ReferencePolicy(ctx.scenario, ctx.tools)) as url:
            yield url
