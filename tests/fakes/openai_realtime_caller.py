"""The OpenAI Realtime fake in the CALLER role: the "model" is our scripted caller.

Same server and protocol as :mod:`tasks.systems.standins.openai_realtime` (one session class, one
set of event shapes); what changes is who the model plays. The client streams the agent's
audio (``input_audio_buffer.append``, ``audio/pcmu`` as the spec's caller configures);
the fake's server VAD cuts it into items and transcribes each with the recogniser the test
hands in (``conversation.item.input_audio_transcription.completed``); on
``response.create`` the brain (:func:`scripted_caller_brain`: the scripted caller over
what the transcriptions say) answers, and the fake speaks the answer with eSpeak at
24 kHz in a voice that follows ``audio.output.voice`` (``marin`` female, ``cedar`` male),
sent as fast as it is made, as the hosted model streams faster than real time. A caller
turn that hangs up is one response with speech, then an ``end_call`` function call.
"""

from __future__ import annotations

import json
from typing import Any

from perturbations.audio import VoiceSpec
from scenarios.models import Scenario
from tasks.simulate.caller.caller import ScriptedCaller
from tasks.simulate.llm_prompts import END_CALL_TOOL_NAME
from tasks.systems.standins.audio import Brain, Dialogue
from tasks.systems.standins.openai_realtime import FakeOpenAIRealtime, RealtimeSession
from tasks.voice.stt import Expectation

FEMALE = VoiceSpec(voice="en-us+f3", pitch=60)
MALE = VoiceSpec(voice="en-us+m3", pitch=40)
VOICES = {"marin": FEMALE, "cedar": MALE}


class _HeardDialogue(Dialogue):
    def expectation(self) -> Expectation:
        return None  # the agent's words are free speech, never a code the model asked for


class CallerSession(RealtimeSession):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.dialogue = _HeardDialogue(self.dialogue.brain)
        self.pace_output = False

    def voice(self) -> VoiceSpec:
        name = ((self.session.get("audio") or {}).get("output") or {}).get("voice")
        return VOICES.get(str(name), FEMALE)


class FakeOpenAIRealtimeCaller(FakeOpenAIRealtime):
    """``with FakeOpenAIRealtimeCaller(scripted_caller_brain(scenario), ears) as fake``."""

    session_class = CallerSession


def heard_since_last_turn(messages: list[dict[str, Any]]) -> str:
    """The agent's transcribed items since the model last spoke, joined."""
    heard: list[str] = []
    for message in reversed(messages):
        if message["role"] == "assistant":
            break
        if message["role"] == "user":
            heard.append(str(message.get("content") or ""))
    return " ".join(reversed([h for h in heard if h.strip()]))


def end_call_message(text: str, reason: str = "done") -> dict[str, Any]:
    call = {
        "id": f"call_{abs(hash(text)) % 10**8}",
        "type": "function",
        "function": {"name": END_CALL_TOOL_NAME, "arguments": json.dumps({"reason": reason})},
    }
    return {"role": "assistant", "content": text, "tool_calls": [call]}


def scripted_caller_brain(scenario: Scenario) -> Brain:
    """The model's mind: the scripted caller, fed what the transcriptions heard."""
    caller = ScriptedCaller(scenario)

    def brain(messages: list[dict[str, Any]]) -> dict[str, Any]:
        turn = caller.respond(heard_since_last_turn(messages))
        if turn.end_call:
            return end_call_message(turn.text, "goal met")
        return {"role": "assistant", "content": turn.text}

    return brain
