"""``reference``: the trace-guided policy; in audio mode a real cascade on loopback."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from tasks.simulate.agents import AGENTS, AgentContext
from tasks.simulate.reference.policy import ReferencePolicy


@AGENTS.register("reference")
class ReferenceAgent:
    modes = frozenset({"text", "audio"})

    def text_session(self, ctx: AgentContext) -> ReferencePolicy:
        return ReferencePolicy(ctx.scenario, ctx.tools)

    def serve(self, ctx: AgentContext) -> AbstractAsyncContextManager[str]:
        from tasks.simulate.reference.cascade import serve_reference

        return serve_reference(ctx)
