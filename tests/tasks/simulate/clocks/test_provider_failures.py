"""A provider's failure is infrastructure, never the agent's (issue 29, item 5): the harness side.

An agent reports a provider outage with ``provider_error`` (docs/agent-protocol.md section
9); the attempt ends at once as ``provider_error`` / ``infra_error`` and is regenerated
under the attempt rules, and an agent that falls silent after reporting a recoverable
failure is not blamed for the silence. The agent's own failures stay ``agent_error``. An
agent server the harness runs itself that cannot be reached or dies is the harness's fault.
The Pipecat bot's side (real services, faults injected through provider stand-ins) is in
``tests/tasks/systems/test_provider_faults.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from scenarios.loader import load_eva_scenarios
from scenarios.models import Scenario
from tasks.records import AttemptRecord, MetricScore
from tasks.simulate.clocks.agent_server import harness_side, still_serving
from tasks.simulate.clocks.realtime import simulate_realtime_async
from tasks.simulate.config import SimulationConfig
from tasks.simulate.faults.fault_agents import CallState, greet, read_into
from tasks.simulate.wire import protocol as wire
from tasks.validate import trial_step, validate_attempt

AGENT_TIMEOUT_S = 4.0
FAILURE = {"provider": "deepgram", "role": "stt", "model": "nova-3"}
PROVIDER_SAYS = "HTTP 401: Invalid credentials"


def provider_error(sid: str, fatal: bool) -> str:
    event = {"event": "provider_error", "streamSid": sid, "message": PROVIDER_SAYS}
    return json.dumps(event | FAILURE | {"fatal": fatal})


# ------------------------------------------------------------------------------- the wire


def test_provider_error_is_a_protocol_message_naming_provider_role_and_message() -> None:
    message = wire.parse_agent_message(provider_error("MZ1", fatal=True))
    assert isinstance(message, wire.ProviderFailure)
    assert message.fatal and message.role == "stt"
    assert message.describe() == f"provider deepgram stt (model nova-3) failed: {PROVIDER_SAYS}"
    # Fatal unless said otherwise: an agent that reports a failure means the call is lost.
    minimal = wire.parse_agent_message(
        json.dumps({"event": "provider_error", "streamSid": "MZ1", "provider": "cartesia"})
    )
    assert isinstance(minimal, wire.ProviderFailure) and minimal.fatal
    nameless = wire.parse_agent_message(json.dumps({"event": "provider_error", "streamSid": "x"}))
    assert isinstance(nameless, wire.ProtocolError) and "provider" in nameless.reason


# ------------------------------------------------------------------------- attempt rules


def record(end_reason: str, status: str) -> AttemptRecord:
    return AttemptRecord(
        attempt_id="a",
        run_id="r",
        system="s",
        scenario_id="1",
        domain="airline",
        status=status,  # type: ignore[arg-type]
        end_reason=end_reason,  # type: ignore[arg-type]
        error="provider openai llm failed: Error code: 429",
    )


def test_a_provider_failure_is_regenerated_and_never_kept_as_the_agents() -> None:
    gate = MetricScore(name="conversation_valid_end", score=0.0, normalized_score=0.0)
    verdict = validate_attempt(record("provider_error", "infra_error"), [gate])
    assert (verdict.status, verdict.reason, verdict.fault) == (
        "infra_error",
        "provider_error",
        "provider",
    )
    assert verdict.should_retry and not verdict.valid
    assert "openai" in verdict.message
    verdicts = [verdict.model_dump(mode="json")]
    assert not trial_step(verdicts, max_attempts=2).stop  # regenerated
    verdicts.append(verdict.model_dump(mode="json"))
    last = trial_step(verdicts, max_attempts=2)
    # Attempts exhausted: nothing is kept as the agent's failure; both stay infra_error.
    assert last.stop and last.keep is None and last.verdict is None
    # The agent's own failures are unchanged.
    own = validate_attempt(record("agent_timeout", "agent_error"), [gate])
    assert (own.status, own.fault) == ("agent_error", "agent")


# --------------------------------------------------------------------- calls (real time)


Behaviour = Callable[[ServerConnection, CallState], Awaitable[None]]


@asynccontextmanager
async def agent(behaviour: Behaviour) -> AsyncIterator[str]:
    """A tiny agent at a ws:// URL: greets with a tone, then does ``behaviour``."""

    async def handler(ws: ServerConnection) -> None:
        state = CallState()
        reader = asyncio.create_task(read_into(ws, state))
        with contextlib.suppress(ConnectionClosed):
            await greet(ws, state)
            await behaviour(ws, state)
            await reader

    async with serve(handler, "127.0.0.1", 0) as server:
        yield f"ws://127.0.0.1:{next(iter(server.sockets)).getsockname()[1]}/ws"


