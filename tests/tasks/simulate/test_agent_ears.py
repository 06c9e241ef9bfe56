"""The agent's recogniser hears only what a deployed agent could know before the call.

For every built-in and EVA record, no value the caller supplies (user goal values, the
entities and proper names of its trace lines, expected-DB values it provides) that is not
in the generic vocabulary reaches the vocabulary of the agent-side LM or dictionary.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import pytest

from scenarios.loader import load_eva_scenarios, load_scenario_dir
from scenarios.models import AgentConfig, Scenario
from tasks.simulate import voices
from tasks.simulate.dialogue.script import build_script
from tasks.spoken import extract_entities
from tasks.spoken.words import SPOKEN_VOCABULARY
from tasks.voice.corpus import NAME_TEMPLATES, domain_corpus, generic_names
from tasks.voice.stt import CODE_LEAD_INS, code_symbols, lm_tokens

PACK = Path(__file__).resolve().parents[3] / "scenarios" / "pack"


def _words(text: str) -> set[str]:
    return set(lm_tokens(text).split())


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]


@functools.lru_cache(maxsize=8)
def _generic_vocabulary(agent_json: str) -> frozenset[str]:
    """Words a deployed agent may know: its configuration, the generic templates, the
    generic name list and the words numbers, dates and spelled codes are said with."""
    agent = AgentConfig.model_validate_json(agent_json)
    firsts, lasts = generic_names()
    texts = [
        *voices.agent_config_texts(agent),
        *voices._GENERIC_CALLER,
        *voices._CALLER_PHRASES,
        *NAME_TEMPLATES,
        *firsts,
        *lasts,
    ]
    out = {w for t in texts for w in _words(t)}
    return frozenset(out | SPOKEN_VOCABULARY | set(code_symbols("both")) | {"dash"})


def _agent_vocabulary(corpus: list[str]) -> set[str]:
    """The LM's words and the words the decoder's dictionary adds to them."""
    extra = {w for lead in CODE_LEAD_INS for w in lead.split()} | set(code_symbols("both"))
    return {w for s in corpus for w in _words(s)} | extra | {"dash"}


def caller_values(scenario: Scenario) -> set[str]:
    """What the caller of ``scenario`` supplies, as written values."""
    goal = scenario.user_goal.get("information_required") or {}
    values = {str(v) for v in _leaves(goal) if v not in (None, "")}
    values.add(str(scenario.user_config.get("name") or ""))
    lines = build_script(scenario).user_lines
    for line in lines:
        values |= {e.text for e in extract_entities(line)}
        # Proper names the caller says: capitalised words not opening a sentence.
        values |= set(re.findall(r"(?<=[a-z,] )[A-Z][a-zA-Z'-]+", line))
    said = " ".join([*lines, *map(str, values)]).lower()
    initial = {str(v) for v in _leaves(scenario.initial_db)}
    for leaf in _leaves(scenario.expected_db):
        text = str(leaf)
        if (
            isinstance(leaf, str)
            and text not in initial
            and len(text) >= 3
            and text.lower() in said
        ):
            values.add(text)
    return {v for v in values if v.strip()}


def leaks(scenario: Scenario, heard: set[str]) -> dict[str, set[str]]:
    """Caller values of ``scenario`` whose non-generic words are in the agent's vocabulary
    ``heard`` (see ``_agent_vocabulary``)."""
    generic = _generic_vocabulary(scenario.agent.model_dump_json())
    out = {}
    for value in caller_values(scenario):
        private = _words(value) - generic
        if private & heard:
            out[value] = private & heard
    return out


@pytest.fixture(scope="module")
def all_scenarios(eva_root: Path) -> list[Scenario]:
    return [*load_scenario_dir(PACK), *load_eva_scenarios(eva_root)]


def test_no_caller_value_reaches_the_agent_lm(all_scenarios: list[Scenario]) -> None:
    found = {}
    vocabularies: dict[str, set[str]] = {}
    for scenario in all_scenarios:
        agent = scenario.agent.model_dump_json()
        if agent not in vocabularies:
            corpus = voices.agent_corpus_for_domain(scenario.domain, scenario.agent)
            vocabularies[agent] = _agent_vocabulary(corpus)
        if bad := leaks(scenario, vocabularies[agent]):
            found[f"{scenario.source}:{scenario.key}"] = bad
    assert not found, f"caller values in the agent's vocabulary: {found}"


def test_the_check_catches_a_recogniser_primed_with_the_script(
    all_scenarios: list[Scenario],
) -> None:
    """The old per-scenario builder (caller lines as templates) leaks in most pack records."""
    pack = [s for s in all_scenarios if s.source == "builtin"]
    primed = 0
    for scenario in pack:
        corpus = domain_corpus(build_script(scenario).user_lines, 200, seed=0)
        primed += bool(leaks(scenario, _agent_vocabulary(corpus)))
    assert primed >= len(pack) // 2, f"only {primed} of {len(pack)} primed corpora flagged"


def test_the_corpus_is_one_per_domain(all_scenarios: list[Scenario]) -> None:
    by_domain: dict[tuple[str, str], list[Scenario]] = {}
    for s in all_scenarios:
        by_domain.setdefault((s.source, s.domain), []).append(s)
    for group in by_domain.values():
        first, last = group[0], group[-1]
        assert voices.agent_corpus_for_domain(first.domain, first.agent) == (
            voices.agent_corpus_for_domain(last.domain, last.agent)
        )


def test_the_corpus_knows_the_schema_and_generic_names() -> None:
    agent = AgentConfig.model_validate(
        {
            "id": "a",
            "instructions": "Ask for the confirmation code.",
            "tools": [
                {
                    "id": "verify",
                    "required_parameters": [
                        {"name": "employee_id", "description": "ID (e.g. EMP048271)."},
                        {"name": "seat", "description": "Seat", "enum": ["window", "aisle"]},
                    ],
                }
            ],
        }
    )
    words = _agent_vocabulary(voices.agent_corpus_for_domain("itsm", agent))
    assert {"confirmation", "employee", "window", "aisle", "smith", "johnson"} <= words
    text = " ".join(voices.agent_corpus_for_domain("itsm", agent)).lower()
    assert re.search(r"\b(e m p|echo mike papa)\b", text)  # the ID's shape, from the schema
    assert "zero four eight two seven one" not in text  # but not the example's digits
