"""Audio mode: the caller speaks to the agent's WebSocket endpoint over a real socket."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import time
import traceback
from collections.abc import Coroutine
from typing import Any, TypeVar

from websockets.asyncio.client import connect
from websockets.exceptions import InvalidHandshake, InvalidURI

from scenarios.models import Scenario
from tasks.records import AttemptRecord, EndReason, TimelineEvent
from tasks.simulate.agents import AgentContext, get_agent
from tasks.simulate.callers import build_caller
from tasks.simulate.channel import trial_channel
from tasks.simulate.clocks.audio_turns import refuse_virtual_clock
from tasks.simulate.clocks.call import CallerSide
from tasks.simulate.clocks.call_result import call_rng, fill_from_call
from tasks.simulate.clocks.interaction import trial_interaction
from tasks.simulate.clocks.record import finish_record, new_gateway, new_record
from tasks.simulate.config import SimulationConfig
from tasks.simulate.meter import ComputeMeter
from tasks.simulate.voices import caller_recognizer, trial_style, trial_voice
from tasks.simulate.wire import protocol as wire
from tasks.spoken.normalize import normalize_spoken  # noqa: F401 - warm import off the clock
from tasks.voice.recognizer_pool import POOL, content_key
from tasks.voice.tts import prepare_engine

T = TypeVar("T")


def run_coroutine(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion, also when called from inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def simulate_audio(scenario: Scenario, config: SimulationConfig) -> AttemptRecord:
    """One conversation over real audio.

    The virtual clock (in-process agents) is :mod:`tasks.simulate.clocks.call`; the real-time
    clock, used for ``clock="realtime"`` and for any ``ws://``/``wss://`` agent, is
    :mod:`tasks.simulate.clocks.realtime`.
    """
    from tasks.simulate.wire.external import served_out_of_process

    if config.clock == "realtime" or "://" in config.agent or served_out_of_process(config.agent):
        from tasks.simulate.clocks.realtime import simulate_realtime_async

        return run_coroutine(simulate_realtime_async(scenario, config))
    return run_coroutine(simulate_audio_async(scenario, config))


async def simulate_audio_async(scenario: Scenario, config: SimulationConfig) -> AttemptRecord:
    started = time.perf_counter()
    config = config.model_copy(update={"mode": "audio"})
    record = new_record(scenario, config)
    rng = call_rng(config, scenario)
    style = trial_style(scenario, config.condition)
    channel = trial_channel(scenario, config, rng)
    voice = trial_voice(scenario, style, config, channel, rng)
    interaction, backchannels = trial_interaction(scenario, config, style, voice)
    # A hosted voice's client import is paid here, not in the first caller turn's latency.
    await asyncio.to_thread(prepare_engine, config.caller_tts, voice)
    caller = build_caller(config.caller, scenario, config)
    refuse_virtual_clock(config.caller, caller)  # before anything is checked out
    # Built once per scenario, spec and seed, then reset and reused (tasks.voice.recognizer_pool).
    scenario_key = content_key(scenario.model_dump_json())
    ears_key = ("caller", scenario_key, config.caller_stt, str(config.cache_dir), config.seed)
    build = functools.partial(
        caller_recognizer, scenario, config.caller_stt, config.cache_dir, config.seed
    )
    recognizer = await asyncio.to_thread(POOL.checkout, ears_key, build)
    agent = get_agent(config.agent, "audio")
    gateway = new_gateway(scenario)
    # Shared by the agent (which charges its compute) and the caller's clock (which reads it).
    meter = ComputeMeter()
    ctx = AgentContext(scenario=scenario, tools=gateway, config=config, meter=meter)
    side: CallerSide | None = None
    reason: EndReason = "harness_error"
    error: str | None = None
    duration = 0.0
    try:
        async with (
            agent.serve(ctx) as url,
            connect(
                url,
                compression=None,
                max_size=wire.MAX_MESSAGE_BYTES,
                open_timeout=config.sync_timeout_s,
            ) as ws,
        ):
            side = CallerSide(
                ws,
                caller,
                style,
                voice,
                recognizer,
                channel,
                gateway,
                config,
                rng,
                meter,
                interaction=interaction,
                backchannels=backchannels,
            )
            gateway.now = side.clock.now
            reason, error, duration = await side.run()
    except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
        reason, error = "agent_disconnected", f"could not reach the agent: {exc}"
    except Exception as exc:  # noqa: BLE001 - a harness bug is data, never a crash
        reason, error = "harness_error", "".join(traceback.format_exception_only(exc)).strip()
    if side is not None:  # no decode may still run on the recogniser when it is reused
        await asyncio.gather(*side.heard.pending, return_exceptions=True)
    await asyncio.to_thread(POOL.release, ears_key, recognizer)
    finish_record(record, scenario, gateway, reason, error)
    if side is not None:
        fill_from_call(record, side, duration, config)
        voice_event = TimelineEvent(
            t_s=0.0, source="harness", kind="caller_voice", data=voice.model_dump()
        )
        record.events = sorted(
            [*record.events, voice_event, _timing_event(side, duration, config)],
            key=lambda e: e.t_s,
        )
    record.wall_s = time.perf_counter() - started
    return record


def _timing_event(side: CallerSide, duration: float, config: SimulationConfig) -> TimelineEvent:
    """How the virtual clock timed the agent (cpu falls back to wall for unmetered agents)."""
    meter = side.clock.meter
    return TimelineEvent(
        t_s=round(duration, 3),
        source="harness",
        kind="virtual_clock",
        data={
            "timing": side.clock.timing,
            "requested": config.virtual_timing,
            "metered": meter is not None and meter.engaged,
            "agent_compute_s": round(meter.seconds(), 6) if meter is not None else None,
        },
    )
