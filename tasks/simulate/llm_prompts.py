"""Prompt text of the ``llm`` agent and the ``llm`` caller (our own words).

The agent prompt frames a voice assistant on a phone line (EVA spec 7.5): today's date, the
domain agent's role, personality and policy instructions, then rules that make text good
to *hear* once it goes through TTS. The caller prompt turns the resolved user goal (goal,
decision tree, information, opening line) and the persona into instructions for a person
phoning in, with the hang-up rules of the spec's OpenAI caller (7.3).

Fixed sentences the spec names (greeting, generic error, transfer) live here too, so every
spoken word of the LLM components is in one file. Prompts are versioned by hash.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import date
from typing import Any

from scenarios.models import Scenario

# The cascade's per-language initial message (spec 7.5) - the agent greets without the model.
GREETING = "Hello! How can I help you today?"
# Spoken when the model cannot be reached or answers garbage (spec 4.2, 7.5).
GENERIC_ERROR_SENTENCE = "I'm sorry, I encountered an error processing your request."
# Spoken instead of executing transfer_to_agent (spec 2.2, cascade special case).
TRANSFER_SENTENCE = "Transferring you to a live agent, please wait."
TRANSFER_RESPONSE: dict[str, Any] = {"status": "transfer_initiated"}
TRANSFER_TOOL = "transfer_to_agent"
# Stands in for an empty transcript, so the model sees that something unintelligible was said.
INAUDIBLE = "[inaudible]"

# A caller that wants to hang up without having said a word says this much.
CALLER_FINAL_GOODBYE = "Goodbye."
END_CALL_TOOL_NAME = "end_call"
_NUMBERED = re.compile(r"\d+[.)]\s")

AGENT_VOICE_RULES = """\
# How to speak
Everything you write is turned into speech and played to the caller over a phone line.
- Write plain spoken sentences only: no markdown, bullet points, numbered lists, tables,
  emojis, headings or URLs.
- Keep each turn short and conversational: usually one to three sentences, and ask for
  one or two pieces of information at a time.
- Say codes, confirmation numbers and IDs character by character with spaces between the
  characters (for example "Z K 3 F F W"), and say amounts, dates and times the way a
  person says them ("one hundred fifteen dollars", "March twenty-fifth", "nine twenty-five
  a.m.").
- Do not ask again for information the caller already gave you.
- When a lookup fails, read back what you heard and ask the caller to confirm or spell it;
  retry once with the corrected value before explaining that you cannot proceed.
- Use your tools for every fact about the caller's records; never guess or invent
  identifiers, amounts or availability.
- Before an action that changes something, say briefly what you are about to do.
- When the caller says goodbye, say goodbye briefly."""

CALLER_RULES = """\
# How to behave
- You are the caller, not the agent. Speak only your own lines, one turn at a time, in
  short spoken sentences. Never write stage directions, labels, lists or markdown.
- Share a piece of the information above only when the agent asks for it or when it is
  needed to move on. Never invent facts you were not given; if asked something you do not
  know, say so.
- When the agent asks you to spell or repeat something, do so, character by character for
  codes.
- Follow the decision tree: insist on the must-haves, negotiate as described, and stop
  when the resolution or failure condition is reached.
- When the agent offers several options, check each against your must-haves and take the
  one your decision tree picks; name it (its time, number or code), not "that one".
- When the agent asks several things in one turn, answer every part you have an answer
  for, or the parts in turn; never hang up because one part does not fit.
- If what you heard makes no sense, ask the agent to repeat it.

# Ending the call
You hang up with the end_call tool. Rules:
- Only hang up after you have said goodbye to the agent (in this turn or your previous
  one).
- Never hang up in the same turn in which you give information, answer a question or
  approve something: wait for the agent's reply first.
- Hang up once the resolution condition or the failure condition is met and goodbyes are
  said."""

CALLER_REFUSAL_INFORMATION = (
    "The call was not ended: you gave information in this turn. Wait for the agent's reply "
    "before hanging up."
)
CALLER_REFUSAL_GOODBYE = "The call was not ended: say goodbye to the agent before hanging up."
CALLER_ACCEPTED = "The call has ended."


def end_call_tool() -> dict[str, Any]:
    """The caller's only tool, in OpenAI function-calling form."""
    return {
        "type": "function",
        "function": {
            "name": END_CALL_TOOL_NAME,
            "description": (
                "Hang up the phone call. Use it only after you have said goodbye, and never "
                "in the same turn in which you give information or approve something."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "reason": {
                        "type": "string",
                        "description": "Why you are hanging up (goal met, gave up, ...)",
                    }
                },
                "required": [],
            },
        },
    }


