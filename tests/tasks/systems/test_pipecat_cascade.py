"""CI proof: a REAL Pipecat process is the agent under test and completes an EVA record.

System ``pipecat-offline`` (the catalogue entry): Pipecat's pipeline in its own process and
environment (``.venv-pipecat``, ``make pipecat-env``) - Pipecat's Twilio serializer over its
FastAPI WebSocket transport, Silero VAD, our PocketSphinx (with the agent's own, domain-only
language model) and eSpeak NG as Pipecat services, Pipecat's OpenAI LLM service streaming
from the fake chat model (:mod:`tests.fakes.trace_model`), whose every caller-supplied value
comes from what the pipeline transcribed. Tools run in the harness's engine through the
trial's bridge, so the final DB hash equals the expected one only if the pipeline heard the
caller well enough.

Record ``airline/5.2.2`` (cancel a booking): one of the shortest EVA records with a write
that depends on heard values - the cancellation needs the reservation, which needs the
confirmation code and the surname, heard through the agent-side recogniser
(:func:`tasks.simulate.voices.agent_recognizer_for_domain`: the domain's agent
configuration, generic templates and a generic name list; nothing of the scenario); a
lookup that fails on misheard values makes the policy ask the caller to spell them.

What is asserted: the mechanics (a Pipecat process answered over audio on the real-time
clock, Pipecat's streaming OpenAI client sent Pipecat's own transcripts and the bridge's
tool schemas, its function calls ran in the harness's engine), then task completion. With
the domain-only recogniser the record is not completed every time, so the test makes up to
three calls and requires one to complete the task (each stored score must match its hash).
Measured on the 2-core CI machine: 2 of 4 calls completed while the caller asked the agent
to repeat the last words of the turn it had barged into (a simulator fault, fixed in
``tasks.simulate.clocks.call_state.is_cut_off_tail``), 6 of 6 since; the misses left are
the recogniser's (e.g. a NATO-spelled code heard with an extra "eight"). A further call is
made only when the previous one did not complete: the mechanics are asserted on every call
made, and a second completed call would prove nothing the first does not.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from flows.benchmark import run_benchmark
from scenarios.loader import load_eva_scenarios
from tasks.config import BenchmarkConfig
from tasks.store import Store
from tasks.systems.pipecat_process import bot_python
from tests.fake_llm import FakeChatServer
from tests.fakes.trace_model import chat_handler

RECORD = "airline/5.2.2"

pytestmark = pytest.mark.skipif(
    not bot_python().exists(), reason="the Pipecat environment is missing: run `make pipecat-env`"
)


@pytest.fixture
def fake_model(eva_root: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeChatServer]:
    scenario = load_eva_scenarios(eva_root, record_ids=[RECORD])[0]
    with FakeChatServer(fallback=chat_handler(scenario)) as server:
        monkeypatch.setenv("EVAFLOW_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("EVAFLOW_LLM_MODEL", "trace-model")
        yield server


CALLS = 3  # the honest recogniser does not hear every call well enough


def benchmark_config(eva_root: Path, store: Path, call: int) -> BenchmarkConfig:
    return BenchmarkConfig.model_validate(
        {
            "store": str(store),
            "run_id": f"pipecat-{call}",
            "seed": call,  # another call: other caller and channel draws
            "scenarios": {"eva_root": str(eva_root), "records": [RECORD]},
            "systems": ["pipecat-offline"],
            "conditions": ["clean"],
            "trials": 1,
            "max_attempts": 1,
            "max_duration_s": 150,
            "metrics": ["task_completion"],
            "report": False,
            "runner": {"kind": "threads", "workers": 1},
        }
    )


def calls_until_one_completes(eva_root: Path, store: Path) -> pd.DataFrame:
    """Up to ``CALLS`` one-call runs, stopping at the first that completes the task."""
    made = []
    for call in range(CALLS):
        run_benchmark(benchmark_config(eva_root, store, call))
        trials = Store(str(store)).read("trials", f"pipecat-{call}")
        made.append(trials)
        if (trials["final_db_hash"] == trials["expected_db_hash"]).all():
            break
    return pd.concat(made, ignore_index=True)


@pytest.mark.timeout(480)  # ~70 s a call, up to CALLS calls
def test_a_pipecat_process_runs_an_eva_record_over_audio_through_the_bridge(
    eva_root: Path, tmp_path: Path, fake_model: FakeChatServer
) -> None:
    started = time.perf_counter()
    trials = calls_until_one_completes(eva_root, tmp_path)
    store = Store(str(tmp_path))
    assert 1 <= len(trials) <= CALLS
    for _, row in trials.iterrows():
        assert (row["status"], row["system"], row["clock"]) == (
            "ok",
            "pipecat-offline",
            "realtime",
        ), row["error"]
    # The model was Pipecat's streaming OpenAI client, fed by Pipecat's own transcripts...
    assert fake_model.requests and all(r.body.get("stream") for r in fake_model.requests)
    heard = [m["content"] for r in fake_model.requests for m in r.messages if m["role"] == "user"]
    assert any(str(h).strip() for h in heard), heard
    # ... offering the trial's tools, fetched from the bridge, and calling them through it.
    offered = {t["function"]["name"] for t in fake_model.requests[0].body.get("tools") or []}
    assert {"get_reservation", "cancel_reservation"} <= offered
    calls = store.query("SELECT tool_name, params_json, status FROM tool_calls")
    assert "get_reservation" in set(calls["tool_name"]), calls
    print(f"pipecat-offline {RECORD}: {time.perf_counter() - started:.1f} s")
    tc = store.query("SELECT normalized_score FROM metrics WHERE metric = 'task_completion'")
    completed = trials["final_db_hash"] == trials["expected_db_hash"]
    assert sorted(tc["normalized_score"]) == sorted(completed.astype(float)), tc
    assert completed.any(), (
        f"no call completed the task: the pipeline heard {list(dict.fromkeys(heard))}; "
        f"tool calls {calls.to_dict('records')}"
    )
