"""The committed built-in pack: it loads, validates, replays and covers what it promises."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

import scenarios
from scenarios.checks import validate_scenarios
from scenarios.dbhash import db_hash
from scenarios.engines import KNOWN_DOMAINS
from scenarios.generate.conversation import GREETING
from scenarios.loader import load_scenario_dir
from scenarios.models import Scenario
from scenarios.replay import replay_own_pack

PACK_DIR = Path(scenarios.__file__).resolve().parent / "pack"
FAILURE_PATHS = ("auth_failure", "no_availability", "policy_refusal")
MIN_PER_DOMAIN = 12
MIN_WORKFLOWS = 10
SPELLED_EMPLOYEE_ID = re.compile(
    r"\bE M P( (zero|one|two|three|four|five|six|seven|eight|nine)){6}\b"
)
SPOKEN_AMOUNT = re.compile(
    r"\b(hundred|thousand|million|twenty|thirty|forty|fifty)[a-z ]* dollars\b"
)
SPOKEN_DATE = re.compile(
    r"\b(January|February|March|April|May|June|July|August|September|October|November|December)"
    r" (first|second|third|[a-z]+(th|st|nd|rd))\b"
)


@pytest.fixture(scope="module")
def pack() -> list[Scenario]:
    return load_scenario_dir(PACK_DIR)


def events(scenario: Scenario, kind: str) -> list[dict[str, Any]]:
    return [e for e in scenario.expected_trace if e["event_type"] == kind]


def caller_text(scenario: Scenario) -> str:
    return " ".join(e["utterance"] for e in events(scenario, "user_utterance"))


def test_pack_has_every_domain_with_enough_records(pack: list[Scenario]) -> None:
    per_domain = Counter(s.domain for s in pack)
    assert set(per_domain) == set(KNOWN_DOMAINS)
    assert all(n >= MIN_PER_DOMAIN for n in per_domain.values()), per_domain
    assert all(s.source == str(PACK_DIR) for s in pack)


def test_validate_reports_no_issues(pack: list[Scenario]) -> None:
    assert validate_scenarios(pack) == []


def test_every_record_replays_to_its_expected_hash_with_identical_responses() -> None:
    report = replay_own_pack(PACK_DIR, strict_responses=True)
    assert set(report.domains) == set(KNOWN_DOMAINS)
    for domain, result in report.domains.items():
        assert result.error is None, domain
        assert result.failures == [], domain
        assert result.records >= MIN_PER_DOMAIN
        assert result.hash_match == result.records
        assert result.response_match == result.calls > result.records


def test_coverage_of_workflows_and_failure_paths(pack: list[Scenario]) -> None:
    workflows = {(s.domain, s.scenario_context["workflow"]) for s in pack}
    assert len(workflows) >= MIN_WORKFLOWS
    for domain in KNOWN_DOMAINS:
        paths = {s.scenario_context["path"] for s in pack if s.domain == domain}
        assert set(FAILURE_PATHS) | {"success"} <= paths | {"no_availability"}, domain
    all_paths = Counter(s.scenario_context["path"] for s in pack)
    assert all(all_paths[p] >= 2 for p in FAILURE_PATHS), all_paths


def test_failure_paths_leave_the_db_as_policy_says(pack: list[Scenario]) -> None:
    """A refused caller changes nothing; other paths change the DB."""
    for scenario in pack:
        unchanged = db_hash(scenario.initial_db) == db_hash(scenario.expected_db)
        writes = [
            e
            for e in events(scenario, "tool_response")
            if e["status"] == "success" and scenario.agent.tool(e["tool_name"]).tool_type == "write"  # type: ignore[union-attr]
        ]
        assert unchanged == (not writes), scenario.key


def test_auth_failures_fail_then_succeed_or_end_without_a_session(pack: list[Scenario]) -> None:
    for scenario in (s for s in pack if s.scenario_context["path"] == "auth_failure"):
        auth = [e for e in events(scenario, "tool_response")
                if scenario.agent.tool(e["tool_name"]).tool_type == "auth"]  # type: ignore[union-attr]  # fmt: skip
        assert auth[0]["response"]["status"] == "error", scenario.key
        refused = all(e["response"]["status"] == "error" for e in auth)
        assert refused == (not scenario.expected_db.get("session")), scenario.key


def test_conversations_have_phone_call_shape(pack: list[Scenario]) -> None:
    for scenario in pack:
        trace = scenario.expected_trace
        assert trace[0] == {"event_type": "agent_utterance", "utterance": GREETING}
        # The caller's last line says goodbye; only the agent may act and close after it.
        last_line = max(i for i, e in enumerate(trace) if e["event_type"] == "user_utterance")
        assert "goodbye" in trace[last_line]["utterance"].lower(), scenario.key
        after = [e["event_type"] for e in trace[last_line + 1 :]]
        assert after == [] or after[-1] == "agent_utterance", scenario.key
        # Nine: the I-9 caller answers five questions, then agrees to the submission.
        assert 4 <= len(events(scenario, "user_utterance")) <= 9, scenario.key
        assert trace[1]["utterance"] == scenario.user_goal["starting_utterance"]
        assert scenario.expected_end_reason == "goodbye"


def test_write_calls_follow_an_answer_to_the_agents_question(pack: list[Scenario]) -> None:
    """The first write of every agent turn comes right after the caller answered a question."""
    for scenario in pack:
        last_agent, last_user_answered, first_write = "", False, True
        for event in scenario.expected_trace:
            if event["event_type"] == "agent_utterance":
                last_agent = event["utterance"]
            elif event["event_type"] == "user_utterance":
                last_user_answered, first_write = last_agent.rstrip().endswith("?"), True
            elif event["event_type"] == "tool_call":
                spec = scenario.agent.tool(event["tool_name"])
                if spec is not None and spec.tool_type == "write" and first_write:
                    assert last_user_answered, (scenario.key, event["tool_name"])
                    first_write = False


def test_callers_speak_key_entities_the_way_people_do(pack: list[Scenario]) -> None:
    airline = [s for s in pack if s.domain == "airline"]
    for scenario in airline:
        code = scenario.user_goal["information_required"].get("Booking confirmation code")
        if code:
            spelled = " ".join(c if c.isalpha() else "_" for c in code)
            pattern = spelled.replace("_", r"[a-z]+")
            assert re.search(pattern, caller_text(scenario)), scenario.key
    for scenario in (s for s in pack if s.domain != "airline"):
        if "employee_id" in scenario.user_goal["information_required"]:
            assert SPELLED_EMPLOYEE_ID.search(caller_text(scenario)), scenario.key
    everything = " ".join(caller_text(s) for s in pack)
    assert SPOKEN_AMOUNT.search(everything)
    assert SPOKEN_DATE.search(everything)
    assert not re.search(r"\d", everything), "callers say digits as words"


def leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in leaves(v)]
    return [value]


def signature(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return re.sub(r"[^a-z0-9]", "", str(value).lower())


MONTH_NAMES = (
    "january february march april may june july august september october november december"
)


def said_in(value: Any, normalized: str) -> bool:
    """Whether a caller line (as the voice stack normalises it) carries ``value``."""
    tokens = [t for t in normalized.split() if t not in ("dash", "hyphen")]
    if isinstance(value, int | float):
        return any(re.fullmatch(r"\$?(\d+(\.\d+)?)", t) and float(t.lstrip("$")) == value
                   for t in tokens)  # fmt: skip
    text = str(value)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}( \d{2}:\d{2})?", text):
        day, _, clock = text.partition(" ")
        month = MONTH_NAMES.split()[int(day[5:7]) - 1]
        has_day = day in tokens or f"{month} {int(day[8:])}" in normalized
        return has_day and (not clock or clock in tokens)
    target = signature(value)
    return any(
        "".join(signature(t) for t in tokens[i:j]) == target
        for i in range(len(tokens))
        for j in range(i + 1, min(len(tokens), i + 8) + 1)
    )


def test_caller_supplied_values_are_said_before_they_are_used(pack: list[Scenario]) -> None:
    """Every call value the caller owns (from information_required) was spoken earlier."""
    spoken = pytest.importorskip("tasks.spoken")
    for scenario in pack:
        owned = {signature(v) for v in leaves(scenario.user_goal["information_required"])}
        lines: list[str] = []
        checked = 0
        for event in scenario.expected_trace:
            if event["event_type"] == "user_utterance":
                lines.append(spoken.normalize_spoken(event["utterance"]))
            elif event["event_type"] == "tool_call":
                for name, value in event["params"].items():
                    if isinstance(value, bool) or signature(value) not in owned:
                        continue
                    checked += 1
                    if any(said_in(value, line) for line in lines):
                        continue
                    # Unsaid: only a schema option, which the agent must ask for (next test).
                    assert _enum_of(scenario, event["tool_name"], name), (
                        scenario.key,
                        event["tool_name"],
                        value,
                    )
        assert checked > 0, scenario.key


def _enum_of(scenario: Scenario, tool: str, name: str) -> list[Any]:
    spec = scenario.agent.tool(tool)
    params = [] if spec is None else [*spec.required_parameters, *spec.optional_parameters]
    return next((p.enum or [] for p in params if p.name == name), [])


def unsaid_options(scenario: Scenario) -> dict[str, Any]:
    """Caller-owned schema options the trace's caller never said before their call (the
    caller described them in its own words): label the agent asks by -> option."""
    from tasks.spoken import normalize_spoken

    owned = {signature(v) for v in leaves(scenario.user_goal["information_required"])}
    lines: list[str] = []
    out: dict[str, Any] = {}
    for event in scenario.expected_trace:
        if event["event_type"] == "user_utterance":
            lines.append(normalize_spoken(event["utterance"]))
        elif event["event_type"] == "tool_call":
            for name, value in event["params"].items():
                owned_option = signature(value) in owned and _enum_of(
                    scenario, event["tool_name"], name
                )
                if owned_option and not any(said_in(value, line) for line in lines):
                    out[name.replace("_", " ")] = value
    return out


def test_text_mode_simulation_follows_every_script(pack: list[Scenario]) -> None:
    """Our scripted caller and reference agent complete every record exactly as written."""
    text_mode = pytest.importorskip("tasks.simulate.clocks.text_mode")
    config = pytest.importorskip("tasks.simulate.config")
    caller = pytest.importorskip("tasks.simulate.caller.caller")
    for scenario in pack:
        record = text_mode.simulate_text(scenario, config.SimulationConfig())
        asked = unsaid_options(scenario)
        said, answers = _split_answers(record, asked)
        # The agent asked for each option the trace's caller never said, and heard it.
        assert answers == {label: value.replace("_", " ") for label, value in asked.items()}, (
            scenario.key
        )
        script = [e["utterance"] for e in events(scenario, "user_utterance")]
        if scenario.expected_trace[-1]["event_type"] == "agent_utterance":
            # Its goodbye answered the agent's question: it hangs up after the agent closes.
            script.append(caller.CLOSING)
        assert said == script, scenario.key
        assert record.final_db_hash == db_hash(scenario.expected_db), scenario.key


def _split_answers(record: Any, asked: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The caller's scripted lines, and its answers to "tell me your <label>" questions."""
    said: list[str] = []
    answers: dict[str, str] = {}
    last_agent = ""
    for turn in record.turns:
        if turn.role != "user":
            last_agent = turn.intended_text
            continue
        label = next((la for la in asked if f"tell me your {la}?" in last_agent), None)
        if label is None:
            said.append(turn.intended_text)
        else:
            answers[label] = turn.intended_text.split(".")[0]
    return said, answers


