"""Turn a judge task's typed inputs into the variables of its prompt template."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tasks.judges.base import JudgeTask
from tasks.judges.inputs import (
    BehaviorInput,
    ConcisenessInput,
    ConversationInput,
    KeyEntityInput,
    SpeechFidelityInput,
    TraceItem,
    TurnTextInput,
    format_trace,
)
from tasks.judges.prompts import pipeline_notes


def template_key(task: JudgeTask) -> str:
    """Prompt key of a task (the key-entity judge has a second rubric for tool calls)."""
    if isinstance(task.inputs, KeyEntityInput) and task.inputs.mode == "tool_calls":
        return f"{task.metric}_tool_calls"
    return task.metric


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _conversation(inp: ConversationInput) -> dict[str, Any]:
    return {
        "role": inp.role or "(not given)",
        "current_date_time": inp.current_date_time or "(not given)",
        "instructions": inp.instructions or "(not given)",
        "tools": _dumps(inp.tools),
        "pipeline_notes": pipeline_notes(inp.pipeline),
        "conversation": format_trace(inp.trace),
    }


def _conciseness(inp: ConcisenessInput) -> dict[str, Any]:
    turn_ids = sorted({item.turn_id for item in inp.trace})
    return {"conversation": format_trace(inp.trace), "turn_ids": _dumps(turn_ids)}


def _turn_blocks(turns: dict[int, str], style: str) -> str:
    if style == "bracket":
        return "\n\n".join(f"[Turn {t}]\n{text}" for t, text in sorted(turns.items()))
    return "\n".join(f"Turn {t}: {' '.join(text.split())}" for t, text in sorted(turns.items()))


def _key_entities(inp: KeyEntityInput) -> dict[str, Any]:
    if inp.mode == "tool_calls":
        return {"conversation": redacted_tool_conversation(inp.trace)}
    units = "\n\n".join(
        f"Turn {u.unit_id}:\nExpected: {u.expected}\nTranscribed: {u.transcribed}"
        for u in inp.units
    )
    return {"units": units}


def redacted_tool_conversation(trace: list[TraceItem]) -> str:
    """Caller turns verbatim, agent turns redacted, tool calls numbered 1..N (spec 4.6)."""
    lines: list[str] = []
    call_no = 0
    for item in trace:
        if item.kind == "user":
            lines.append(f"Turn {item.turn_id} - user: {item.text}")
        elif item.kind == "assistant":
            lines.append(f"Turn {item.turn_id} - assistant: [redacted]")
        elif item.kind == "tool_call":
            call_no += 1
            lines.append(f"Tool Call [{call_no}] ({item.tool_name}): {_dumps(item.params)}")
        else:
            lines.append(f"Tool Response ({item.tool_name}): {_dumps(item.response)}")
    return "\n".join(lines)


def _speech(inp: SpeechFidelityInput) -> dict[str, Any]:
    variables: dict[str, Any] = {
        "language": inp.language,
        "turns": _turn_blocks(inp.turns, "line"),
        "turn_ids": _dumps(sorted(inp.turns)),
    }
    if inp.variant == "agent_entities":
        lines: list[str] = []
        for item in inp.trace:
            if item.kind == "user":
                lines.append(f"Turn {item.turn_id} - user: {item.text}")
            elif item.kind == "assistant":
                lines.append(f"Turn {item.turn_id} - [Assistant speaks]")
            elif item.kind == "tool_response":
                lines.append(
                    f"Turn {item.turn_id} - Tool Response ({item.tool_name}): "
                    f"{_dumps(item.response)}"
                )
        variables["context"] = "\n".join(lines)
    return variables


def caller_instructions(inp: BehaviorInput) -> str:
    """The caller's brief re-rendered from its goal and persona."""
    goal = inp.user_goal or {}
    parts = [f"Persona: {inp.user_persona}" if inp.user_persona else ""]
    if goal.get("high_level_user_goal"):
        parts.append(f"Goal: {goal['high_level_user_goal']}")
    tree = goal.get("decision_tree") or {}
    for key, value in tree.items():
        if value:
            parts.append(f"{key}: {_dumps(value)}")
    if goal.get("information_required"):
        parts.append(f"Information you may give when asked: {_dumps(goal['information_required'])}")
    parts.append(f"Speak {inp.language}.")
    return "\n".join(p for p in parts if p)


def _behavior(inp: BehaviorInput) -> dict[str, Any]:
    ended = inp.end_reason or "unknown"
    if inp.caller_ended:
        ended = f"{ended} (the caller ended the call with end_call)"
    return {
        "language": inp.language,
        "caller_instructions": caller_instructions(inp),
        "write_tools": _dumps(inp.write_tools),
        "end_reason": ended,
        "pipeline_notes": pipeline_notes(inp.pipeline)
        + "\nAgent mishearing of the caller is not the caller's fault.",
        "conversation": format_trace(inp.trace),
        "intended_turns": _turn_blocks(inp.intended_user_turns, "line"),
    }


_BUILDERS: dict[type, Callable[[Any], dict[str, Any]]] = {
    ConversationInput: _conversation,
    ConcisenessInput: _conciseness,
    KeyEntityInput: _key_entities,
    SpeechFidelityInput: _speech,
    BehaviorInput: _behavior,
    TurnTextInput: lambda inp: {"turns": _turn_blocks(inp.turns, "bracket")},
}


def prompt_variables(task: JudgeTask) -> dict[str, Any]:
    """Template variables for ``task``; unknown input types raise a TypeError."""
    builder = _BUILDERS.get(type(task.inputs))
    if builder is None:
        raise TypeError(f"no prompt variables for input type {type(task.inputs).__name__}")
    return builder(task.inputs)
