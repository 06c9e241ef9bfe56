"""Typed inputs of the judged metrics, shared by both judge back-ends.

The conversation trace is normalised to :class:`TraceItem` whether it comes from a
``MetricContext`` (spec 4.2 entries ``{role, content, type, turn_id}`` / tool entries) or
from a human-labelled validation set (``event_type`` entries without turn ids).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from tasks.judges.base import JudgeInput

Pipeline = Literal["cascade", "audio_llm", "s2s"]
ItemKind = Literal["user", "assistant", "tool_call", "tool_response"]


class TraceItem(BaseModel):
    """One entry of the conversation trace."""

    kind: ItemKind
    turn_id: int = Field(description="Turn 0 = greeting; user n and assistant reply n share n")
    text: str = Field(default="", description="Spoken text of user/assistant entries")
    tool_name: str | None = None
    params: dict[str, Any] = Field(default_factory=dict, description="Tool call parameters")
    response: Any = Field(default=None, description="Tool response (usually a dict)")

    @property
    def is_speech(self) -> bool:
        return self.kind in ("user", "assistant")


def trace_from_context(entries: list[dict[str, Any]]) -> list[TraceItem]:
    """Convert spec-4.2 trace entries (as built by ``tasks.metrics.context``)."""
    items: list[TraceItem] = []
    for entry in entries:
        turn = int(entry.get("turn_id", 0) or 0)
        kind = entry.get("type")
        if kind == "tool_call":
            params = entry.get("parameters", entry.get("params")) or {}
            items.append(
                TraceItem(
                    kind="tool_call",
                    turn_id=turn,
                    tool_name=entry.get("tool_name"),
                    params=params if isinstance(params, dict) else {"value": params},
                )
            )
        elif kind == "tool_response":
            items.append(
                TraceItem(
                    kind="tool_response",
                    turn_id=turn,
                    tool_name=entry.get("tool_name"),
                    response=entry.get("tool_response", entry.get("response")),
                )
            )
        elif entry.get("role") in ("user", "assistant"):
            items.append(
                TraceItem(kind=entry["role"], turn_id=turn, text=str(entry.get("content") or ""))
            )
    return items


def trace_from_events(events: list[dict[str, Any]]) -> list[TraceItem]:
    """Convert ``event_type`` traces (judge-validation sets, EVA expected traces).

    Turn numbering follows spec 4.2: the greeting is turn 0 and each user utterance that
    follows an assistant utterance opens the next turn; tool entries join the current turn.
    """
    items: list[TraceItem] = []
    turn = 0
    assistant_spoke = False
    for event in events:
        kind = event.get("event_type")
        if kind == "user_utterance":
            if assistant_spoke or turn == 0:
                turn += 1
                assistant_spoke = False
            items.append(TraceItem(kind="user", turn_id=turn, text=str(event.get("utterance", ""))))
        elif kind == "agent_utterance":
            assistant_spoke = True
            items.append(
                TraceItem(kind="assistant", turn_id=turn, text=str(event.get("utterance", "")))
            )
        elif kind == "tool_call":
            params = _decoded(event.get("params")) or {}
            items.append(
                TraceItem(
                    kind="tool_call",
                    turn_id=turn,
                    tool_name=event.get("tool_name"),
                    params=params if isinstance(params, dict) else {"value": params},
                )
            )
        elif kind == "tool_response":
            items.append(
                TraceItem(
                    kind="tool_response",
                    turn_id=turn,
                    tool_name=event.get("tool_name"),
                    response=_decoded(event.get("response")),
                )
            )
    return items


def _decoded(value: Any) -> Any:
    """Some logs store a call's arguments or its response as a JSON string: read it."""
    if isinstance(value, str) and value.lstrip().startswith(("{", "[")):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _compact(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=False, default=str)


