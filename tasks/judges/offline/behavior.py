"""Offline rule of ``user_behavioral_fidelity``: did the simulated caller corrupt the test?"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from tasks.judges.base import JudgeTask
from tasks.judges.inputs import BehaviorInput, TraceItem
from tasks.judges.offline import OfflineAnswer, offline_rule
from tasks.judges.offline.entities import canonical, compact

SCOPE = """Rule-based check of the simulated caller against its instructions, judged on what
it said (intended text). premature_ending: the caller ended the call right after the agent
asked it a question that was not a closing question, before any write tool ran, while the
agent was progressing (no failed tool call in that or the previous turn, no transfer offer,
no statement that it cannot help or hit an error, and not stalled: its last three replies
were not all echoes of the caller's turn or repeats of its own previous reply with no tool
call among them). missing_information: the agent requested an item the
caller's instructions hold (a question or request naming the item's key words; yes/no
confirmations do not count) and no later caller turn gave its value or a value of a
variant of the item, and no write tool succeeded afterwards; a request the caller had no
turn to answer (the call was cut off, not hung up by the caller) is not counted.
duplicate_modifications: the same write tool ran twice with identical arguments after the
caller asked again.
What a behaviour persona may do (spec 8.1) is not asking again: a turn that only asks the
agent to say its last turn again, or a piece restated with "Like I said, ...", asks for
no action; a value withheld and given once the agent asks is not missing.
extra_modifications: a write tool whose name appears nowhere in the caller's goal ran
right after the caller asked for something the agent had not proposed (writes the agent
chains after another write in the same turn are its own follow-ups). wrong_language: for
English runs, caller text that is mostly non-Latin script or has almost no English
function words. decision_tree_violation cannot be checked by rule and is never
detected."""

KEYS = (
    "extra_modifications",
    "premature_ending",
    "missing_information",
    "duplicate_modifications",
    "decision_tree_violation",
    "wrong_language",
)
_CLOSING = re.compile(
    r"\b(anything else|something else|help you with|have a (great|good|nice))\b", re.I
)
_ENGLISH = {
    "the",
    "and",
    "is",
    "to",
    "my",
    "i",
    "a",
    "you",
    "it",
    "of",
    "on",
    "for",
    "yes",
    "no",
    "that",
    "please",
    "me",
    "can",
    "in",
    "this",
    "what",
    "with",
    "have",
}
_ASKING = re.compile(r"\b(can|could|would|please|i need|i want|i'd like|also)\b", re.I)
# A persona's turns that ask for no action (spec 8.1): "could you say that again?" asks to
# hear the agent again; "Like I said, ..." restates what the caller asked before.
_SAY_AGAIN = re.compile(
    r"\b(?:(?:can|could|would) you (?:please )?)?"
    r"(?:say (?:that|it) again|repeat (?:that|it|yourself)|come again|pardon|"
    r"(?:didn't|did not|couldn't|could not) (?:quite )?(?:catch|hear|get) (?:that|it|you))\b",
    re.I,
)
_RESTATED = re.compile(r"^\s*like i said,[^.!?]*[.!?]?\s*", re.I)


def _write_calls(trace: list[TraceItem], write_tools: list[str]) -> list[tuple[int, TraceItem]]:
    return [
        (i, t) for i, t in enumerate(trace) if t.kind == "tool_call" and t.tool_name in write_tools
    ]


_CANNOT = re.compile(
    r"\b(can ?not|can't|unable|not able|won't be able|not eligible|isn't eligible|"
    r"doesn't match|does not match|no longer|not possible|not allowed)\b",
    re.I,
)
_TRANSFER = re.compile(r"\b(transfer|live agent|representative|human agent|supervisor)\b", re.I)
_ERRED = re.compile(
    r"\b(an error|encountered an error|something went wrong|technical (?:issue|problem|difficult))",
    re.I,
)
# A stalled agent: this many replies in a row that only parrot the caller or repeat
# themselves, with no tool call among them (spec 4.5: "agent stuck" exonerates the caller).
STALL_TURNS = 3
ECHO_SHARE = 0.6  # share of the caller's content words a parroting reply repeats
REPEAT_SHARE = 0.8  # word overlap (Jaccard) of a reply with the agent's previous one


def _failed(item: TraceItem) -> bool:
    response = item.response
    return (
        item.kind == "tool_response"
        and isinstance(response, dict)
        and str(response.get("status", "")).lower() == "error"
    )


def premature_ending(inp: BehaviorInput) -> str | None:
    """Hanging up on a pending question while the agent was competently progressing toward
    a needed write. Exonerated (spec 4.5): a write already ran, a tool failed in that turn
    or the turn before (the question is a retry offer), the agent offered a transfer,
    said it cannot help or hit an error, was stalled (:func:`stalled`), or its question
    was a closing one."""
    if not inp.caller_ended:
        return None
    agent = [t for t in inp.trace if t.kind == "assistant"]
    if not agent or _write_calls(inp.trace, inp.write_tools):
        return None
    last = agent[-1]
    failed = any(_failed(t) and last.turn_id - 1 <= t.turn_id <= last.turn_id for t in inp.trace)
    stuck = bool(_CANNOT.search(last.text) or _TRANSFER.search(last.text))
    stuck = stuck or bool(_ERRED.search(last.text)) or stalled(inp.trace)
    question = last.text.rstrip().endswith("?") and not _CLOSING.search(last.text)
    if question and not failed and not stuck:
        return (
            f"the caller hung up after the agent asked (turn {last.turn_id}): {last.text[-120:]!r}"
        )
    return None


def _content(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9']+", text.lower()) if len(w) > 2}


def _parrots(reply: str, caller: str, previous: str | None) -> bool:
    """The reply repeats the caller's turn or the agent's own previous reply."""
    said, words = _content(caller), _content(reply)
    if len(said) >= 2 and len(said & words) >= ECHO_SHARE * len(said):
        return True
    if previous is None or not words:
        return False
    before = _content(previous)
    return len(words & before) >= REPEAT_SHARE * len(words | before)


def stalled(trace: list[TraceItem]) -> bool:
    """The agent's last ``STALL_TURNS`` replies (greeting excluded) only parroted the
    caller or repeated themselves, and it called no tool in those turns: it was not
    progressing, so hanging up on it is not premature (spec 4.5, "agent stuck")."""
    replies = [t for t in trace if t.kind == "assistant" and t.turn_id > 0]
    if len(replies) < STALL_TURNS:
        return False
    recent = replies[-STALL_TURNS:]
    first = recent[0].turn_id
    if any(t.kind == "tool_call" and t.turn_id >= first for t in trace):
        return False
    caller = {t.turn_id: t.text for t in trace if t.kind == "user"}
    previous = {r.turn_id: p.text for p, r in zip(replies, replies[1:], strict=False)}
    return all(_parrots(r.text, caller.get(r.turn_id, ""), previous.get(r.turn_id)) for r in recent)


def _info_items(goal: dict[str, Any]) -> dict[str, str]:
    info = goal.get("information_required") or {}
    if not isinstance(info, dict):
        return {}
    return {
        str(k): json.dumps(v, default=str) if not isinstance(v, str) else v for k, v in info.items()
    }


# A yes/no question about an item ("Does that match the phone number on file?") asks for a
# confirmation, not for the value; a request names the item and wants it said.
_YES_NO = re.compile(
    r"^(?:\w+, )?(?:does|do|is|are|did|was|were|has|have|shall|should|will|would you like)\b",
    re.I,
)
_REQUEST = re.compile(
    r"\b(could|can|may) (?:i|you|we) (?:have|get|give|tell|read|spell|provide)\b|"
    r"\b(?:give|tell|read|spell|provide|say) (?:me|us)\b|"
    r"\bplease (?:give|tell|read|spell|provide|say|share)\b",
    re.I,
)


def _requests(text: str) -> list[str]:
    """Sentences of an agent turn that ask the caller for a value."""
    sentences = re.split(r"(?<=[.!?])\s+", text.replace("\u2019", "'"))
    return [
        s.lower()
        for s in sentences
        if (s.rstrip().endswith("?") and not _YES_NO.match(s.strip())) or _REQUEST.search(s)
    ]


def _words(key: str) -> set[str]:
    return {w for w in key.lower().split("_") if len(w) > 2}


def _names_item(sentence: str, key: str) -> bool:
    """Every word of the item's key is a word of the sentence (plurals folded)."""
    words = _words(key)
    tokens = {t.rstrip("s") for t in re.findall(r"[a-z]+", sentence)}
    return bool(words) and all(w.rstrip("s") in tokens for w in words)


