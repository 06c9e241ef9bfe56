"""Policy-side rules shared by the offline faithfulness judge: write tools, confirmations,
policy claims and claimed capabilities."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from tasks.judges.inputs import ConversationInput, TraceItem
from tasks.judges.offline.entities import canonical, compact, find_entities
from tasks.judges.offline.grounding import Sources

DIMENSIONS = (
    "fabricating_tool_parameters",
    "misrepresenting_tool_result",
    "violating_policies",
    "failing_to_disambiguate",
    "hallucination",
)
_READ_PREFIXES = ("get_", "search_", "check_", "lookup_", "list_", "find_", "verify_", "query_")
_AFFIRM = re.compile(
    r"\b(yes|yeah|yep|sure|ok|okay|please do|go ahead|do it|do that|book it|proceed|confirm(?:ed)?|"
    r"that works|sounds good|let'?s do|i'?ll take|take the|switch me|rebook me|move me|put me|"
    r"cancel it|process|correct|that'?s right|perfect|great|fine|absolutely|please (?:cancel|"
    r"rebook|switch|book|issue|add|move|change|submit|go))\b",
    re.IGNORECASE,
)
# Money the caller pays (benefits the caller receives, e.g. vouchers, are not charges).
_CHARGE_KEYS = re.compile(r"fee|fare_diff|difference|charge|collected|price|cost|penalty|total_due")
# Actions that cannot be taken back by a later call.
_IRREVERSIBLE = re.compile(r"cancel|rebook|refund|delete|remove|terminate|revoke|close|submit|pay")
# A question about money the caller asked in the same breath as agreeing: the agent must
# answer it before acting ("Yes, but can you confirm the exact total before you book?").
_COST_QUESTION = re.compile(
    r"[^.!?]*\b(cost|total|amount|fee|price|charge|how much|dollars?)\b[^.!?]*\?", re.IGNORECASE
)
_CLAIM = re.compile(
    r"\b(polic(?:y|ies)|guidelines?|entitled|per our|according to our|all (?:elite )?"
    r"(?:members|passengers|customers|travell?ers)|always|complimentary|unlimited)\b",
    re.IGNORECASE,
)
_STOP_WORDS = """that this with from have will your you our are for and the been can any all per its
    they their them there what when which would could should about also just into more most
    only other some such than then these those very here over under after before because
    while being were does done each every need make sure like want able back call"""
_STOP = frozenset(_STOP_WORDS.split())
_SENT_CLAIM = re.compile(
    r"\b(?:I(?:'ve| have)|we(?:'ve| have)|I just)\s+(?:also\s+)?(sent|emailed|e-mailed|texted|mailed)\b",
    re.IGNORECASE,
)
_SEND_TOOL = re.compile(r"send|email|mail|notify|sms|text|message")


class Issue(BaseModel):
    """One problem a rule found, in the rubric's terms."""

    dimension: str
    rating: int = Field(ge=1, le=3)
    turn: int
    evidence: str


def tool_type(name: str, tools: list[dict[str, Any]]) -> str:
    """Tool type from the schema; without one, read-like name prefixes are reads."""
    for tool in tools:
        if tool.get("id") == name or tool.get("name") == name:
            return str(tool.get("tool_type", "read"))
    if name.startswith(_READ_PREFIXES):
        return "read"
    return "system" if name in ("transfer_to_agent", "end_call") else "write"


def is_write_tool(name: str, tools: list[dict[str, Any]]) -> bool:
    return tool_type(name, tools) == "write"


def is_read_only(name: str, tools: list[dict[str, Any]]) -> bool:
    return tool_type(name, tools) in ("read", "auth")


def charges_caller(call: TraceItem, response: Any) -> bool:
    """A non-zero charge field in the call or its response."""
    for container in (call.params, response):
        if not isinstance(container, dict):
            continue
        for key, value in _walk(container):
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if number and _CHARGE_KEYS.search(key.lower()) and abs(value) > 0.004:
                return True
    return False


def _walk(value: Any, key: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _walk(v, str(k))]
    if isinstance(value, list):
        return [pair for v in value for pair in _walk(v, key)]
    return [(key, value)]


def _write_problem(
    trace: list[TraceItem], i: int, said: str, tools: list[dict[str, Any]], charged: bool
) -> str | None:
    """Why the write at ``trace[i]`` lacks the caller's informed agreement, if it does."""
    before = trace[:i]
    last_speech = next((t for t in reversed(before) if t.kind in ("user", "assistant")), None)
    if last_speech is not None and last_speech.kind == "assistant" and "?" in last_speech.text:
        return "right after asking the caller, without waiting for the answer"
    turn = trace[i].turn_id
    for j in range(i - 1, -1, -1):
        item = trace[j]
        if item.turn_id != turn or item.kind in ("user", "assistant"):
            break
        if item.kind == "tool_call" and not is_write_tool(item.tool_name or "", tools):
            return f"in the same breath as the {item.tool_name} lookup, before telling the caller"
    if not _AFFIRM.search(said) and (charged or not caller_chose(said, trace[i])):
        return "without the caller agreeing in this turn"
    if _COST_QUESTION.search(said):
        return "with the caller's cost question unanswered"
    return None


