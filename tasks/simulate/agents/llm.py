"""``llm``: a chat model as the agent's brain (EVA spec 7.5 cascade loop), through LiteLLM.

The model is an OpenAI-compatible endpoint (``base_url``, ``model``, ``api_key_env``) or a
``model_name`` of a LiteLLM ``model_list`` (:mod:`tasks.llm_chat`); building the session
warms LiteLLM, so its import is never part of a turn's latency (the virtual clock charges a
turn's wall time, see ``compute_kind``).

Text mode: the model gets the caller's words as text. Audio mode: the reference cascade's
VAD -> STT in front and TTS behind, with this policy in place of the trace-guided one.

Per caller turn: system prompt (:func:`agent_system_prompt`) + the history from the last
``history_user_messages`` caller messages on, the domain's tool schemas, and a tool loop
capped at ``max_tool_rounds`` model responses that ask for tools (the last allowed request
sets ``tool_choice="none"`` so the model must speak). Tools run through the trial's
``ToolGateway`` so the harness logs them with call times. ``transfer_to_agent`` is not
executed: it is logged with ``{"status": "transfer_initiated"}``, the transfer sentence is
spoken and the turn's loop ends (spec 2.2). A failed model call (LiteLLM's retries spent) speaks the
generic error sentence; the call goes on. Each model call leaves an ``llm_call`` event
(tokens, LiteLLM's cost, latency, attempts, error), handed to the gateway's ``log_event`` so the harness stores it with the
attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from scenarios.schema import function_name_map, openai_tool_schemas
from tasks.llm_chat import ChatEndpoint, ChatModel, parse_params
from tasks.llm_router import ChatCall, ToolCall
from tasks.records import TimelineEvent
from tasks.simulate.agents import AGENTS, AgentContext
from tasks.simulate.llm_prompts import (
    GENERIC_ERROR_SENTENCE,
    GREETING,
    INAUDIBLE,
    TRANSFER_RESPONSE,
    TRANSFER_SENTENCE,
    TRANSFER_TOOL,
    agent_system_prompt,
    prompt_hash,
)
from tasks.simulate.reference.policy import AgentReply
from tasks.simulate.tools.gateway import ToolGateway

VERSION = "0.2"


class LLMAgentParams(ChatEndpoint):
    """``agent_params`` of the ``llm`` agent (the endpoint plus the loop's limits)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    max_tool_rounds: int = Field(
        default=10, ge=1, le=100, description="Tool-requesting model responses per caller turn"
    )
    history_user_messages: int = Field(
        default=30, ge=1, description="Caller messages of history sent to the model (spec 7.5)"
    )
    cascade: dict[str, Any] = Field(
        default_factory=dict, description="Audio mode: the cascade's settings (CascadeSettings)"
    )


class ToolOutcome(BaseModel):
    """What one model tool call did: the tool message content, and whether it transferred."""

    content: str
    transferred: bool = False


