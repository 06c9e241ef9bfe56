"""Data invariants of resolved scenarios (EVA spec 1.8), for ``evaflow scenarios validate``."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, Field

from scenarios.chaining import replay_trace
from scenarios.completion import db_diff_lines, diff_dbs
from scenarios.models import Scenario
from scenarios.resolve import current_date_of

# Any unresolved token: <FIRST_NAME>, <COMPANION_FIRST_NAME_ROMANIZED>, <LOC:East Campus>, ...
PLACEHOLDER = re.compile(r"<[A-Z][A-Z_]*>|<LOC:[^>]*>")

CheckName = Literal["duplicate_id", "current_date", "placeholder", "unknown_tool", "trace_replay"]


class Issue(BaseModel):
    """One violated invariant."""

    scenario: str = Field(description="Scenario key 'domain/id' ('domain/*' = whole domain)")
    check: CheckName = Field(description="Which invariant failed")
    severity: Literal["error", "warning"] = "error"
    field: str | None = Field(default=None, description="Offending field, if one")
    message: str


def check_duplicates(scenarios: list[Scenario]) -> list[Issue]:
    counts = Counter(s.key for s in scenarios)
    return [
        Issue(scenario=key, check="duplicate_id", field="id", message=f"loaded {n} times")
        for key, n in counts.items()
        if n > 1
    ]


def check_current_date(scenario: Scenario) -> list[Issue]:
    """Both DBs carry _current_date equal to the date part of current_date_time."""
    want = current_date_of(scenario.current_date_time)
    issues = []
    for field, db in (("initial_db", scenario.initial_db), ("expected_db", scenario.expected_db)):
        got = db.get("_current_date")
        if got != want:
            issues.append(
                Issue(
                    scenario=scenario.key,
                    check="current_date",
                    field=f"{field}._current_date",
                    message=f"{got!r} differs from current_date_time date {want!r}",
                )
            )
    return issues


def find_placeholders(value: Any) -> list[str]:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return sorted(set(PLACEHOLDER.findall(text)))


def check_placeholders(scenario: Scenario) -> list[Issue]:
    """No token survives resolution; in a DB it breaks hashing, elsewhere it is spoken."""
    parts: list[tuple[str, Any, Literal["error", "warning"]]] = [
        ("initial_db", scenario.initial_db, "error"),
        ("expected_db", scenario.expected_db, "error"),
        ("user_goal", scenario.user_goal, "warning"),
        ("user_config", scenario.user_config, "warning"),
        ("expected_trace", scenario.expected_trace, "warning"),
    ]
    issues = []
    for field, value, severity in parts:
        tokens = find_placeholders(value)
        if tokens:
            issues.append(
                Issue(
                    scenario=scenario.key,
                    check="placeholder",
                    severity=severity,
                    field=field,
                    message=f"unresolved placeholder(s) {', '.join(tokens)}",
                )
            )
    return issues


def check_trace_tools(scenario: Scenario) -> list[Issue]:
    known = set(scenario.agent.tool_names)
    used = {
        e.get("tool_name") for e in scenario.expected_trace if e.get("event_type") == "tool_call"
    }
    return [
        Issue(
            scenario=scenario.key,
            check="unknown_tool",
            field="expected_trace",
            message=f"trace calls {tool!r}, which the agent config does not declare",
        )
        for tool in sorted(str(t) for t in used - known)
    ]


def check_trace_replay(scenario: Scenario) -> tuple[list[Issue], str | None]:
    """Issues of replaying the golden trace, and the engine error if it could not run."""
    replay = replay_trace(scenario)
    if replay.error is not None:
        return [], replay.error
    if replay.hash_match:
        return [], None
    lines = db_diff_lines(diff_dbs(scenario.expected_db, replay.final_db))
    first = lines[0] if lines else "no structural difference"
    issue = Issue(
        scenario=scenario.key,
        check="trace_replay",
        field="expected_trace",
        message=f"replayed trace does not reach the expected DB ({len(lines)} difference(s); "
        f"first: {first})",
    )
    return [issue], None


def validate_scenarios(scenarios: list[Scenario], replay: bool = True) -> list[Issue]:
    """Every data-invariant violation; an empty list means the scenarios are sound.

    ``replay`` runs each golden trace through the domain engine (with ID chaining); a
    domain whose engine is unavailable yields one issue for the whole domain.
    """
    issues = check_duplicates(scenarios)
    engine_errors: dict[str, str] = {}
    for scenario in scenarios:
        issues += check_current_date(scenario)
        issues += check_placeholders(scenario)
        issues += check_trace_tools(scenario)
        if replay and scenario.domain not in engine_errors:
            found, error = check_trace_replay(scenario)
            issues += found
            if error is not None:
                engine_errors[scenario.domain] = error
    issues += [
        Issue(scenario=f"{domain}/*", check="trace_replay", message=error)
        for domain, error in engine_errors.items()
    ]
    return issues
