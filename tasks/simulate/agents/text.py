"""``text``: the reference policy exchanging text only - the harness's integrity check."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from tasks.simulate.agents import AGENTS, AgentContext, UnsupportedModeError
from tasks.simulate.reference.policy import ReferencePolicy


@AGENTS.register("text")
class TextReferenceAgent:
    modes = frozenset({"text"})

    def text_session(self, ctx: AgentContext) -> ReferencePolicy:
        return ReferencePolicy(ctx.scenario, ctx.tools)

    def serve(self, ctx: AgentContext) -> AbstractAsyncContextManager[str]:
        raise UnsupportedModeError("agent 'text' has no audio endpoint; use 'reference'")
