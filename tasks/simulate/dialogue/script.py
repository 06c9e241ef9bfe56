"""A golden trace cut into what each side says: the caller's lines and the agent's blocks.

``ConversationScript.user_lines[k]`` is the caller's k-th line (0-based); ``blocks[k + 1]``
is what the agent does after hearing it (speech and tool calls, in order); ``blocks[0]``
is what the agent did before the caller spoke (a greeting, which our own greeting
replaces). Both the reference agent and the scripted caller read the same script.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from scenarios.models import Scenario


class ScriptStep(BaseModel):
    """One agent action in a block: speak a sentence or call a tool."""

    kind: Literal["say", "call"]
    text: str = Field(default="", description="For 'say': the sentence")
    tool: str = Field(default="", description="For 'call': the tool name")
    params: dict[str, Any] = Field(default_factory=dict, description="Trace params of the call")
    trace_response: dict[str, Any] | None = Field(
        default=None, description="The trace's response to the call, when it has one"
    )


class ConversationScript(BaseModel):
    user_lines: list[str] = Field(description="The caller's utterances, in order")
    blocks: list[list[ScriptStep]] = Field(
        description="blocks[0]: before the first caller line; blocks[k+1]: after line k"
    )

    def agent_text(self, block: int) -> str:
        """Everything the agent says in one block, joined."""
        if not 0 <= block < len(self.blocks):
            return ""
        return " ".join(s.text for s in self.blocks[block] if s.kind == "say")

    def calls_before(self, block: int, step: int) -> list[ScriptStep]:
        """Tool calls of the trace strictly before ``blocks[block][step]``."""
        out = [s for b in self.blocks[:block] for s in b if s.kind == "call"]
        return out + [s for s in self.blocks[block][:step] if s.kind == "call"]

    def retries_in_plan(self, block: int, step: ScriptStep) -> bool:
        """The trace itself calls ``step.tool`` again, after another caller line, with the
        same parameters: it has its own way of asking again for this call.

        Only the trace's calls are read, never their responses.
        """
        return any(
            s.kind == "call" and s.tool == step.tool and s.params.keys() == step.params.keys()
            for b, steps in enumerate(self.blocks)
            if b != block
            for s in steps
        )


def build_script(scenario: Scenario) -> ConversationScript:
    """Cut ``scenario.expected_trace`` into caller lines and agent blocks."""
    lines: list[str] = []
    blocks: list[list[ScriptStep]] = [[]]
    for event in scenario.expected_trace:
        kind = event.get("event_type")
        if kind == "user_utterance":
            lines.append(str(event.get("utterance") or ""))
            blocks.append([])
        elif kind == "agent_utterance":
            blocks[-1].append(ScriptStep(kind="say", text=str(event.get("utterance") or "")))
        elif kind == "tool_call":
            blocks[-1].append(
                ScriptStep(
                    kind="call",
                    tool=str(event.get("tool_name") or ""),
                    params=dict(event.get("params") or {}),
                )
            )
        elif kind == "tool_response":
            last = blocks[-1][-1] if blocks[-1] else None
            if last is not None and last.kind == "call" and last.tool == event.get("tool_name"):
                last.trace_response = dict(event.get("response") or {})
    if not lines:
        lines = [str(scenario.user_goal.get("starting_utterance") or "Hello.")]
        blocks.append([])
    return ConversationScript(user_lines=lines, blocks=blocks)
