"""Policy-side rules shared by the offline faithfulness judge: write tools, confirmations,
policy claims and claimed capabilities."""

from __future__ import annotations

import re
from typing import Any

from tasks.judges.inputs import ConversationInput, TraceItem
from tasks.judges.offline.entities import canonical, compact, find_entities
from tasks.judges.offline.grounding import Sources, numbers_in, tool_failed
from tasks.judges.offline.tuning import Finding

DIMENSIONS = (
    "fabricating_tool_parameters",
    "misrepresenting_tool_result",
    "violating_policies",
    "failing_to_disambiguate",
    "hallucination",
)
_READ_PREFIXES = ("get_", "search_", "check_", "lookup_", "list_", "find_", "verify_", "query_")
# Negated agreement ("not sure", "that isn't correct") is no agreement.
_AFFIRM = re.compile(
    r"(?<!not )(?<!n't )\b(yes|yeah|yep|sure|ok|okay|please do|go ahead|do it|do that|"
    r"book it|proceed|confirm(?:ed)?|"
    r"that works|sounds good|let'?s do|i'?ll take|take the|switch me|rebook me|move me|put me|"
    r"cancel it|process|correct|that'?s right|perfect|great|fine|absolutely|i approve|approved?|"
    r"authori[sz]e|please (?:cancel|rebook|switch|book|issue|add|move|change|submit|go|place|"
    r"put|assign|schedule|reserve|register|open|create|send|update|file|request))\b",
    re.IGNORECASE,
)
# Doubt or refusal: naming an option while hedging is not choosing it.
_HEDGE = re.compile(r"\b(not|no|don'?t|isn'?t|hmm+|maybe|wait|unless|instead)\b", re.I)
# Money the caller pays (benefits the caller receives, e.g. vouchers, are not charges).
_CHARGE_KEYS = re.compile(r"fee|fare_diff|difference|charge|collected|price|cost|penalty|total_due")
_TOTAL_KEYS = re.compile(r"collected|total_due|total_charged|amount_charged")
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
    while being were does done each every need make sure like want able back call sorry
    please give tell thank thanks glad happy afraid unfortunately understand"""
_STOP = frozenset(_STOP_WORDS.split())
_ASKS = re.compile(
    r"\?$|^(?:now |so |and )?please\b|\b(?:give|tell|read|spell|send) (?:me|us)\b", re.IGNORECASE
)
_SENT_CLAIM = re.compile(
    r"\b(?:I(?:'ve| have)|we(?:'ve| have)|I just)\s+(?:also\s+)?(sent|emailed|e-mailed|texted|mailed)\b",
    re.IGNORECASE,
)
_SEND_TOOL = re.compile(r"send|email|mail|notify|sms|text|message")
_SELF_CORRECTION = re.compile(r"\b(actually|wait|i mean|or maybe|whichever|make that)\b", re.I)


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


def charges(call: TraceItem, response: Any) -> dict[str, float]:
    """Non-zero charges of a write (field name -> amount), from its arguments and response.
    A collected total, when the response reports one, is what was charged: a fare
    difference that a waiver brought to a total of zero charged nothing."""
    found: dict[str, float] = {}
    for container in (call.params, response):
        if not isinstance(container, dict):
            continue
        for key, value in _walk(container):
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if number and _CHARGE_KEYS.search(key.lower()):
                found[key.lower()] = round(abs(float(value)), 2)
    totals = {k: v for k, v in found.items() if _TOTAL_KEYS.search(k)}
    chosen = totals or found
    return {k: v for k, v in chosen.items() if v > 0.004}


def charges_caller(call: TraceItem, response: Any) -> bool:
    """A non-zero charge field in the call or its response."""
    return bool(charges(call, response))


def _charge_disclosed(trace: list[TraceItem], index: int, amounts: dict[str, float]) -> bool:
    """Before the write the agent named one of the charged amounts, or the charge itself
    ("minus a cancellation fee"): the caller knew money was involved."""
    text = " ".join(t.text for t in trace[:index] if t.kind == "assistant")
    said = {round(n, 2) for n in numbers_in(canonical(text))}
    nouns = {k.split("_")[-1] for k in amounts} | {"fee", "charge", "cost", "difference"}
    return bool(set(amounts.values()) & said) or any(
        re.search(rf"\b{re.escape(n)}s?\b", text, re.I) for n in nouns
    )


def _walk(value: Any, key: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _walk(v, str(k))]
    if isinstance(value, list):
        return [pair for v in value for pair in _walk(v, key)]
    return [(key, value)]


def _write_problem(
    trace: list[TraceItem], i: int, said: list[str], tools: list[dict[str, Any]], charged: bool
) -> tuple[str, str] | None:
    """(finding kind, why) when the write at ``trace[i]`` lacks the caller's informed
    agreement. ``said`` holds the caller's words of this turn and of the turn before."""
    before = trace[:i]
    last_speech = next((t for t in reversed(before) if t.kind in ("user", "assistant")), None)
    if last_speech is not None and last_speech.kind == "assistant" and "?" in last_speech.text:
        return (
            "write_before_answer",
            "right after asking the caller, without waiting for the answer",
        )
    verified = False
    for j in range(i - 1, -1, -1):
        item = trace[j]
        if item.turn_id != trace[i].turn_id or item.kind in ("user", "assistant"):
            break
        if item.kind != "tool_call" or is_write_tool(item.tool_name or "", tools):
            continue
        if _verification(item, _response_of(trace, j), tools):
            verified = True
            continue
        why = f"in the same breath as the {item.tool_name} lookup, before telling the caller"
        return "write_same_breath", why
    # Agreement given in the turn before still holds when this turn only added what the
    # agent asked for next: a one-time code for an identity check, or one more detail that
    # the write then uses ("Please submit it." / "Justification?" / "new_setup.").
    carried = verified or _supplies_detail(said[0], trace[i])
    agreement = " ".join(said) if carried else said[0]
    if not _AFFIRM.search(agreement) and (charged or not caller_chose(said[0], trace[i])):
        return "write_without_agreement", "without the caller agreeing in this turn"
    if _COST_QUESTION.search(said[0]):
        return "write_cost_open", "with the caller's cost question unanswered"
    return None