def _value_given(value: str, said_compact: str) -> bool:
    """The caller said the value: whole, or most of its words / digit groups (a phone number
    confirmed by its last four digits, "Permanent Resident Card" for PERM_RESIDENT_CARD)."""
    key = compact(value)
    if not key or key in said_compact:
        return True
    parts = [p for p in re.findall(r"[a-z]+|\d+", canonical(value)) if len(p) >= 4]
    return bool(parts) and sum(p in said_compact for p in parts) * 2 >= len(parts)


def missing_information(inp: BehaviorInput) -> str | None:
    """The agent requested an item of the caller's instructions that the caller never gave
    (nor a variant of it: ``date_of_birth_you_first_say_1`` answers ``date_of_birth``,
    ``old_phone_last_four_1`` answers ``phone_last_four``), and no write succeeded
    afterwards (spec 4.5: only withholding that blocked a write corrupts the test)."""
    items = _info_items(inp.user_goal)
    for i, item in enumerate(inp.trace):
        if item.kind != "assistant" or not _could_answer(inp, i):
            continue
        for sentence in _requests(item.text):
            # "the new hire's employee ID" names new_hire_employee_id and employee_id: the
            # request is answered when any item it names is.
            asked = [k for k in items if _names_item(sentence, k)]
            if not asked or _answered(inp, asked, items):
                continue
            if not _write_succeeded_after(inp, i):
                key = max(asked, key=lambda k: len(_words(k)))
                return f"the agent asked for {key} (turn {item.turn_id}); the caller never gave it"
    return None


