"""Offline rule of ``faithfulness``: grounding checks on tool inputs and agent statements."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from tasks.judges.base import JudgeTask
from tasks.judges.inputs import ConversationInput, TraceItem
from tasks.judges.offline import OfflineAnswer, offline_rule
from tasks.judges.offline.dates import iso_dates, month_days
from tasks.judges.offline.disambiguation import disambiguation_findings
from tasks.judges.offline.entities import (
    canonical,
    find_entities,
    proper_nouns,
    spoken_norm,
    time_variants,
)
from tasks.judges.offline.grounding import (
    Sources,
    flatten,
    is_placeholder,
    numbers_in,
    tool_failed,
)
from tasks.judges.offline.identifiers import code_grounded, email_grounded, mapped_code
from tasks.judges.offline.params import FaithfulnessParams
from tasks.judges.offline.policy import (
    DIMENSIONS,
    capability_claims,
    is_read_only,
    policy_claims,
    unconfirmed_writes,
)
from tasks.judges.offline.speech_context import IDENTIFIERS, context_identifiers, slip_of
from tasks.judges.offline.tuning import Finding
from tasks.spoken.words import MONTHS

SCOPE = """Rule-based faithfulness check; what each finding costs its dimension is fitted to
human labels (FaithfulnessParams; the spec fixes 2 for read-only lookups, 1 for writes).
Finds: tool arguments that are placeholders or identifiers/dates/amounts found in no
earlier caller turn, tool result or policy text; amounts, codes, flight numbers, gates,
dates and times the agent states that no caller turn, tool result or policy figure
supports. Simple arithmetic is allowed: amounts may be sums or differences of up to three
known money figures or a figure times a count (per passenger, per night); dates may be a
known date shifted by a period the policy, a tool or the caller names (months also by the
difference of two such periods); short all-letter words (ID, HR) are not identifiers,
identifiers glued to a label word or read one after another are checked piece by piece,
and values given as an example are not claims; for speech-to-speech agents (whose turns
are transcripts of their audio) an identifier one symbol off a known one of five or more
symbols is an articulation slip, left to agent speech fidelity. Also finds 'on time / no
delay' claims contradicted by a tool result or that no tool reported; irreversible or
charging writes executed without the caller's agreement (a caller picking the offered value
agrees to a free write; agreement given before an identity check still holds) or charging
money never mentioned before; policy-style claims whose content words are absent from the
policy and tool results; claimed emails/texts without a tool to send them; airline brands
not in the role, policy or tool results; a failed lookup retried with other values instead
of asking the caller, or a not-found lookup of the caller's value not followed by asking
to spell or check it; tool calls on a turn where the caller gave two conflicting values.
It cannot judge meaning: wrong enum choices, omitted caveats, misapplied policy conditions,
paraphrased misstatements or whether a caller's request was ambiguous."""

_DATE_WHY = "date from no source"
_TIME_WHY = "time from no source"
# Values given as an illustration ("a flight number, like 'SkyWay one twenty three'") are
# not claims about the caller's booking.
_EXAMPLE = re.compile(
    r"(?:,\s*like|\blike\s+(?=[\"\u201c'])|\bfor (?:example|instance)|\bsuch as|\be\.g\.)"
    r"[,:]?\s*[\"\u201c']?[^.;?!\"\u201d]*[\"\u201d']?",
    re.IGNORECASE,
)
_DATETIME = re.compile(r"(\d{4}-\d{2}-\d{2})[ T](\d{1,2}:\d{2})(?::00)?")
_STATED_TYPES = {
    "amount",
    "code",
    "flight_number",
    "date",
    "month_year",
    "time",
    "seat",
    "gate",
    "email",
}
_BRAND = re.compile(r"\b([A-Z][a-z]+(?:\s[A-Z][a-z]+)?)\s+(?:Airlines?|Air)\b")
_NOT_BRANDS = {"flight", "seat", "gate", "terminal", "row", "option", "turn", "and", "the"}
_NO_DELAY = re.compile(r"\b(no delays?|not delayed|on time|on schedule)\b", re.IGNORECASE)
_STATED_KIND = {
    "amount": "unsourced_amount",
    "flight_number": "unsourced_flight",
    "date": "unsourced_date_time",
    "time": "unsourced_date_time",
    "month_year": "unsourced_date_time",
}