def _supplies_detail(said: str, call: TraceItem) -> bool:
    """The caller's whole reply is (part of) one argument of the write."""
    reply = compact(said)
    args = [compact(str(v)) for v in call.params.values() if isinstance(v, str | int)]
    return bool(reply) and any(reply == a or (len(reply) >= 3 and reply in a) for a in args)


def _response_of(trace: list[TraceItem], index: int) -> Any:
    return next((r.response for r in trace[index + 1 :] if r.kind == "tool_response"), None)


def _verification(call: TraceItem, response: Any, tools: list[dict[str, Any]]) -> bool:
    """An identity check that told the agent nothing to pass on (no nested data, unlike a
    reservation lookup that doubles as authentication)."""
    if tool_type(call.tool_name or "", tools) != "auth" or not isinstance(response, dict):
        return False
    return not any(isinstance(v, dict | list) for v in response.values())


def caller_chose(said: str, call: TraceItem) -> bool:
    """The caller asked for the very value the write uses ("The window desk, D five two zero,
    please" before ``desk_code=BLD7-FL5-D520``): picking an option the agent offered is
    agreeing to it. Not for charges: money needs an explicit yes to a stated amount."""
    if not said or "?" in said or _HEDGE.search(said):
        return False
    args = " ".join(compact(str(v)) for v in call.params.values() if isinstance(v, str | int))
    return any(
        len(key := compact(e.value)) >= 3 and any(c.isdigit() for c in key) and key in args
        for e in find_entities(said)
    )


def unconfirmed_writes(trace: list[TraceItem], tools: list[dict[str, Any]]) -> list[Finding]:
    """Irreversible or charging write tools run without the caller's informed agreement:
    right after a lookup in the same turn (an identity check that returned no data is not
    one: agreement given before it still holds), right after a question the caller had not
    answered, with no agreement in the caller's words, with the caller's cost question
    pending, or charging money the agent never mentioned before. A caller who picks the
    offered value the write uses agrees to a write that charges nothing. Writes that only
    grant benefits or carry ancillaries over are left alone."""
    user_text: dict[int, str] = {}
    for item in trace:
        if item.kind == "user":
            user_text[item.turn_id] = user_text.get(item.turn_id, "") + " " + item.text
    issues = []
    for i, item in enumerate(trace):
        name = item.tool_name or ""
        if item.kind != "tool_call" or not is_write_tool(name, tools):
            continue
        response = _response_of(trace, i)
        if tool_failed(response):
            continue  # nothing happened
        amounts = charges(item, response)
        charged = bool(amounts)
        if not (charged or _IRREVERSIBLE.search(name)):
            continue
        said = [user_text.get(item.turn_id - k, "").strip() for k in (0, 1)]
        problem = _write_problem(trace, i, said, tools, charged)
        if not problem and charged and not _charge_disclosed(trace, i, amounts):
            problem = "write_charge_undisclosed", "without first telling the caller it costs money"
        if problem:
            issues.append(
                Finding(
                    kind=problem[0],
                    dimension="violating_policies",
                    turn=item.turn_id,
                    evidence=f"{name} executed {problem[1]}"
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


def policy_claims(inp: ConversationInput, sources: Sources) -> list[Finding]:
    """Policy-style sentences with content words absent from every source: a sweeping claim
    ('all members', 'always', 'unlimited') with one, else measured by how many words and
    what share of the sentence's (the fitted thresholds decide)."""
    known = set(_content_words(" ".join([inp.role, inp.instructions])))
    known |= set(re.findall(r"[a-z]{4,}", sources.tool_canonical + " " + sources.user_canonical))
    issues = []
    for item in inp.trace:
        if item.kind != "assistant":
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", item.text.replace("\u2019", "'")):
            if not _CLAIM.search(sentence) or _ASKS.search(sentence.strip()):
                continue  # a question or a request asserts nothing
            words = _content_words(sentence)
            missing = [w for w in words if w not in known and w.rstrip("s") not in known]
            if not missing:
                continue
            sweeping = bool(_UNIVERSAL.search(sentence))
            issues.append(
                Finding(
                    kind="sweeping_claim" if sweeping else "policy_claim",
                    dimension="hallucination",
                    turn=item.turn_id,
                    evidence=f"policy claim not in the policy: {sentence.strip()!r}"
                    f" (unsupported words: {', '.join(missing[:5])})",
                    measures={
                        "unsupported": float(len(missing)),
                        "share": len(missing) / max(1, len(words)),
                    },
                )
            )
    return issues


def capability_claims(inp: ConversationInput) -> list[Finding]:
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
                Finding(
                    kind="capability_claim",
                    dimension="hallucination",
                    turn=item.turn_id,
                    evidence=f"claims it {m.group(1)} something; no tool can send",
                )
            )
    return issues


def self_corrected(said: str) -> bool:
    """The caller corrected itself between two values of the same kind ("June 15, actually
    make that June 16"): contradictory input to clarify before acting on it."""
    if not _SELF_CORRECTION.search(said):
        return False
    kinds = [e.type for e in find_entities(said)]
    return any(kinds.count(k) >= 2 for k in ("date", "code", "amount", "time"))
