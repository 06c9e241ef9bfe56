"""What the agent knows of an answer comes from the schema and the domain, not the trace."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from scenarios.loader import load_agent_config, load_eva_scenarios
from tasks.simulate.dialogue.slots import SlotReader
from tasks.simulate.reference.asking import (
    ValueRequest,
    domain_aliases,
    expectation_for,
    schema_format,
)

AGENT = load_agent_config(Path("scenarios/pack/agents/airline_agent.yaml"))
READER = SlotReader(date(2026, 3, 17))


def _request(path: str, trace_value: str) -> ValueRequest:
    fmt = schema_format(AGENT, "get_reservation", path, trace_value)
    return ValueRequest("k", trace_value, path, None, "retry", fmt=fmt)


@pytest.mark.parametrize(
    ("path", "golden", "poisoned", "heard", "first"),
    [
        ("last_name", "smith", "qwxyzpt", "Smyth, S M I T H, or Smithe", "SMITH"),
        # The golden code's letters would pick the second window; the schema's format
        # (6 letters or digits) and spelled-ness pick the spelled one, whatever the trace.
        ("confirmation_number", "Q4RT8N", "ZZ99ZZ", "A B 1 2 C D, or q4rt8n", "AB12CD"),
    ],
)
def test_poisoned_trace_value_gives_the_same_candidates(
    path: str, golden: str, poisoned: str, heard: str, first: str
) -> None:
    real, fake = _request(path, golden), _request(path, poisoned)
    assert real.fmt == fake.fmt
    assert expectation_for(real) == expectation_for(fake)
    candidates = READER.extract_candidates(heard, real.fmt)
    assert candidates == READER.extract_candidates(heard, fake.fmt)
    assert candidates[0] == first


def test_spelling_expectation_is_the_schema_format() -> None:
    assert expectation_for(_request("confirmation_number", "Q4RT8N")) == "code:XXXXXX"
    assert expectation_for(_request("last_name", "smith")) == "code"


def test_alias_table_is_the_domains_not_the_records(eva_root: Path) -> None:
    scenarios = [s for s in load_eva_scenarios(eva_root) if s.domain == "itsm"]
    tables = {tuple(sorted(domain_aliases(s).items())) for s in scenarios}
    assert len(tables) == 1  # the same for every record of the domain
    emptied = scenarios[0].model_copy(update={"initial_db": {}})
    table = domain_aliases(emptied)
    assert table == domain_aliases(scenarios[0]) and table
    assert all(name in table.values() for name in ["Headquarters"])
