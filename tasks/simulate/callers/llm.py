"""``llm``: a caller played by a chat model through LiteLLM: an OpenAI-compatible endpoint
or a ``model_name`` of a LiteLLM model list (:mod:`tasks.llm_chat`; building the caller
warms LiteLLM, before the call).

The model gets our prompt (:func:`caller_system_prompt`: persona, goal, decision tree,
information, opening line, speaking and hang-up rules), hears the agent as ``user``
messages and speaks as ``assistant``. Its only tool is ``end_call``. The spec's OpenAI
caller (7.3) may hang up only after saying goodbye and never in the turn in which it gives
information; both rules are checked here, not just asked for: a refused ``end_call`` is
answered with the reason, the turn's words are still spoken and the call goes on. A hang-up
with no words says :data:`CALLER_FINAL_GOODBYE`, so the last turn always carries a goodbye.

Under a behaviour persona condition the persona's text replaces the record's (spec 8.1).
In audio mode the harness speaks the turns with our TTS, like the scripted caller's. A
caller model that cannot be reached (LiteLLM's retries spent) is an infrastructure failure, not the agent's: it
raises :class:`CallerModelError`, which the harness records as ``harness_error``.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from scenarios.models import Scenario
from tasks.llm_chat import ChatEndpoint, ChatModel, parse_params
from tasks.llm_router import ChatCall
from tasks.records import TimelineEvent
from tasks.simulate.caller.caller import CallerTurn
from tasks.simulate.caller.persona import condition_persona
from tasks.simulate.callers import CALLERS
from tasks.simulate.callers.hangup import HangupRules
from tasks.simulate.config import SimulationConfig
from tasks.simulate.llm_prompts import (
    CALLER_ACCEPTED,
    CALLER_FINAL_GOODBYE,
    END_CALL_TOOL_NAME,
    INAUDIBLE,
    caller_system_prompt,
    end_call_tool,
    prompt_hash,
)

VERSION = "0.2"


class LLMCallerParams(ChatEndpoint):
    """``caller_params`` of the ``llm`` caller."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    temperature: float | None = Field(
        default=0.7, ge=0.0, le=2.0, description="Some variety across trials, like people"
    )
    scripted_opening: bool = Field(
        default=True, description="Say the record's starting utterance verbatim as turn one"
    )
    send_seed: bool = Field(
        default=True,
        description="Send the attempt's seed (config.seed + trial) as 'seed' (unless "
        "extra_body has one; dropped for a provider without seeds)",
    )


class CallerModelError(RuntimeError):
    """The caller's model failed; the attempt is the harness's failure, not the agent's."""


class LLMCaller:
    """Caller policy over text: ``respond(heard_agent_text) -> CallerTurn``."""

    def __init__(
        self,
        scenario: Scenario,
        params: LLMCallerParams,
        model: ChatModel | None = None,
        persona_text: str | None = None,
    ) -> None:
        self.params = params
        self.model = model or ChatModel(params)  # warms LiteLLM: before the call, not in it
        self.system_prompt = caller_system_prompt(scenario, persona_text)
        self.opening = str(scenario.user_goal.get("starting_utterance") or "").strip()
        self.rules = HangupRules(scenario)
        self.history: list[dict[str, Any]] = []
        self.events: list[TimelineEvent] = []
        self.last_said = ""
        self.turns = 0
        self.ended = False

    def respond(self, heard: str) -> CallerTurn:
        if self.ended:
            return CallerTurn(text=CALLER_FINAL_GOODBYE, kind="closing", end_call=True)
        self.history.append({"role": "user", "content": heard.strip() or INAUDIBLE})
        self.turns += 1
        if self.turns == 1 and self.params.scripted_opening and self.opening:
            return self._say(self.opening)
        result = self.model.complete(self.messages(), tools=[end_call_tool()])
        self._log_call(result)
        if result.error is not None:
            raise CallerModelError(f"llm caller: {result.error}")
        text = result.text.strip()
        if not any(call.name == END_CALL_TOOL_NAME for call in result.tool_calls):
            if not text:
                raise CallerModelError("llm caller: the model returned no words and no end_call")
            return self._say(text)
        refusal = self.hangup_refusal(text)
        self.history.append(result.assistant_message())
        for call in result.tool_calls:
            answer = refusal or CALLER_ACCEPTED
            if call.name != END_CALL_TOOL_NAME:
                answer = f"Unknown tool {call.name!r}; the only tool is {END_CALL_TOOL_NAME}."
            self.history.append({"role": "tool", "tool_call_id": call.id, "content": answer})
        if refusal is not None:
            self.last_said = text
            return CallerTurn(text=text, kind="line")
        self.ended = True
        self.last_said = text or CALLER_FINAL_GOODBYE
        return CallerTurn(text=self.last_said, kind="closing", end_call=True)

    def hangup_refusal(self, text: str) -> str | None:
        """Why ``end_call`` may not be honoured with these words (None: hang up)."""
        return self.rules.refusal(text, self.last_said)

    def gives_information(self, text: str) -> bool:
        return self.rules.gives_information(text)

    def messages(self) -> list[dict[str, Any]]:
        return [{"role": "system", "content": self.system_prompt}, *self.history]

    def _say(self, text: str) -> CallerTurn:
        self.history.append({"role": "assistant", "content": text})
        self.last_said = text
        return CallerTurn(text=text, kind="line")

    def _log_call(self, result: ChatCall) -> None:
        data = {
            "model": self.model.model,
            "model_name": result.model_name,
            "turn": self.turns,
            "input_tokens": result.input_tokens,
            "output_tokens": result.output_tokens,
            "cost_usd": result.cost_usd,
            "attempts": result.attempts,
            "latency_s": round(result.latency_s, 6),
            "tool_calls": [c.name for c in result.tool_calls],
            "error": result.error,
            "prompt_hash": prompt_hash(self.system_prompt),
        }
        self.events.append(TimelineEvent(t_s=0.0, source="caller", kind="llm_call", data=data))


@CALLERS.register("llm")
class LLMCallerDefinition:
    version = VERSION

    def build(self, scenario: Scenario, config: SimulationConfig) -> LLMCaller:
        params = parse_params(LLMCallerParams, config.caller_params, "llm caller")
        seeded = params.send_seed and "seed" not in params.extra_body
        model = ChatModel(params, {"seed": config.seed + config.trial} if seeded else None)
        # A behaviour persona condition plays that persona (spec 8.1): its text, not the
        # record's, is who the model is.
        persona = condition_persona(config.condition)
        persona_text = persona.persona_text if persona else None
        return LLMCaller(scenario, params, model, persona_text=persona_text)