def test_pack_holds_records_whose_options_the_agent_must_ask_for(pack: list[Scenario]) -> None:
    """The I-9 shape of EVA's records: options said in the caller's own words only."""
    assert any(unsaid_options(s) for s in pack)


def test_identities_are_placeholders_in_the_stored_files() -> None:
    for domain in KNOWN_DOMAINS:
        records = json.loads((PACK_DIR / f"{domain}_dataset.json").read_text("utf-8"))
        for record in records:
            names = record["culture_overrides"]["en"]
            raw_db = (PACK_DIR / f"{domain}_scenarios" / f"{record['id']}.json").read_text("utf-8")
            stored = json.dumps(record["ground_truth"]) + json.dumps(record["user_goal"]) + raw_db
            for value in (names["first_name"], names["last_name"]):
                assert re.search(rf"\b{value}\b", stored, re.IGNORECASE) is None, record["id"]
            assert "<FIRST_NAME" in raw_db and "<LAST_NAME" in raw_db


def test_agent_configs_declare_every_engine_tool(pack: list[Scenario]) -> None:
    from scenarios.engines import domain_tools

    for domain in KNOWN_DOMAINS:
        config = yaml.safe_load((PACK_DIR / "agents" / f"{domain}_agent.yaml").read_text("utf-8"))
        assert config["id"] == f"agent_{domain}"
        assert config["instructions"].count("\n") > 20
        assert sorted(t["id"] for t in config["tools"]) == sorted(domain_tools(domain))
        assert all(t["description"] for t in config["tools"])
