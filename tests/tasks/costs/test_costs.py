"""The costs view and per-system figures on a run with planted usage and prices (issue 33)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tasks.costs.prices import PriceTable
from tasks.costs.summary import cost_line, dollars, system_costs
from tasks.store import Store
from tests.tasks.costs.planted import (
    CALLER_CALL,
    JUDGE_CALL,
    PRICES,
    RUN,
    S2S_RESPONSES,
    STT_SECONDS,
    M,
    write_costed_run,
)

# The planted prices again, as plain numbers: the test's own arithmetic, not the view's.
RT = {"text_in": 4.0, "cached": 0.4, "text_out": 16.0, "audio_in": 32.0, "audio_out": 64.0}
CALLER = 10.0 * CALLER_CALL["input_tokens"] / M + 20.0 * CALLER_CALL["output_tokens"] / M
JUDGE = 1.0 * JUDGE_CALL["input_tokens"] / M + 2.0 * JUDGE_CALL["output_tokens"] / M


def realtime_cost(responses: list[dict[str, int]], scale: float = 1.0) -> float:
    total = 0.0
    for r in responses:
        audio_in, cached = r.get("input_audio_tokens", 0), r.get("cached_input_tokens", 0)
        audio_out = r.get("output_audio_tokens", 0)
        total += (
            RT["text_in"] * (r["input_tokens"] - audio_in - cached)
            + RT["cached"] * cached
            + RT["audio_in"] * audio_in
            + RT["text_out"] * (r["output_tokens"] - audio_out)
            + RT["audio_out"] * audio_out
        ) / M
    return total * scale


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.delenv("EVAFLOW_PRICES", raising=False)
    store = Store(str(tmp_path / "store"))
    write_costed_run(store)
    return store


def by_attempt(store: Store) -> dict[str, dict[str, Any]]:
    frame = store.query("SELECT * FROM costs")
    rows = frame.astype(object).where(frame.notna(), None).to_dict("records")
    return {f"{r['system']}/a{r['attempt']}": r for r in rows}


def test_one_row_per_attempt_with_the_planted_split(store: Store) -> None:
    rows = by_attempt(store)
    assert sorted(rows) == ["cascade/a1", "reference/a1", "s2s/a1", "s2s/a2", "silent/a1"]
    for attempt in (1, 2):
        row = rows[f"s2s/a{attempt}"]
        assert row["agent_cost"] == pytest.approx(realtime_cost(S2S_RESPONSES[attempt]))
        assert row["simulator_cost"] == pytest.approx(CALLER)
        assert row["judge_cost"] == pytest.approx(JUDGE)
        assert row["total_cost"] == pytest.approx(
            realtime_cost(S2S_RESPONSES[attempt]) + CALLER + JUDGE
        )
        assert row["unpriced"] is None and row["price_table"] == PRICES.version_id
    # Offline agent: zero, not NULL; its caller and judge still cost what they used.
    ref = rows["reference/a1"]
    assert ref["agent_cost"] == 0.0 and ref["total_cost"] == pytest.approx(CALLER + JUDGE)


def test_an_unpriced_model_or_unreported_component_is_null_and_named(store: Store) -> None:
    rows = by_attempt(store)
    cascade = rows["cascade/a1"]
    assert cascade["agent_cost"] is None and cascade["total_cost"] is None
    assert cascade["simulator_cost"] == pytest.approx(CALLER)  # the other sides stay known
    assert cascade["unpriced"] == "agent: unpriced-llm input_token"
    silent = rows["silent/a1"]
    assert silent["agent_cost"] is None
    assert silent["unpriced"] == "agent: rt-model (realtime: no usage reported)"


def test_usage_splits_gross_token_counts_into_priced_units(store: Store) -> None:
    usage = store.query(
        "SELECT unit, sum(quantity) AS q FROM usage WHERE attempt_id LIKE '%s2s%a1' "
        "AND role = 'agent' GROUP BY unit"
    )
    got = dict(zip(usage["unit"], usage["q"], strict=True))
    r = S2S_RESPONSES[1][0]
    assert got == {
        "input_token": r["input_tokens"] - r["input_audio_tokens"] - r["cached_input_tokens"],
        "cached_input_token": r["cached_input_tokens"],
        "audio_input_token": r["input_audio_tokens"],
        "output_token": r["output_tokens"] - r["output_audio_tokens"],
        "audio_output_token": r["output_audio_tokens"],
    }
    stt = store.query("SELECT quantity FROM usage WHERE unit = 'stt_second'")["quantity"]
    assert list(stt) == [STT_SECONDS]


def test_per_system_dollars_per_trial_and_per_success_count_regenerated_attempts(
    store: Store,
) -> None:
    costs = {c.system: c for c in system_costs(store, RUN)}
    s2s = costs["s2s"]
    expected = sum(realtime_cost(r) for r in S2S_RESPONSES.values()) + 2 * (CALLER + JUDGE)
    assert (s2s.attempts, s2s.trials, s2s.successes) == (2, 1, 1)
    assert s2s.total == pytest.approx(expected)
    assert s2s.per_trial == pytest.approx(expected) and s2s.per_success == pytest.approx(expected)
    assert s2s.simulator == pytest.approx(2 * CALLER) and s2s.judge == pytest.approx(2 * JUDGE)
    assert costs["reference"].agent == 0.0 and costs["reference"].successes == 1
    cascade = costs["cascade"]
    assert cascade.total is None and cascade.per_success is None and cascade.successes == 1
    assert cascade.unpriced == "agent: unpriced-llm input_token"
    # Silent never passed: no success to divide by, and its cost is unknown anyway.
    assert costs["silent"].successes == 0 and costs["silent"].per_trial is None
    line = cost_line(cascade)
    assert "NULL per trial" in line and "unpriced: agent: unpriced-llm input_token" in line
    assert dollars(0.0) == "$0.0000" and dollars(1234.5) == "$1,234.50" and dollars(None) == "NULL"


def test_the_env_override_reprices_every_run(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doubled = PriceTable(
        prices=[r.model_copy(update={"price": 2 * r.price}) for r in PRICES.prices]
    )
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"prices": [r.model_dump() for r in doubled.prices]}))
    monkeypatch.setenv("EVAFLOW_PRICES", str(path))
    row = by_attempt(store)["s2s/a1"]
    assert row["agent_cost"] == pytest.approx(realtime_cost(S2S_RESPONSES[1], scale=2.0))
    assert row["price_table"] == doubled.version_id != PRICES.version_id


def test_a_run_stored_without_a_price_table_is_costed_with_the_shipped_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tasks.costs.prices import load_prices

    monkeypatch.delenv("EVAFLOW_PRICES", raising=False)
    store = Store(str(tmp_path / "old"))
    write_costed_run(store, prices=None)
    rows = by_attempt(store)
    # The planted models are not in the shipped table: unpriced, never guessed.
    assert rows["s2s/a1"]["agent_cost"] is None
    assert "rt-model input_token" in rows["s2s/a1"]["unpriced"]
    assert rows["reference/a1"]["agent_cost"] == 0.0
    assert rows["reference/a1"]["price_table"] == load_prices().version_id
