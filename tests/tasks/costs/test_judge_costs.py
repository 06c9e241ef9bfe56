"""LLM judges' costs: the shipped table prices the reference's judge models (GPT-5.2, Claude
Opus 4.6, Gemini 3 Flash with its audio input), and a model the table does not list is
priced by the cost LiteLLM reported for the call, or stays NULL and named without one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tasks.costs.prices import PriceTable, load_prices
from tasks.records import AttemptRecord, MetricScore
from tasks.store import Store
from tasks.tables import metric_rows, to_table, trial_row

RUN = "judged"
M = 1_000_000
GPT = {"model": "gpt-5.2", "input_tokens": 3000, "cached_input_tokens": 1000,
       "output_tokens": 400, "cost_usd": 99.0}  # fmt: skip
OPUS = {"model": "claude-opus-4-6", "input_tokens": 5000, "output_tokens": 700, "cost_usd": 99.0}
GEMINI = {"model": "gemini-3-flash-preview", "input_tokens": 2000, "input_audio_tokens": 1500,
          "output_tokens": 100, "cost_usd": 99.0}  # fmt: skip
LOCAL = {"model": "local-judge", "input_tokens": 10, "output_tokens": 5, "cost_usd": 0.25}
UNKNOWN = {"model": "local-judge", "input_tokens": 10, "output_tokens": 5, "cost_usd": None}
USAGE = {1: [GPT, OPUS, GEMINI, LOCAL], 2: [UNKNOWN]}

# The published prices again (per 1M tokens), the test's own arithmetic.
EXPECTED_A1 = (
    (2000 * 1.75 + 1000 * 0.175 + 400 * 14.00) / M  # gpt-5.2, 1000 of its input cached
    + (5000 * 5.00 + 700 * 25.00) / M  # claude-opus-4-6
    + (500 * 0.50 + 1500 * 1.00 + 100 * 3.00) / M  # gemini-3-flash-preview, audio at $1
    + 0.25  # local-judge: not in the table, LiteLLM's reported cost
)


def write_run(store: Store, prices: PriceTable) -> None:
    trials, metrics = [], []
    for attempt, usage in USAGE.items():
        record = AttemptRecord(
            attempt_id=f"{RUN}/reference/airline/S0/clean/t0/a{attempt}",
            run_id=RUN,
            system="reference",
            scenario_id="S0",
            domain="airline",
            attempt=attempt,
        )
        key = f"reference/airline/S0/clean/{attempt}"
        trials.append(trial_row(record, "b0", key, True, {"valid": True}))
        judged = MetricScore(name="faithfulness", score=3.0, details={"judge_usage": usage})
        metrics += metric_rows(record, "b0", [judged])
    tables = {"trials": trials, "metrics": metrics}
    store.write_batch(RUN, "b0", {k: to_table(k, v) for k, v in tables.items()})
    specs = {
        "systems": [{"name": "reference", "agent": "reference", "params": {}}],
        "judge": {"name": "llm", "params": {}},
        "conditions": ["clean"],
    }
    row = {
        "run_id": RUN,
        "batch": "run",
        "created_at": "2026-12-07T00:00:00+00:00",
        "evaflow_version": "0.1.0",
        "config_json": json.dumps({"run_id": RUN}),
        "specs_json": json.dumps(specs),
        "price_table_version": prices.version_id,
        "price_table_json": prices.rows_json(),
    }
    store.write_single("runs", RUN, to_table("runs", [row]), name="run")


@pytest.fixture
def rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[int, dict[str, Any]]:
    monkeypatch.delenv("EVAFLOW_PRICES", raising=False)
    store = Store(str(tmp_path / "store"))
    write_run(store, load_prices())
    frame = store.query("SELECT * FROM costs ORDER BY attempt")
    found = frame.astype(object).where(frame.notna(), None).to_dict("records")
    return {int(r["attempt"]): r for r in found}


def test_the_table_prices_the_reference_judges_and_litellm_the_rest(
    rows: dict[int, dict[str, Any]],
) -> None:
    first = rows[1]
    assert first["judge_cost"] == pytest.approx(EXPECTED_A1)
    assert first["unpriced"] is None
    assert first["litellm_priced"] == "judge: local-judge"  # only where the table is silent


def test_an_unlisted_model_without_a_reported_cost_stays_null_and_named(
    rows: dict[int, dict[str, Any]],
) -> None:
    second = rows[2]
    assert second["judge_cost"] is None and second["total_cost"] is None
    assert second["unpriced"] == "judge: local-judge input_token; judge: local-judge output_token"
    assert second["litellm_priced"] is None