def caller_chose(said: str, call: TraceItem) -> bool:
    """The caller asked for the very value the write uses ("The window desk, D five two zero,
    please" before ``desk_code=BLD7-FL5-D520``): picking an option the agent offered is
    agreeing to it. Not for charges: money needs an explicit yes to a stated amount."""
    if not said or "?" in said:
        return False
    args = " ".join(compact(str(v)) for v in call.params.values() if isinstance(v, str | int))
    return any(
        len(key := compact(e.value)) >= 3 and any(c.isdigit() for c in key) and key in args
        for e in find_entities(said)
    )


def unconfirmed_writes(trace: list[TraceItem], tools: list[dict[str, Any]]) -> list[Issue]:
    """Irreversible or charging write tools run without the caller's informed agreement:
    right after a lookup in the same turn, right after a question the caller had not
    answered, with no agreement in the caller's words, or with the caller's cost question
    pending. A caller who picks the offered value the write uses agrees to a write that
    charges nothing. Writes that only grant benefits or carry ancillaries over are left
    alone."""
    user_text: dict[int, str] = {}
    for item in trace:
        if item.kind == "user":
            user_text[item.turn_id] = user_text.get(item.turn_id, "") + " " + item.text
    issues = []
    for i, item in enumerate(trace):
        name = item.tool_name or ""
        if item.kind != "tool_call" or not is_write_tool(name, tools):
            continue
        response = next((r.response for r in trace[i + 1 :] if r.kind == "tool_response"), None)
        if isinstance(response, dict) and str(response.get("status", "")).lower() == "error":
            continue  # nothing happened
        charged = charges_caller(item, response)
        if not (charged or _IRREVERSIBLE.search(name)):
            continue
        why = _write_problem(trace, i, user_text.get(item.turn_id, "").strip(), tools, charged)
        if why:
            issues.append(
                Issue(
                    dimension="violating_policies",
                    rating=1,
                    turn=item.turn_id,
                    evidence=f"{name} executed {why}"
                    + (" (the caller was charged)" if charged else ""),
                )
            )
    return issues


def _content_words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z]{4,}", canonical(text)) if w not in _STOP]


_UNIVERSAL = re.compile(
    r"\b(all (?:elite )?(?:members|passengers|customers|travell?ers)|always|unlimited|"
    r"every (?:passenger|member|customer))\b",
    re.IGNORECASE,
)


def policy_claims(inp: ConversationInput, sources: Sources) -> list[Issue]:
    """Policy-style sentences whose content words are absent from every source: two or more
    unsupported words, or one in a sweeping claim ('all members', 'always', 'unlimited')."""
    known = set(_content_words(" ".join([inp.role, inp.instructions])))
    known |= set(re.findall(r"[a-z]{4,}", sources.tool_canonical + " " + sources.user_canonical))
    issues = []
    for item in inp.trace:
        if item.kind != "assistant":
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", item.text.replace("\u2019", "'")):
            if not _CLAIM.search(sentence):
                continue
            words = _content_words(sentence)
            missing = [w for w in words if w not in known and w.rstrip("s") not in known]
            sweeping = bool(_UNIVERSAL.search(sentence)) and len(missing) >= 1
            if sweeping or (len(missing) >= 2 and len(missing) / max(1, len(words)) >= 0.34):
                issues.append(
                    Issue(
                        dimension="hallucination",
                        rating=1,
                        turn=item.turn_id,
                        evidence=f"policy claim not in the policy: {sentence.strip()!r}"
                        f" (unsupported words: {', '.join(missing[:5])})",
                    )
                )
    return issues


def capability_claims(inp: ConversationInput) -> list[Issue]:
    """'I've emailed you...' when no tool can send anything."""
    names = " ".join(str(t.get("id", t.get("name", ""))) for t in inp.tools)
    names += " " + " ".join(i.tool_name or "" for i in inp.trace if i.kind == "tool_call")
    if _SEND_TOOL.search(names.lower()):
        return []
    issues = []
    for item in inp.trace:
        text = item.text.replace("\u2019", "'")
        if item.kind == "assistant" and (m := _SENT_CLAIM.search(text)):
            issues.append(
                Issue(
                    dimension="hallucination",
                    rating=1,
                    turn=item.turn_id,
                    evidence=f"claims it {m.group(1)} something; no tool can send",
                )
            )
    return issues
