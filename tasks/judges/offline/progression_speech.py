"""What the agent says, for ``conversation_progression``: information loss (asking again for
what it was given) and redundant statements (saying again what it said). Findings only;
``progression.decide_progression`` rates them."""

from __future__ import annotations

import re
from typing import Any

from tasks.judges.inputs import TraceItem
from tasks.judges.offline.entities import find_entities
from tasks.judges.offline.grounding import is_placeholder, tool_failed
from tasks.judges.offline.tuning import Finding

_ASK_ITEMS = {
    "confirmation": ("confirmation", "booking reference", "record locator", "reservation number"),
    "name": ("last name", "surname", "full name", "first name"),
    "email": ("email",),
    "phone": ("phone", "callback number", "mobile"),
    "date": ("date of birth", "travel date", "what date", "which date"),
    "id": ("employee id", "member id", "ticket number", "case number", "npi"),
}
_PARAM_ITEMS = {
    "confirmation": ("confirmation", "booking", "locator", "reservation"),
    "name": ("name",),
    "email": ("email",),
    "phone": ("phone",),
    "date": ("birth", "dob"),
    "id": ("employee", "member", "ticket", "case", "npi"),
}
# The caller asked to hear something again: repeating is answering.
_REPEAT_ASKED = re.compile(r"\b(repeat|again|say that|one more time|read (it )?back|recap)\b", re.I)
# The agent asks the caller to say again what they said (not offering to repeat itself).
_REMIND = re.compile(
    r"\b(remind me|(?<!me to )repeat (?:that|it|your|the)|say (?:that|it) again|"
    r"one more time|what you said)\b",
    re.IGNORECASE,
)
_ANNOUNCED = re.compile(
    r"\b(?:just to (?:repeat|recap|reiterate|restate)|to recap|"
    r"(?:i'?ll|let me) (?:repeat|reiterate|restate)|once more so|"
    r"(?:repeat|restate|reiterate) (?:that|it|this)\b[^.?!]*\b(?:again|once more))",
    re.IGNORECASE,
)
_TAG = re.compile(r"\[[a-z ]+\]", re.IGNORECASE)
_FIGURE_TYPES = ("amount", "time", "date", "flight_number")
MIN_SENTENCE_WORDS = 6  # shorter sentences ("Is that correct?") repeat by nature
MIN_SIMILARITY = 0.6  # the lowest threshold the fit may choose: weaker overlaps not measured


def _ok(response: Any) -> bool:
    return isinstance(response, dict) and not tool_failed(response)


def _items_of_call(call: TraceItem) -> set[str]:
    found = set()
    for param, value in call.params.items():
        if value in (None, "") or is_placeholder(value):
            continue
        for item, words in _PARAM_ITEMS.items():
            if any(w in param.lower() for w in words):
                found.add(item)
    return found


def _asked_items(text: str) -> set[str]:
    questions = " ".join(re.findall(r"[^.!?]*\?", text.lower()))
    return {name for name, words in _ASK_ITEMS.items() if any(w in questions for w in words)}


def _given_items(text: str, asked: set[str]) -> set[str]:
    """Items the caller gave: named with a value ("the last name is Howard"), or a value in
    reply to the agent's question for them."""
    if not find_entities(text):
        return set()
    named = {name for name, words in _ASK_ITEMS.items() if any(w in text.lower() for w in words)}
    return named | asked


def _info(kind: str, item: TraceItem, evidence: str) -> Finding:
    return Finding(kind=kind, dimension="information_loss", turn=item.turn_id, evidence=evidence)


def information_findings(trace: list[TraceItem]) -> list[Finding]:
    """Asking for an item a tool already used successfully, or that the caller already gave,
    and asking the caller to say again what they said. Re-asking after an obvious mishearing
    is fine (spec): nothing is asked "again" while a failed lookup is not yet recovered."""
    used: set[str] = set()
    given: set[str] = set()
    asked: set[str] = set()
    recovering = False  # a lookup failed and none has succeeded since
    found = []
    for i, item in enumerate(trace):
        if item.kind == "tool_call":
            response = next((r.response for r in trace[i + 1 :] if r.kind == "tool_response"), None)
            recovering = not _ok(response)
            if not recovering:
                used |= _items_of_call(item)
        elif item.kind == "user":
            given |= _given_items(_TAG.sub(" ", item.text), asked)
        elif item.kind == "assistant":
            asked = _asked_items(item.text)
            found += _reasked(item, asked & used, asked & given - used, recovering)
    return found