async def fails_after_the_first_turn(ws: ServerConnection, state: CallState, fatal: bool) -> None:
    turn_ended = asyncio.ensure_future(state.turn_ends.get())
    await asyncio.wait_for(turn_ended, timeout=20)
    await ws.send(provider_error(state.sid, fatal))


async def fatal_failure(ws: ServerConnection, state: CallState) -> None:
    await fails_after_the_first_turn(ws, state, fatal=True)


async def recoverable_failure(ws: ServerConnection, state: CallState) -> None:
    await fails_after_the_first_turn(ws, state, fatal=False)  # ... and then says nothing


async def silent(ws: ServerConnection, state: CallState) -> None:
    """Healthy providers, no answer: the agent's own failure."""


@pytest.fixture(scope="module")
def scenario(eva_root: Path) -> Scenario:
    return load_eva_scenarios(eva_root, record_ids=["airline/1.1.2"])[0]


def call(scenario: Scenario, behaviour: Behaviour, cache: Path) -> tuple[AttemptRecord, float]:
    async def run() -> AttemptRecord:
        async with agent(behaviour) as url:
            config = SimulationConfig(
                agent=url,
                mode="audio",
                clock="realtime",
                max_duration_s=30.0,
                agent_timeout_s=AGENT_TIMEOUT_S,
                cache_dir=cache,
            )
            return await simulate_realtime_async(scenario, config)

    started = time.perf_counter()
    result = asyncio.run(run())
    return result, time.perf_counter() - started


def test_a_reported_provider_failure_ends_the_call_at_once_as_infra(
    scenario: Scenario, tmp_path: Path
) -> None:
    result, _ = call(scenario, fatal_failure, tmp_path)
    assert (result.status, result.end_reason) == ("infra_error", "provider_error"), result.error
    assert result.error == f"provider deepgram stt (model nova-3) failed: {PROVIDER_SAYS}"
    [event] = [e for e in result.events if e.kind == "provider_error"]
    assert event.source == "agent" and event.data["provider"] == "deepgram"
    # At once: within a second of the caller's first turn, not after the agent timeout.
    caller_end = result.turns_of("user")[0].end_s
    assert caller_end is not None and event.t_s - caller_end < 1.0
    assert result.duration_s - event.t_s < 0.2


def test_silence_after_a_recoverable_provider_failure_is_the_providers(
    scenario: Scenario, tmp_path: Path
) -> None:
    result, _ = call(scenario, recoverable_failure, tmp_path)
    assert (result.status, result.end_reason) == ("infra_error", "provider_error"), result.error
    assert result.error is not None
    assert result.error.startswith(f"provider deepgram stt (model nova-3) failed: {PROVIDER_SAYS}")
    assert result.error.endswith(f"then no agent speech for {AGENT_TIMEOUT_S:.0f} s")


def test_silence_with_healthy_providers_stays_the_agents_failure(
    scenario: Scenario, tmp_path: Path
) -> None:
    result, _ = call(scenario, silent, tmp_path)
    assert (result.status, result.end_reason) == ("agent_error", "agent_timeout"), result.error
    assert not [e for e in result.events if e.kind == "provider_error"]