def _could_answer(inp: BehaviorInput, index: int) -> bool:
    """The caller had its turn after the request, or hung up instead of answering: a call
    cut off (time limit, the agent hanging up) while the agent asked withheld nothing."""
    return inp.caller_ended or any(t.kind == "user" for t in inp.trace[index + 1 :])


def _answered(inp: BehaviorInput, asked: list[str], items: dict[str, str]) -> bool:
    """Some item the request names (or a variant) was said at any point of the call: a
    value given before the agent asked again is the agent's loss, not the caller's."""
    said = [t.text for t in inp.trace if t.kind == "user"] + list(inp.intended_user_turns.values())
    said_compact = compact(" ".join(said))
    variants = [v for k, v in items.items() if any(_words(a) <= _words(k) for a in asked)]
    return any(_value_given(v, said_compact) for v in variants)


def _write_succeeded_after(inp: BehaviorInput, index: int) -> bool:
    later = inp.trace[index + 1 :]
    for j, call in enumerate(later):
        if call.kind == "tool_call" and call.tool_name in inp.write_tools:
            response = next((r for r in later[j + 1 :] if r.kind == "tool_response"), None)
            if response is None or not _failed(response):
                return True
    return False


def duplicate_modifications(inp: BehaviorInput) -> str | None:
    seen: dict[str, int] = {}
    for _, call in _write_calls(inp.trace, inp.write_tools):
        key = f"{call.tool_name}:{json.dumps(call.params, sort_keys=True, default=str)}"
        if key in seen and _asked_between(inp.trace, seen[key], call.turn_id):
            return (
                f"{call.tool_name} ran twice with identical arguments after the caller asked again"
            )
        seen[key] = call.turn_id
    return None