def _reasked(item: TraceItem, used: set[str], given: set[str], recovering: bool) -> list[Finding]:
    where = f"turn {item.turn_id}: asks again for the"
    found = [
        _info("reask_after_tool", item, f"{where} {name} a tool used") for name in sorted(used)
    ]
    if recovering:
        return found
    found += [
        _info("reask_said", item, f"{where} {name} the caller gave") for name in sorted(given)
    ]
    if _REMIND.search(" ".join(re.findall(r"[^.!?]*\?", item.text))):
        found.append(_info("asks_to_remind", item, f"{where} what the caller said"))
    return found


def _sentences(text: str) -> list[list[str]]:
    out = []
    for sentence in re.split(r"(?<=[.!?])\s+", _TAG.sub(" ", text)):
        words = re.findall(r"[a-z0-9']+", sentence.lower())
        if len(words) >= MIN_SENTENCE_WORDS:
            out.append(words)
    return out


def _similarity(a: list[str], b: list[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / max(1, len(sa | sb))


def _asked_turns(trace: list[TraceItem]) -> set[int]:
    """Turns where the caller asked to hear something again."""
    return {i.turn_id for i in trace if i.kind == "user" and _REPEAT_ASKED.search(i.text)}


def _final_turn(trace: list[TraceItem]) -> int:
    """A single closing recap is fine (spec): the last assistant turn."""
    return max((i.turn_id for i in trace if i.kind == "assistant"), default=-1)


def _redundant(kind: str, turn: int, evidence: str, **measures: float) -> Finding:
    return Finding(
        kind=kind,
        dimension="redundant_statements",
        turn=turn,
        evidence=evidence,
        measures=measures,
    )


def redundancy_findings(trace: list[TraceItem]) -> list[Finding]:
    """Sentences said again (in a later turn or the same one), announced repetitions and
    figures restated from earlier turns, unless the caller asked; repeated sentences and
    figures in the final turn are its recap, an announced repetition is not."""
    asked = _asked_turns(trace)
    exempt = asked | {_final_turn(trace)}
    seen: list[tuple[int, list[str]]] = []
    found = []
    for item in (i for i in trace if i.kind == "assistant"):
        for sentence in _sentences(item.text):
            for same in (False, True):
                pool = [s for t, s in seen if (t == item.turn_id) == same]
                best = max((_similarity(s, sentence) for s in pool), default=0.0)
                if best >= MIN_SIMILARITY and item.turn_id not in exempt:
                    kind = "repeated_in_turn" if same else "repeated_sentence"
                    why = f"turn {item.turn_id} repeats: {' '.join(sentence[:12])}..."
                    found.append(_redundant(kind, item.turn_id, why, similarity=best))
            seen.append((item.turn_id, sentence))
        if item.turn_id not in asked:
            for m in _ANNOUNCED.finditer(item.text):
                why = f"turn {item.turn_id}: {m.group(0)!r} without being asked"
                found.append(_redundant("announced_repeat", item.turn_id, why))
    return found + _figure_findings(trace, exempt)


def _figure_findings(trace: list[TraceItem], exempt: set[int]) -> list[Finding]:
    said: dict[int, set[str]] = {}
    for item in trace:
        if item.kind == "assistant":
            figures = {e.canonical for e in find_entities(item.text) if e.type in _FIGURE_TYPES}
            said[item.turn_id] = said.get(item.turn_id, set()) | figures
    found = []
    earlier: set[str] = set()
    for turn in sorted(said):
        again = said[turn] & earlier
        if len(again) >= 2 and turn not in exempt:
            why = f"turn {turn} restates {len(again)} figures: {', '.join(sorted(again)[:4])}"
            found.append(_redundant("restated_figures", turn, why, figures=float(len(again))))
        earlier |= said[turn]
    return found