class LLMAgentSession:
    """One call's policy: ``greet()`` then ``respond(heard)``, state kept between turns."""

    # A turn is mostly waiting on the model endpoint: the virtual clock charges it in wall
    # time (that wait is the latency a caller would hear), not the thread's CPU time.
    compute_kind = "wall"

    def __init__(
        self, ctx: AgentContext, params: LLMAgentParams, model: ChatModel | None = None
    ) -> None:
        self.params = params
        self.tools: ToolGateway = ctx.tools
        self.model = model or ChatModel(params)  # warms LiteLLM: before the call, not in it
        self.system_prompt = agent_system_prompt(ctx.scenario)
        self.tool_schemas = openai_tool_schemas(ctx.scenario.agent)
        self.tool_ids = function_name_map(ctx.scenario.agent)
        self.history: list[dict[str, Any]] = []
        self.events: list[TimelineEvent] = []

    # ------------------------------------------------------------------ turns

    def greet(self) -> AgentReply:
        self._event(
            "llm_session",
            model=self.model.model,
            model_name=self.params.model,
            base_url=self.model.api_base,
            prompt_hash=prompt_hash(self.system_prompt),
            tools=len(self.tool_schemas),
            version=VERSION,
        )
        self.history.append({"role": "assistant", "content": GREETING})
        return AgentReply(text=GREETING, kind="greeting")

    def respond(self, heard: str) -> AgentReply:
        self.history.append({"role": "user", "content": heard.strip() or INAUDIBLE})
        spoken: list[str] = []
        for round_index in range(self.params.max_tool_rounds + 1):
            last_round = round_index == self.params.max_tool_rounds
            result = self.model.complete(
                self.messages(),
                tools=self.tool_schemas,
                tool_choice="none" if last_round else None,
            )
            self._log_call(result, round_index)
            if result.error is not None:
                return self._say([*spoken, GENERIC_ERROR_SENTENCE])
            if result.text.strip():
                spoken.append(result.text.strip())
            if not result.tool_calls or last_round:
                if not spoken:
                    # Silence would leave the caller waiting; the spec's cascade speaks this.
                    self._event("llm_empty_reply", round=round_index)
                    return self._say([GENERIC_ERROR_SENTENCE])
                self.history.append({"role": "assistant", "content": result.text})
                return self._say(spoken, record=False)
            self.history.append(result.assistant_message())
            if self._run_tools(result.tool_calls):
                return self._say([*spoken, TRANSFER_SENTENCE])
        raise AssertionError("unreachable: the last round never asks for tools")

    def messages(self) -> list[dict[str, Any]]:
        """System prompt + history from the N-th last caller message on."""
        users = [i for i, m in enumerate(self.history) if m.get("role") == "user"]
        keep = self.params.history_user_messages
        start = users[-keep] if len(users) > keep else 0
        return [{"role": "system", "content": self.system_prompt}, *self.history[start:]]

    # ------------------------------------------------------------------ tools

    def _run_tools(self, calls: list[ToolCall]) -> bool:
        """Run the calls in order; True when one was a transfer (the rest are skipped)."""
        transferred = False
        for call in calls:
            if transferred:
                content = json.dumps({"status": "skipped", "message": "call transferred"})
            else:
                outcome = self._run_tool(call)
                content, transferred = outcome.content, outcome.transferred
            self.history.append({"role": "tool", "tool_call_id": call.id, "content": content})
        return transferred

    def _run_tool(self, call: ToolCall) -> ToolOutcome:
        tool = self.tool_ids.get(call.name, call.name)
        params = call.parsed_arguments()
        if params is None:
            response = {
                "status": "error",
                "error_type": "invalid_arguments",
                "message": f"arguments are not a JSON object: {call.arguments[:200]}",
            }
            log_without_executing(self.tools, tool, {}, response)
            return ToolOutcome(content=_dump(response))
        if tool == TRANSFER_TOOL:
            log_without_executing(self.tools, tool, params, dict(TRANSFER_RESPONSE))
            return ToolOutcome(content=_dump(TRANSFER_RESPONSE), transferred=True)
        return ToolOutcome(content=_dump(self.tools.call(tool, params)))

    # ------------------------------------------------------------------ output

    def _say(self, texts: list[str], record: bool = True) -> AgentReply:
        text = " ".join(t for t in texts if t) or "Okay."
        if record:
            self.history.append({"role": "assistant", "content": text})
        return AgentReply(text=text, kind="answer")

    def _log_call(self, result: ChatCall, round_index: int) -> None:
        self._event(
            "llm_call",
            model=self.model.model,
            model_name=result.model_name,
            round=round_index,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            cost_usd=result.cost_usd,
            attempts=result.attempts,
            latency_s=round(result.latency_s, 6),
            tool_calls=[c.name for c in result.tool_calls],
            finish_reason=result.finish_reason,
            error=result.error,
        )

    def _now(self) -> float:
        # Looked up per event: audio mode points the gateway at the call clock after start.
        now = getattr(self.tools, "now", None)
        return float(now()) if callable(now) else 0.0

    def _event(self, kind: str, **data: Any) -> None:
        data["turn_id"] = getattr(self.tools, "turn_id", None)
        event = TimelineEvent(t_s=self._now(), source="agent", kind=kind, data=data)
        self.events.append(event)
        log = getattr(self.tools, "log_event", None)
        if callable(log):  # the harness stores it with the attempt
            log(event)


def _dump(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def log_without_executing(
    tools: ToolGateway, name: str, params: dict[str, Any], response: dict[str, Any]
) -> None:
    """Log a call the agent answered itself (transfer, unreadable arguments) with the harness.

    Gateways that cannot log without executing (none in-process) simply do not log it.
    """
    log = getattr(tools, "log_call", None)
    if callable(log):
        log(name, params, response)


@AGENTS.register("llm")
class LLMAgent:
    """A chat model (through LiteLLM) between our STT and TTS (or plain text)."""

    modes = frozenset({"text", "audio"})
    version = VERSION

    def text_session(self, ctx: AgentContext) -> LLMAgentSession:
        params = parse_params(LLMAgentParams, ctx.config.agent_params, "llm agent")
        return LLMAgentSession(ctx, params)

    def warm(self, agent_params: dict[str, Any]) -> None:
        """Check the params and warm LiteLLM (``evaflow serve-agent``, at start-up)."""
        ChatModel(parse_params(LLMAgentParams, agent_params, "llm agent"))

    @contextlib.asynccontextmanager
    async def serve(self, ctx: AgentContext) -> AsyncIterator[str]:
        from tasks.simulate.reference.cascade import serve_cascade

        # Built off the event loop: a cold process imports LiteLLM here (seconds), and
        # other calls on this loop must not stall for it.
        session = await asyncio.to_thread(self.text_session, ctx)
        async with serve_cascade(ctx, session) as url:
            yield url