def format_trace(items: list[TraceItem]) -> str:
    """The "conversation with tools" layout of spec 4.1: "Turn N:" blocks."""
    blocks: list[list[str]] = []
    last_turn: int | None = None
    for item in items:
        if item.turn_id != last_turn:
            blocks.append([f"Turn {item.turn_id}:"])
            last_turn = item.turn_id
        if item.kind in ("user", "assistant"):
            blocks[-1].append(f"{item.kind}: {item.text}")
        elif item.kind == "tool_call":
            blocks[-1].append(f"tool_call: {item.tool_name}({_compact(item.params)})")
        else:
            blocks[-1].append(f"tool_response: {item.tool_name}: {_compact(item.response)}")
    return "\n\n".join("\n".join(block) for block in blocks)


def speech_turns(items: list[TraceItem], role: Literal["user", "assistant"]) -> dict[int, str]:
    """Turn id -> the role's text in that turn (entries of one turn joined by a space)."""
    turns: dict[int, str] = {}
    for item in items:
        if item.kind == role and item.text.strip():
            turns[item.turn_id] = (
                f"{turns[item.turn_id]} {item.text}" if item.turn_id in turns else item.text
            )
    return turns


class ConversationInput(JudgeInput):
    """Faithfulness and conversation progression: the whole conversation plus the policy."""

    trace: list[TraceItem]
    role: str = Field(default="", description="Agent role sentence")
    instructions: str = Field(default="", description="Agent policy instructions")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="Tool schemas")
    current_date_time: str = ""
    pipeline: Pipeline = "cascade"
    language: str = "en"


class ConcisenessInput(JudgeInput):
    """Conciseness: the trace; ratings for every distinct turn id (null without agent speech)."""

    trace: list[TraceItem]
    pipeline: Pipeline = "cascade"


class TurnTextInput(JudgeInput):
    """Speakability: intended assistant text per turn."""

    turns: dict[int, str]


class EntityUnit(BaseModel):
    """One unit of the key-entity judge: what was said vs what the agent's STT heard."""

    unit_id: int
    expected: str = Field(description="Intended (spoken) text of the caller")
    transcribed: str = Field(description="What the agent heard")


class KeyEntityInput(JudgeInput):
    """transcription_accuracy_key_entities: cascade units = user turns; audio-native = tool calls."""

    mode: Literal["turns", "tool_calls"] = "turns"
    units: list[EntityUnit] = Field(default_factory=list)
    trace: list[TraceItem] = Field(default_factory=list, description="tool_calls mode only")


class SpeechFidelityInput(JudgeInput):
    """Speech fidelity (agent, user, TTS): intended text per turn, judged against the audio."""

    role: Literal["user", "assistant"]
    turns: dict[int, str] = Field(description="turn_id -> intended text")
    trace: list[TraceItem] = Field(default_factory=list, description="Context for entity lists")
    language: str = "en"
    variant: Literal["agent_entities", "user", "tts"] = Field(
        description="Which rubric: agent_speech_fidelity, user_speech_fidelity or tts_fidelity"
    )
    entities_from: Literal["turn", "context"] = Field(
        default="turn",
        description="agent_entities: judge every entity of the turn's text (our cascade rule), "
        "or only those of the context, caller turns and tool responses, that the turn says "
        "(the reference's rule, EVA spec 4.3; audio-native pipelines)",
    )
    transcribed_turns: list[int] = Field(
        default_factory=list,
        description="Turns whose text is the caller side's transcript of the agent's audio "
        "(an s2s agent that reported no text of its own)",
    )


class BehaviorInput(JudgeInput):
    """user_behavioral_fidelity: what the caller did against its instructions."""

    trace: list[TraceItem]
    intended_user_turns: dict[int, str] = Field(default_factory=dict)
    user_goal: dict[str, Any] = Field(default_factory=dict)
    user_persona: str = ""
    end_reason: str = Field(default="", description="How the conversation ended")
    caller_ended: bool = Field(default=False, description="The caller hung up with end_call")
    write_tools: list[str] = Field(default_factory=list)
    language: str = "en"
    pipeline: Pipeline = "cascade"