class _Ctx(BaseModel):
    model_config = {"arbitrary_types_allowed": True}
    inp: ConversationInput
    sources: Sources
    # s2s only: the context's identifiers, whose one-symbol slips in the agent's transcribed
    # speech are articulation (agent speech fidelity), not misrepresentation (spec 4.3 (c)).
    identifiers: dict[str, str] = {}
    # A successful tool result reported a flight's status or delay (an error's top-level
    # "status": "error" reports nothing about a flight).
    status_reported: bool = False


def _tool_param_issues(call: TraceItem, response: Any, ctx: _Ctx) -> list[Finding]:
    """Ungrounded arguments: 2 on a read-only lookup, 1 on a write or a transfer."""
    name_ = call.tool_name or ""
    read_only = is_read_only(name_, ctx.inp.tools)
    enums = _param_enums(name_, ctx.inp.tools)
    issues = []
    for name, value in call.params.items():
        if isinstance(value, bool) or value is None or isinstance(value, dict | list):
            continue
        if str(value) in enums.get(name, ()):
            continue
        why = _ungrounded_param(name, value, str(value), ctx.sources)
        if why:
            # A wrong value in a lookup is low impact (spec: read-only => 2); in a write or a
            # transfer it changes what happens to the caller.
            issues.append(
                Finding(
                    kind="ungrounded_read_arg" if read_only else "ungrounded_write_arg",
                    dimension="fabricating_tool_parameters",
                    turn=call.turn_id,
                    evidence=f"{name_}({name}={value!r}): {why}",
                )
            )
    return issues


def _param_enums(tool_name: str, tools: list[dict[str, Any]]) -> dict[str, set[str]]:
    for tool in tools:
        if tool.get("id") == tool_name or tool.get("name") == tool_name:
            params = (tool.get("required_parameters") or []) + (
                tool.get("optional_parameters") or []
            )
            return {str(p.get("name")): {str(e) for e in p.get("enum") or []} for p in params}
    return {}


def _ungrounded_param(name: str, value: Any, text: str, src: Sources) -> str | None:
    if is_placeholder(text):
        # "ABC123" is a placeholder unless the caller or a tool actually gave it.
        return None if text.strip() and src.has_text(text) else "placeholder value"
    if isinstance(value, int | float):
        return None if value <= 10 or src.has_number(float(value)) else "number from no source"
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        # Search dates may be a day off what was said; personal dates may not.
        personal = bool(re.search(r"birth|dob|expir|issue", name.lower()))
        return None if src.date_grounded(text, slack=not personal) else _DATE_WHY
    if m := _DATETIME.fullmatch(text):
        # A date-time argument is two values, each grounded on its own ("April 27" from
        # the caller, "10:00" from the availability the tool listed).
        if not src.date_grounded(m.group(1)):
            return _DATE_WHY
        clock = canonical(m.group(2))
        return None if any(src.has_tokens(v) for v in time_variants(clock)) else _TIME_WHY
    if re.fullmatch(r"[a-z_]+", text) or len(text) > 60:
        return None  # enum values and free text: meaning cannot be checked by rule
    if re.search(r"\d", text) or re.fullmatch(r"[A-Z]{5,}", text):
        grounded = src.has_text(text) or mapped_code(re.sub(r"\W", "", text), name, src)
        return None if grounded else "identifier not given by the caller or a tool"
    if re.fullmatch(r"[A-Z][a-zA-Z'\- ]+", text) and "name" in name:
        return None if src.has_text(text) else "name not given by the caller or a tool"
    return None


