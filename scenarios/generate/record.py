"""Turn a scripted conversation into an EVA-format record plus its initial scenario DB.

Flows work with real names; here the caller's identity is turned back into placeholder
tokens (spec 1.5), the way EVA stores records, and the result is checked to resolve to
exactly what the engine saw, so the stored record replays to its own expected hash.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from scenarios.dbhash import normalize_db
from scenarios.generate.conversation import Conversation, GenerationError
from scenarios.generate.people import Person
from scenarios.resolve import resolve_localized, resolve_scenario_db, resolve_value

PathKind = Literal["success", "auth_failure", "no_availability", "policy_refusal"]

DEFAULT_ESCALATION = (
    "Do not ask for a live agent or a supervisor. If the agent offers to transfer you, "
    "decline politely. If the agent cannot help after a fair attempt, thank them, say "
    "goodbye and end the call."
)
COMMON_EDGE_CASES = (
    "If the agent asks you to repeat or spell something, repeat it exactly as given in "
    "information_required, letter by letter for codes.",
    "If the agent asks whether there is anything else, say no, thank them and say goodbye.",
    "Do not invent new requests, problems or details beyond this goal.",
)


class Goal(BaseModel):
    """The caller's goal and decision tree (spec 1.3), written with real names."""

    model_config = ConfigDict(frozen=True)
    summary: str = Field(description="high_level_user_goal, second person")
    must_have: list[str] = Field(description="Non-negotiable requirements")
    nice_to_have: list[str] = Field(default_factory=list, description="Optional wishes")
    negotiation: list[str] = Field(description="Ordered negotiation steps")
    resolution: str = Field(description="When the goal is met and the call ends")
    failure: str = Field(description="When to give up")
    escalation: str = Field(default=DEFAULT_ESCALATION, description="Transfer policy")
    edge_cases: list[str] = Field(default_factory=list, description="Record-specific cases")
    information: dict[str, Any] = Field(description="information_required")

    def as_user_goal(self) -> dict[str, Any]:
        return {
            "high_level_user_goal": self.summary,
            "decision_tree": {
                "must_have_criteria": list(self.must_have),
                "nice_to_have_criteria": list(self.nice_to_have),
                "negotiation_behavior": list(self.negotiation),
                "resolution_condition": self.resolution,
                "failure_condition": self.failure,
                "escalation_behavior": self.escalation,
                "edge_cases": [*self.edge_cases, *COMMON_EDGE_CASES],
            },
            "information_required": copy.deepcopy(self.information),
        }


@dataclass
class Draft:
    """Everything one flow produces for one record, before placeholders go in."""

    record_id: str
    domain: str
    current_date_time: str
    caller: Person
    persona: str
    workflow: str
    path: PathKind
    goal: Goal
    opening: str
    context: dict[str, Any]
    convo: Conversation
    with_phone: bool = False
    expected_flow: str | None = None
    seed_data: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def identity_tables(person: Person, with_phone: bool) -> dict[str, Any]:
    native: dict[str, Any] = {"first_name": person.first, "last_name": person.last}
    if with_phone:
        native["phone"] = person.phone
    return {
        "culture_overrides": {"en": native},
        "romanized_culture_overrides": {
            "en": {"first_name": person.first, "last_name": person.last}
        },
    }


def _token_rules(person: Person, with_phone: bool) -> list[tuple[re.Pattern[str], str]]:
    # Romanized names resolve lower-cased (spec 1.5), so lower-case text maps back to them.
    pairs = [
        (person.first.lower(), "<FIRST_NAME_ROMANIZED>"),
        (person.last.lower(), "<LAST_NAME_ROMANIZED>"),
        (person.first, "<FIRST_NAME>"),
        (person.last, "<LAST_NAME>"),
    ]
    rules = [(re.compile(rf"(?<![A-Za-z]){re.escape(v)}(?![A-Za-z])"), t) for v, t in pairs]
    if with_phone:
        rules.append((re.compile(re.escape(person.phone)), "<PHONE>"))
    return rules


def tokenize(value: Any, rules: list[tuple[re.Pattern[str], str]]) -> Any:
    """Deep copy with the caller's identity values replaced by placeholder tokens."""
    if isinstance(value, str):
        for pattern, token in rules:
            value = pattern.sub(token, value)
        return value
    if isinstance(value, dict):
        return {k: tokenize(v, rules) for k, v in value.items()}
    if isinstance(value, list):
        return [tokenize(v, rules) for v in value]
    return value


def _same(a: Any, b: Any) -> bool:
    return normalize_db(a) == normalize_db(b)


def _round_trip(name: str, stored: Any, resolved: Any, seen: Any) -> None:
    if not _same(resolved, seen):
        raise GenerationError(f"{name} does not resolve back to what the engine saw")


def assemble(draft: Draft) -> tuple[dict[str, Any], dict[str, Any]]:
    """The dataset record and the raw initial scenario DB of ``draft``."""
    rules = _token_rules(draft.caller, draft.with_phone)
    tables = identity_tables(draft.caller, draft.with_phone)
    stub = {"id": draft.record_id, "current_date_time": draft.current_date_time, **tables}
    initial = draft.convo.engine.original_db
    raw_db = tokenize(initial, rules)
    _round_trip("initial DB", raw_db, resolve_scenario_db(raw_db, stub), initial)
    expected_db = tokenize(draft.convo.db, rules)
    resolved_expected = resolve_scenario_db(expected_db, stub, set_current_date=False)
    _round_trip("expected DB", expected_db, resolved_expected, draft.convo.db)
    trace = draft.convo.expected_trace()
    stored_trace = tokenize(trace, rules)
    _round_trip("trace", stored_trace, resolve_localized(stored_trace, stub), trace)
    user_goal = tokenize(draft.goal.as_user_goal(), rules)
    user_config = {
        "name": "<FIRST_NAME> <LAST_NAME>",
        "gender": draft.caller.gender,
        "user_persona_id": draft.caller.persona_id,
        "user_persona": draft.persona,
    }
    if resolve_value(user_config, stub)["name"] != draft.caller.full:
        raise GenerationError("user_config.name does not resolve to the caller's name")
    context = {**draft.context, "workflow": draft.workflow, "path": draft.path}
    record: dict[str, Any] = {
        "id": draft.record_id,
        "current_date_time": draft.current_date_time,
        "user_goal": user_goal,
        "user_config": user_config,
    }
    if draft.expected_flow is not None:
        record["expected_flow"] = tokenize(draft.expected_flow, rules)
    record["scenario_context"] = tokenize(context, rules)
    if draft.seed_data is not None:
        record["seed_data"] = tokenize(draft.seed_data, rules)
        record["subflow_in_depth"] = {}
    record["category"] = draft.workflow
    record["ground_truth"] = {"expected_scenario_db": expected_db, "expected_trace": stored_trace}
    record["starting_utterances"] = {"en": tokenize(draft.opening, rules)}
    record.update(tables)
    return record, raw_db
