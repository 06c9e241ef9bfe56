"""``echo``: a useless but well-behaved agent (text mode) - the weak-agent baseline.

It parrots every caller turn ("I heard: ...") and hangs up after six turns, never calling
a tool; the same agent over the wire is the ``echo`` fault agent. Its trials must be kept
and scored 0, never regenerated as if the simulator had failed.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from tasks.simulate.agents import AGENTS, AgentContext, UnsupportedModeError
from tasks.simulate.faults.fault_agents import ECHO_TURNS, EchoSession


@AGENTS.register("echo")
class EchoAgent:
    modes = frozenset({"text"})

    def text_session(self, ctx: AgentContext) -> EchoSession:
        return EchoSession(int(ctx.config.agent_params.get("turns", ECHO_TURNS)))

    def serve(self, ctx: AgentContext) -> AbstractAsyncContextManager[str]:
        raise UnsupportedModeError(
            "agent 'echo' runs in text mode; over audio serve the 'echo' fault agent "
            "(tasks.simulate.faults.fault_agents.serve_fault_agent) and call its ws:// URL"
        )