def _statement_issues(item: TraceItem, ctx: _Ctx, tools_seen: bool) -> list[Finding]:
    issues: list[Finding] = []
    src = ctx.sources
    dim = "misrepresenting_tool_result" if tools_seen else "hallucination"
    years = _years_by_month_day(item.text)
    for entity in find_entities(_EXAMPLE.sub(" ", item.text)):
        if entity.type not in _STATED_TYPES or _is_abbreviation(entity.type, entity.value):
            continue
        if entity.type in IDENTIFIERS and slip_of(entity.value, ctx.identifiers):
            continue
        grounded = _stated_grounded(entity.type, entity.value, entity.canonical, src, item.text)
        if not grounded and entity.type == "date":
            grounded = _date_grounded(entity.canonical, years, src)
        if not grounded:
            issues.append(
                Finding(
                    kind=_STATED_KIND.get(entity.type, "unsourced_identifier"),
                    dimension=dim,
                    turn=item.turn_id,
                    evidence=f"{entity.type} {entity.value!r} matches no tool "
                    "result, caller statement or policy figure",
                )
            )
    return issues + _delay_issues(item, src, ctx.status_reported)


def _is_abbreviation(kind: str, value: str) -> bool:
    """A short all-letter token ("ID", "HR", "I.D.", "PTO") is a word, not an identifier:
    identifiers the agent reads out carry digits or are long spelled runs."""
    letters = re.sub(r"[^A-Za-z0-9]", "", value)
    return kind == "code" and letters.isalpha() and len(letters) < 5


def _delay_issues(item: TraceItem, src: Sources, reported: bool) -> list[Finding]:
    if not _NO_DELAY.search(item.text):
        return []
    if _delay_in_tools(src):
        why, kind = "says there is no delay while a tool result shows one", "delay_contradicted"
    elif not reported:
        why, kind = "states the flight status although no tool reported it", "status_unsourced"
    else:
        return []
    dimension = "misrepresenting_tool_result" if kind == "delay_contradicted" else "hallucination"
    return [Finding(kind=kind, dimension=dimension, turn=item.turn_id, evidence=why)]


def _years_by_month_day(text: str) -> dict[tuple[int, int], int]:
    """Year of each full date in the statement ("June 30, 2028"), keyed by month and day:
    clause-wise extraction reads the date without its year."""
    return {(d.month, d.day): d.year for d in iso_dates(spoken_norm(text))}


def _date_grounded(canon: str, years: dict[tuple[int, int], int], src: Sources) -> bool:
    found = month_days(canon)
    if not found:
        return False
    month, day = next(iter(found))
    return src.stated_date_grounded(month, day, years.get((month, day)))


def _stated_grounded(kind: str, value: str, canon: str, src: Sources, context: str = "") -> bool:
    if kind == "amount":
        return all(src.has_amount(n) for n in numbers_in(canon))
    if kind == "flight_number":
        digits = re.sub(r"\D", "", canon)
        pattern = rf"\b[a-z]{{2}}0*{digits}\b" if digits else r"$^"
        found = re.search(pattern, src.tool_canonical + " " + src.user_canonical)
        return bool(found) or src.has_text(value, include_policy=False)
    if kind == "time":
        return any(src.has_tokens(v) for v in time_variants(canon))
    if kind == "date":
        return src.has_tokens(value) or src.has_text(value)
    if kind == "month_year":
        month, year = canon.split()
        return src.month_grounded(MONTHS.index(month) + 1, int(year))
    if kind == "code":
        return code_grounded(value, src, context)
    if kind == "email":
        return email_grounded(value, src)
    return src.has_text(value)


def _reports_status(response: Any) -> bool:
    if not isinstance(response, dict) or tool_failed(response):
        return False
    keys = [str(k) for k in response if k != "status"] + _nested_keys(response)
    return any("delay" in k or "status" in k for k in keys)


def _nested_keys(value: Any, top: bool = True) -> list[str]:
    if isinstance(value, dict):
        inner = [k for v in value.values() for k in _nested_keys(v, False)]
        return ([] if top else [str(k) for k in value]) + inner
    if isinstance(value, list):
        return [k for v in value for k in _nested_keys(v, False)]
    return []


def _delay_in_tools(src: Sources) -> bool:
    return bool(re.search(r"delay(?:ed|_minutes)? [1-9]\d*|status delayed", src.tool_canonical))