def asks_for_action(text: str) -> bool:
    """The caller's turn asks the agent for something, beyond asking to hear it again and
    beyond a piece it restates ("Like I said, ...")."""
    text = _SAY_AGAIN.sub("", text.replace("\u2019", "'"))
    return bool(_ASKING.search(_RESTATED.sub("", text)))


def _asked_between(trace: list[TraceItem], first: int, second: int) -> bool:
    return any(
        t.kind == "user" and first < t.turn_id <= second and asks_for_action(t.text) for t in trace
    )


def extra_modifications(inp: BehaviorInput) -> str | None:
    """A write the caller asked for off-script. Not the caller's doing: a write the agent
    chained after another write in the same turn (notifications, SLA tiers, logging), or
    one that answers the agent's own proposal or question (the caller only agreed)."""
    goal_text = canonical(json.dumps(inp.user_goal, default=str)).replace(" ", "")
    if not goal_text:
        return None
    for i, call in _write_calls(inp.trace, inp.write_tools):
        name = call.tool_name or ""
        words = [w for w in name.split("_") if len(w) > 3]
        if not words or any(w in goal_text for w in words):
            continue
        if _chained(inp.trace, i, inp.write_tools) or _agent_proposed(inp.trace, i):
            continue
        if _asked_between(inp.trace, call.turn_id - 1, call.turn_id):
            return f"{name} ran after a caller request that is not in its goal"
    return None


def _chained(trace: list[TraceItem], index: int, write_tools: list[str]) -> bool:
    """Another write ran earlier in the same turn, after the caller last spoke."""
    for item in reversed(trace[:index]):
        if item.kind == "user" or item.turn_id != trace[index].turn_id:
            return False
        if item.kind == "tool_call" and item.tool_name in write_tools:
            return True
    return False


def _agent_proposed(trace: list[TraceItem], index: int) -> bool:
    """The agent's last words before the caller's turn were a (non-closing) question."""
    seen_user = False
    for item in reversed(trace[:index]):
        if item.kind == "user":
            seen_user = True
        elif item.kind == "assistant" and seen_user:
            return "?" in item.text and not _CLOSING.search(item.text)
    return False


def wrong_language(inp: BehaviorInput) -> str | None:
    if not inp.language.lower().startswith("en"):
        return None
    text = " ".join(inp.intended_user_turns.values())
    letters = re.findall(r"[^\W\d_]", text)
    if not letters:
        return None
    latin = sum(1 for c in letters if c.isascii())
    words = re.findall(r"[a-z']+", text.lower())
    english = sum(1 for w in words if w in _ENGLISH)
    if latin / len(letters) < 0.5 or (len(words) >= 20 and english / len(words) < 0.05):
        return "the caller mostly did not speak English"
    return None


CHECKS = {
    "extra_modifications": extra_modifications,
    "premature_ending": premature_ending,
    "missing_information": missing_information,
    "duplicate_modifications": duplicate_modifications,
    "wrong_language": wrong_language,
}


def judge_behavior(inp: BehaviorInput) -> dict[str, Any]:
    analysis = {}
    for key in KEYS:
        check = CHECKS.get(key)
        found = check(inp) if check else None
        note = found or ("Not checkable by rule." if check is None else "Not detected.")
        analysis[key] = {"analysis": note, "detected": bool(found)}
    corrupted = any(v["detected"] for v in analysis.values())
    return {"corruption_analysis": analysis, "rating": 0 if corrupted else 1}


@offline_rule("user_behavioral_fidelity", SCOPE)
def behavior_rule(task: JudgeTask, params: Mapping[str, Any]) -> OfflineAnswer:
    if not isinstance(task.inputs, BehaviorInput):
        return OfflineAnswer(error=f"expected BehaviorInput, got {type(task.inputs).__name__}")
    return OfflineAnswer(output=judge_behavior(task.inputs))