def spoken_now(current_date_time: str) -> str:
    """ "2026-03-17 10:45 CST" -> "Tuesday, March 17, 2026, 10:45 CST" (raw text if odd)."""
    head, _, rest = current_date_time.strip().partition(" ")
    try:
        day = date.fromisoformat(head)
    except ValueError:
        return current_date_time.strip()
    text = f"{day.strftime('%A')}, {day.strftime('%B')} {day.day}, {day.year}"
    return f"{text}, {rest}" if rest else text


def agent_system_prompt(scenario: Scenario) -> str:
    """System prompt of the ``llm`` agent for one scenario."""
    agent = scenario.agent
    parts = [
        "You are a voice assistant answering a live phone call. The caller hears your "
        "replies as synthesized speech and you hear them through speech recognition, so "
        "their words may contain recognition errors.",
        f"Today is {spoken_now(scenario.current_date_time)}.",
    ]
    if agent.role:
        parts.append(f"# Your role\n{agent.role.strip()}")
    if agent.description:
        parts.append(f"# Your service\n{agent.description.strip()}")
    if agent.instructions:
        parts.append(f"# Policy you must follow\n{agent.instructions.strip()}")
    parts.append(AGENT_VOICE_RULES)
    return "\n\n".join(parts)


def _bullets(items: Any) -> str:
    if isinstance(items, str):
        return f"- {items}" if items.strip() else ""
    if isinstance(items, list):
        texts = [_plain(item) for item in items if _plain(item)]
        # Items that number themselves ("1. Start by ...") read better without a bullet.
        return "\n".join(t if _NUMBERED.match(t) else f"- {t}" for t in texts)
    return ""


def _plain(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def decision_tree_text(tree: dict[str, Any]) -> str:
    """The decision tree as titled sections (empty ones left out)."""
    sections = [
        ("Must have", _bullets(tree.get("must_have_criteria"))),
        ("Nice to have", _bullets(tree.get("nice_to_have_criteria"))),
        ("How to negotiate, step by step", _bullets(tree.get("negotiation_behavior"))),
        ("When you are done (resolution)", _bullets(tree.get("resolution_condition"))),
        ("When to give up (failure)", _bullets(tree.get("failure_condition"))),
        ("Transfers and supervisors", _bullets(tree.get("escalation_behavior"))),
        ("Special cases", _bullets(tree.get("edge_cases"))),
    ]
    return "\n\n".join(f"## {title}\n{body}" for title, body in sections if body)


def information_text(info: Any, indent: str = "") -> str:
    """``information_required`` as indented "key: value" lines."""
    if not isinstance(info, dict):
        return f"{indent}- {_plain(info)}" if _plain(info) else ""
    lines = []
    for key, value in info.items():
        label = str(key).replace("_", " ")
        if isinstance(value, dict):
            nested = information_text(value, indent + "  ")
            lines.append(f"{indent}- {label}:\n{nested}" if nested else f"{indent}- {label}")
        elif _plain(value):
            lines.append(f"{indent}- {label}: {_plain(value)}")
    return "\n".join(lines)


def caller_system_prompt(scenario: Scenario, persona_text: str | None = None) -> str:
    """System prompt of the ``llm`` caller: who it is, what it wants, how it talks and ends.

    ``persona_text`` (a behaviour persona's, spec 8.1) replaces the scenario's persona, as
    EVA's ``user_behaviors.yaml`` fragment does."""
    goal = scenario.user_goal
    user = scenario.user_config
    name = str(user.get("name") or "").strip()
    parts = [
        "You are playing a person who phones a customer-service line and talks to its voice "
        "agent. You hear the agent through speech recognition, so its words may be garbled; "
        "what you write is spoken aloud by a speech synthesizer.",
        f"Today is {spoken_now(scenario.current_date_time)}.",
    ]
    if name:
        parts.append(f"# Who you are\nYour name is {name}.")
    persona = (persona_text or str(user.get("user_persona") or "")).strip()
    if persona:
        parts.append(f"# Your personality\n{persona}")
    if goal.get("high_level_user_goal"):
        parts.append(f"# Your goal\n{str(goal['high_level_user_goal']).strip()}")
    tree = goal.get("decision_tree")
    if isinstance(tree, dict) and decision_tree_text(tree):
        parts.append(f"# Decision tree\n{decision_tree_text(tree)}")
    info = information_text(goal.get("information_required") or {})
    if info:
        parts.append(f"# Information you have (give it only when it is needed)\n{info}")
    opening = str(goal.get("starting_utterance") or "").strip()
    if opening:
        parts.append(f'# Your first words\nOpen the call with: "{opening}"')
    parts.append(CALLER_RULES)
    return "\n\n".join(parts)


def prompt_hash(text: str) -> str:
    """First 12 hex digits of SHA-256 of a rendered prompt (stored with the attempt)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