def _brand_issues(item: TraceItem, known: str) -> list[Finding]:
    """Company names the agent uses (before 'Airlines', or before a flight number that a tool
    result lists under another prefix) that no source mentions."""
    brands = {m.group(1) for m in _BRAND.finditer(item.text)}
    nouns = proper_nouns(item.text)
    norm = canonical(item.text) if nouns else ""
    for noun in nouns:
        for m in re.finditer(
            rf"\b{re.escape(canonical(noun))} (\d{{1,4}})(?: (\d{{1,2}}))?\b(?!:)", norm
        ):
            digits = m.group(1) + (m.group(2) or "")
            if re.search(rf"\b[a-z]{{2}}0*{digits}\b", known):
                brands.add(noun)
    issues = []
    for brand in sorted(brands):
        words = canonical(brand).split()
        # "Dell Latitude" is known when a tool lists manufacturer "Dell", model "Latitude".
        if brand.lower() in _NOT_BRANDS or all(w in known for w in words):
            continue
        issues.append(
            Finding(
                kind="unknown_brand",
                dimension="hallucination",
                turn=item.turn_id,
                evidence=f"names the company {brand!r}, which no source mentions",
            )
        )
    return issues


def collect_issues(inp: ConversationInput) -> list[Finding]:
    """Every finding, before any parameter decides what counts (``decide_faithfulness``)."""
    schema = " ".join(flatten(inp.tools))
    ctx = _Ctx(inp=inp, sources=Sources(inp.instructions, inp.current_date_time, schema))
    if inp.pipeline == "s2s":
        ctx.identifiers = context_identifiers(inp.trace)
    known = canonical(" ".join([inp.role, inp.instructions, *flatten(inp.tools)]))
    issues: list[Finding] = []
    tools_seen = False
    for i, item in enumerate(inp.trace):
        if item.kind == "user":
            ctx.sources.add_user(item.text)
        elif item.kind == "tool_call":
            response = next(
                (r.response for r in inp.trace[i + 1 :] if r.kind == "tool_response"), None
            )
            issues += _tool_param_issues(item, response, ctx)
        elif item.kind == "tool_response":
            ctx.sources.add_tool_response(item.response)
            ctx.status_reported |= _reports_status(item.response)
            tools_seen = True
        else:
            issues += _statement_issues(item, ctx, tools_seen)
            issues += _brand_issues(item, known + " " + ctx.sources.tool_canonical)
    issues += unconfirmed_writes(inp.trace, inp.tools)
    issues += policy_claims(inp, ctx.sources)
    issues += capability_claims(inp)
    issues += disambiguation_findings(inp.trace, inp.tools)
    return issues


def counts(finding: Finding, p: FaithfulnessParams) -> bool:
    """The finding is rated (not 3); a policy claim also reaches both fitted thresholds."""
    if getattr(p, finding.kind) == 3:
        return False
    if finding.kind != "policy_claim":
        return True
    m = finding.measures
    return m["unsupported"] >= p.claim_unsupported and m["share"] >= p.claim_share


def decide_faithfulness(issues: list[Finding], p: FaithfulnessParams) -> dict[str, Any]:
    """The rubric answer: each dimension at its worst counted finding, overall the minimum."""
    dims: dict[str, dict[str, Any]] = {}
    for dim in DIMENSIONS:
        mine = [i for i in issues if i.dimension == dim and counts(i, p)]
        rating = min((getattr(p, i.kind) for i in mine), default=3)
        evidence = "; ".join(f"turn {i.turn}: {i.evidence}" for i in mine[:6])
        dims[dim] = {"evidence": evidence, "flagged": bool(mine), "rating": rating}
    return {"dimensions": dims, "rating": min(d["rating"] for d in dims.values())}


@offline_rule("faithfulness", SCOPE)
def faithfulness_rule(task: JudgeTask, params: Mapping[str, Any]) -> OfflineAnswer:
    inp = task.inputs
    if not isinstance(inp, ConversationInput):
        return OfflineAnswer(error=f"expected ConversationInput, got {type(inp).__name__}")
    p = FaithfulnessParams.resolve("faithfulness", params)
    return OfflineAnswer(output=decide_faithfulness(collect_issues(inp), p))
