"""A stored run with planted usage and prices whose costs are known by arithmetic.

Systems (one scenario, one trial each; ``s2s`` regenerated once):

* ``s2s``: a Pipecat realtime component (``openai-realtime``/``rt-model``) reporting
  ``usage`` events (gross counts: audio and cached tokens inside ``input_tokens``);
* ``cascade``: Deepgram STT seconds (priced) and an LLM whose model is not in the table;
* ``silent``: a realtime component that reported no usage at all;
* ``reference``: the offline reference agent (costs zero, never NULL).

The caller is the ``llm`` caller (``llm_call`` events), the judge an LLM judge
(``judge_usage`` in one metric's details). Prices are per 1M tokens / per minute, as
published tables give them.
"""

from __future__ import annotations

import json
from typing import Any

from tasks.costs.prices import PriceRow, PriceTable
from tasks.records import AttemptRecord, MetricScore, TimelineEvent
from tasks.store import Store
from tasks.tables import event_rows, metric_rows, to_table, trial_row

RUN = "costed"
M = 1_000_000


def _price(provider: str, model: str, unit: str, price: float, per: float) -> PriceRow:
    return PriceRow.model_validate(
        {
            "provider": provider,
            "model": model,
            "unit": unit,
            "price": price,
            "per": per,
            "as_of": "2026-12-01",
            "source": "https://example.test/pricing",
        }
    )


PRICES = PriceTable(
    prices=[
        _price("openai-realtime", "rt-model", "input_token", 4.0, M),
        _price("openai-realtime", "rt-model", "cached_input_token", 0.4, M),
        _price("openai-realtime", "rt-model", "output_token", 16.0, M),
        _price("openai-realtime", "rt-model", "audio_input_token", 32.0, M),
        _price("openai-realtime", "rt-model", "audio_output_token", 64.0, M),
        _price("deepgram", "stt-model", "stt_second", 0.006, 60),
        _price("openai-compatible", "caller-model", "input_token", 10.0, M),
        _price("openai-compatible", "caller-model", "output_token", 20.0, M),
        _price("openai", "judge-model", "input_token", 1.0, M),
        _price("openai", "judge-model", "output_token", 2.0, M),
    ]
)

# Planted usage per attempt: realtime responses (gross counts).
S2S_RESPONSES = {
    1: [dict(input_tokens=1000, input_audio_tokens=600, cached_input_tokens=100,
             output_tokens=500, output_audio_tokens=400)],
    2: [dict(input_tokens=2000, input_audio_tokens=900, cached_input_tokens=0,
             output_tokens=300, output_audio_tokens=250),
        dict(input_tokens=2500, input_audio_tokens=1000, output_tokens=200,
             output_audio_tokens=150)],
}  # fmt: skip
CALLER_CALL = {"input_tokens": 1200, "output_tokens": 80}
JUDGE_CALL = {"input_tokens": 3000, "output_tokens": 400}
STT_SECONDS = 95.0
PASSING = {("s2s", 2), ("cascade", 1), ("reference", 1)}  # (system, attempt) passing EVA-A


def components(name: str) -> dict[str, Any]:
    realtime = {"realtime": {"provider": "openai-realtime", "model": "rt-model"}}
    return {
        "s2s": {"architecture": "s2s", "components": realtime},
        "silent": {"architecture": "s2s", "components": realtime},
        "cascade": {
            "architecture": "cascade",
            "components": {
                "stt": {"provider": "deepgram", "model": "stt-model"},
                "llm": {"provider": "openai", "model": "unpriced-llm"},
                "tts": {"provider": "evaflow-espeak"},
            },
        },
    }[name]


def specs() -> dict[str, Any]:
    systems: list[dict[str, Any]] = [
        {"name": n, "agent": "pipecat", "params": components(n)}
        for n in ("s2s", "cascade", "silent")
    ]
    systems.append({"name": "reference", "agent": "reference", "params": {}})
    return {
        "systems": systems,
        "caller": {"name": "llm", "params": {"model": "caller-model"}},
        "judge": {"name": "llm", "params": {"model": "judge-model"}},
        "conditions": ["clean"],
    }


def agent_events(system: str, attempt: int) -> list[TimelineEvent]:
    def usage(**data: Any) -> TimelineEvent:
        return TimelineEvent(t_s=1.0, source="agent", kind="usage", data=data)

    if system == "s2s":
        return [
            usage(provider="openai-realtime", model="rt-model", **r) for r in S2S_RESPONSES[attempt]
        ]
    if system == "cascade":
        return [
            usage(provider="deepgram", model="stt-model", component="stt", stt_seconds=STT_SECONDS),
            usage(provider="openai", model="unpriced-llm", component="llm", input_tokens=10),
        ]
    return []


def attempts() -> list[tuple[str, int, bool]]:
    """(system, attempt, final): s2s's first attempt was regenerated."""
    return [("s2s", 1, False), ("s2s", 2, True)] + [
        (s, 1, True) for s in ("cascade", "silent", "reference")
    ]


def write_costed_run(store: Store, prices: PriceTable | None = PRICES) -> None:
    trials, events, metrics = [], [], []
    for system, attempt, final in attempts():
        record = AttemptRecord(
            attempt_id=f"{RUN}/{system}/airline/S0/clean/t0/a{attempt}",
            run_id=RUN,
            system=system,
            scenario_id="S0",
            domain="airline",
            attempt=attempt,
        )
        record.events = agent_events(system, attempt) + [
            TimelineEvent(t_s=0.0, source="caller", kind="llm_call", data={
                "model": "caller-model", **CALLER_CALL
            })
        ]  # fmt: skip
        key = f"{system}/airline/S0/clean/0"
        trials.append(trial_row(record, "b0", key, final, {"valid": final}))
        events += event_rows(record, "b0")
        passed = 1.0 if (system, attempt) in PASSING else 0.0
        judged = MetricScore(
            name="faithfulness",
            score=1.0,
            details={"judge_usage": [{"model": "judge-model", **JUDGE_CALL}]},
        )
        metrics += metric_rows(record, "b0", [MetricScore(name="EVA-A_pass", score=passed), judged])
    tables = {"trials": trials, "events": events, "metrics": metrics}
    store.write_batch(RUN, "b0", {k: to_table(k, v) for k, v in tables.items()})
    row = {
        "run_id": RUN,
        "batch": "run",
        "created_at": "2026-12-06T00:00:00+00:00",
        "evaflow_version": "0.1.0",
        "config_json": json.dumps({"run_id": RUN}),
        "specs_json": json.dumps(specs()),
        "price_table_version": prices.version_id if prices else None,
        "price_table_json": prices.rows_json() if prices else None,
    }
    store.write_single("runs", RUN, to_table("runs", [row]), name="run")