async def silent_on_a_starved_loop(ws: ServerConnection, state: CallState) -> None:
    """No answer, and the process's event loop (the harness's too) starved: it blocks half
    a second at a time, as a harness overloaded by other calls on its cores does."""
    await asyncio.wait_for(state.turn_ends.get(), timeout=20)
    while ws.state is State.OPEN:
        time.sleep(0.5)
        await asyncio.sleep(0)


def assert_harness_behind(result: AttemptRecord, then: str) -> None:
    """The harness owns the end: infra, regenerated, its lateness named, then the agent's."""
    assert (result.status, result.end_reason) == ("infra_error", "harness_error"), result.error
    assert result.error is not None and "harness fell behind its real-time clock" in result.error
    assert then in result.error, result.error
    verdict = validate_attempt(result, [])
    assert (verdict.fault, verdict.should_retry) == ("harness", True)


def test_a_timeout_while_the_harness_fell_behind_its_clock_is_the_harness_fault(
    scenario: Scenario, tmp_path: Path
) -> None:
    result, _ = call(scenario, silent_on_a_starved_loop, tmp_path)
    assert_harness_behind(result, f"then no agent speech for {AGENT_TIMEOUT_S:.0f} s")


async def drops_on_a_starved_loop(ws: ServerConnection, state: CallState) -> None:
    """After the caller's turn the loop starves (as above) for longer than the answer
    window, then the agent drops the socket without a close frame."""
    await asyncio.wait_for(state.turn_ends.get(), timeout=20)
    for _ in range(round(AGENT_TIMEOUT_S / 0.5) + 2):
        time.sleep(0.5)
        await asyncio.sleep(0)
    ws.transport.abort()


async def drops_on_a_free_loop(ws: ServerConnection, state: CallState) -> None:
    await asyncio.wait_for(state.turn_ends.get(), timeout=20)
    await asyncio.sleep(1.0)
    ws.transport.abort()


def test_a_drop_while_the_harness_fell_behind_its_clock_is_the_harness_fault(
    scenario: Scenario, tmp_path: Path
) -> None:
    result, _ = call(scenario, drops_on_a_starved_loop, tmp_path)
    assert_harness_behind(result, "then agent closed the socket")
    # The same drop with the harness on time is the agent's.
    result, _ = call(scenario, drops_on_a_free_loop, tmp_path / "free")
    assert (result.status, result.end_reason) == ("agent_error", "agent_disconnected"), result.error


# -------------------------------------------------- agent servers the harness runs itself


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"ws://127.0.0.1:{sock.getsockname()[1]}/ws"


def test_an_agent_server_the_harness_runs_that_is_gone_is_the_harness_fault() -> None:
    dead = closed_port_url()
    lost = ("agent_disconnected", "agent closed the socket: no close frame", 12.0)
    unreachable = ("agent_disconnected", "could not reach the agent: ConnectionRefusedError", 0.0)
    assert not still_serving(dead)
    reason, error, duration = asyncio.run(harness_side(lost, dead, connected=True))
    assert (reason, duration) == ("harness_error", 12.0)
    assert error is not None and "stopped serving" in error and "no close frame" in error
    reason, error, _ = asyncio.run(harness_side(unreachable, dead, connected=False))
    assert reason == "harness_error" and error is not None and "could not be reached" in error
    # The user's own agent (no URL the harness serves) keeps the agent's reasons.
    assert asyncio.run(harness_side(unreachable, None, connected=False)) == unreachable
    assert asyncio.run(harness_side(lost, None, connected=True)) == lost


def test_an_agent_server_still_up_that_hung_up_is_the_agents_disconnect() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"ws://127.0.0.1:{listener.getsockname()[1]}/ws"
        lost = ("agent_disconnected", "agent closed the socket", 5.0)
        assert still_serving(url)
        assert asyncio.run(harness_side(lost, url, connected=True)) == lost
