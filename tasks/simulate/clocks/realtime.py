"""Audio mode on the real-time clock: any agent at a ws:// URL, paced like a phone line.

The caller behaviour, playout, recording and timeline are those of the virtual clock
(:class:`tasks.simulate.clocks.call.CallerSide`); what changes:

* frames go out on an absolute schedule (call start + n x 20 ms), so pacing never drifts;
  no ``sync`` ticks are sent, the agent is never waited for;
* a reader task takes the agent's messages as they come and stamps each with its arrival
  time; agent audio is played out one 20 ms frame per tick, a frame belonging to the tick
  nearest its arrival (the tick's playout is decided half a frame after it starts);
* the caller listens to (STT) and prepares (TTS) its next turn in the background while
  its line keeps streaming;
* both directions of the timeline come from VAD on the wire audio: the caller's speech as
  sent, the agent's as played;
* the agent may flood, send the wrong format or vanish: those end the call as
  ``protocol_error`` / ``agent_disconnected`` (see :mod:`tasks.simulate.wire.wire_checks`).

External agents get the trial's tool bridge in ``start.customParameters``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
import traceback
from collections import deque
from contextlib import AsyncExitStack
from typing import Any

import numpy as np
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from perturbations.audio import Clip, VoiceSpec
from scenarios.models import Scenario
from tasks.records import AttemptRecord, EndReason, TimelineEvent
from tasks.simulate.agents import AgentContext, get_agent
from tasks.simulate.caller.spoken import speaks_for_itself
from tasks.simulate.callers import build_caller
from tasks.simulate.channel import trial_channel
from tasks.simulate.clocks.agent_server import harness_side
from tasks.simulate.clocks.audio_turns import caller_session
from tasks.simulate.clocks.call import SILENCE_OR_DROP, CallEnded, CallerSide
from tasks.simulate.clocks.call_result import call_rng, fill_from_call
from tasks.simulate.clocks.clock import FRAME_S
from tasks.simulate.clocks.interaction import trial_interaction
from tasks.simulate.clocks.quiet_heap import frozen_heap
from tasks.simulate.clocks.realtime_clock import RealtimeClock, harness_fell_behind, wire_time
from tasks.simulate.clocks.record import finish_record, harness_failure, new_gateway, new_record
from tasks.simulate.clocks.stt_pool import PooledCallerRecognizer
from tasks.simulate.clocks.tracks import CLEAN_FRAME, CLEAN_RATE
from tasks.simulate.config import SimulationConfig
from tasks.simulate.tools.bridge import BridgeConfig, serve_tool_bridge
from tasks.simulate.voices import trial_style, trial_voice
from tasks.simulate.wire import protocol as wire
from tasks.simulate.wire.external import external_url
from tasks.simulate.wire.wire_checks import AudioFormatMonitor, flood_problem, timing_event
from tasks.voice.telephony import (
    FRAME_BYTES,
    ULAW_SILENCE,
    WIRE_RATE,
    from_wire,
    resample,
    to_wire,
    wire_samples,
)
from tasks.voice.tts import prepare_engine, synthesize
from tasks.voice.vad import VadEvent

CLOSE_TIMEOUT_S = 2.0
AMBIENT_BATCH = 50  # open-mic frames converted to the wire at once (1 s)
SILENT_WIRE_FRAME = bytes([ULAW_SILENCE]) * FRAME_BYTES
# Beyond the call-time limit, the wall time an attempt may take to hang up and clean up.
SHUTDOWN_GRACE_S = 20.0
# Messages the reader handles before it lets the other calls on the loop run.
READER_BATCH = 32


class RealtimeCallerSide(CallerSide):
    """:class:`CallerSide` on the wall clock; see the module docstring."""

    def __init__(
        self, *args: Any, start_parameters: dict[str, str] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.rt_clock = RealtimeClock()
        # Same now()/tick_time interface as the virtual clock the base class uses.
        self.clock = self.rt_clock  # type: ignore[assignment]
        self.start_parameters = dict(start_parameters or {})
        self.format_monitor = AudioFormatMonitor()
        self.ended: CallEnded | None = None
        self.hanging_up = False
        self.preparing: asyncio.Task[None] | None = None
        # Wall (call) time each frame really crossed the wire, by frame index: the caller's
        # when it was sent, the agent's when it would start playing on a phone (arrival,
        # or when the audio queued before it ends). The timeline uses these, so neither
        # the 20 ms tick grid nor a late wake-up of this loop shows up in it.
        self.caller_sent: list[float] = []
        self.agent_played: list[float] = []
        self.agent_queue_end = 0.0
        self.ambient_frames: deque[bytes] = deque()

    async def run(self) -> tuple[EndReason, str | None, float]:
        call_sid = f"CA{self.stream_sid[2:]}"
        for message in wire.start_messages(self.stream_sid, call_sid, self.start_parameters):
            await self._send_raw(message)
        self.rt_clock.start()
        reader = asyncio.create_task(self._read(), name=f"agent-reader:{self.stream_sid}")
        tick = 0
        try:
            while True:
                t = tick * FRAME_S
                if t >= self.config.max_duration_s:
                    raise CallEnded("max_duration")
                await self._tick(tick, t)
                tick += 1
        except CallEnded as raised:
            ended = self.attributed(raised)
            self.hanging_up = True
            await self._stop_background()
            await self._hang_up(ended)
            return ended.reason, ended.error, tick * FRAME_S
        finally:
            self.hanging_up = True
            await self._stop_background()
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            self.events.append(
                TimelineEvent(
                    t_s=round(tick * FRAME_S, 3),
                    source="harness",
                    kind="pacing",
                    data=self.rt_clock.pacing(),
                )
            )

    def attributed(self, ended: CallEnded) -> CallEnded:
        """Besides a provider's silence (the base rule): a harness that fell behind its
        clock while it waited heard the agent late, so the timeout is its own; and an agent
        that dropped a call whose caller audio came seconds late (its own silence timers
        may fire) was not given a real-time call to keep."""
        ended = super().attributed(ended)
        if ended.reason not in SILENCE_OR_DROP:
            return ended
        behind = harness_fell_behind(self.rt_clock.lateness_s, self.config.agent_timeout_s)
        if behind is None:
            return ended
        return CallEnded("harness_error", f"{behind}; then {ended.error or ended.reason}")

    async def _tick(self, tick: int, t: float) -> None:
        await self.rt_clock.sleep_until(t, record=True)
        self._raise_if_ended()
        caller_wire, clean, finished = await self._caller_frame(t)
        self.caller_sent.append(self.rt_clock.now())
        await self._send_raw(
            wire.media_message(self.stream_sid, caller_wire, int(t * 1000), tick + 1)
        )
        if finished is not None:
            stop = wire.UserSpeechStop(
                event="user_speech_stop",
                streamSid=self.stream_sid,
                timestamp_ms=int((t + FRAME_S) * 1000),
            )
            await self._send(stop)
        # Play the frames that arrived up to half a frame in: the tick nearest each arrival.
        await self.rt_clock.sleep_until(t + FRAME_S / 2)
        self._raise_if_ended()
        agent_pcm = await self._play(t)
        caller_pcm = wire_samples(caller_wire)
        self.tracks.add_tick(caller_pcm, clean, agent_pcm)
        # The wire in both directions: what the agent got, what the caller heard.
        # A backchannel is on the wire, but it is not a turn.
        heard_pcm = np.zeros_like(caller_pcm) if self.backchannel_frame else caller_pcm
        self._vad(self.caller_vad.process_samples(heard_pcm, WIRE_RATE), "caller")
        self._vad(self.agent_vad.process_samples(agent_pcm, WIRE_RATE), "agent")
        if finished is not None:
            self._finish_utterance(finished, t + FRAME_S)
        await self._listen(t + FRAME_S)

    async def _caller_frame(self, t: float) -> tuple[bytes, np.ndarray, Any]:
        utt = self.current
        due = utt is not None and utt.start_at is not None and t >= utt.start_at
        if due or self.backchannels.playing is not None:
            return await super()._caller_frame(t)
        self.backchannel_frame = False
        return self._ambient_wire(), np.zeros(CLEAN_FRAME, np.float32), None

    def _ambient_wire(self) -> bytes:
        """The open mic between utterances, converted to the wire a second at a time:
        resampling each 20 ms frame on its own costs ~1.4 ms (a filter design per call),
        too much for the real-time loop."""
        if not self.ambient_frames:
            chunk = np.concatenate([self.ambient.next_frame() for _ in range(AMBIENT_BATCH)])
            if not chunk.any():
                self.ambient_frames.extend([SILENT_WIRE_FRAME] * AMBIENT_BATCH)
            else:
                payload = to_wire(Clip(chunk, CLEAN_RATE))
                self.ambient_frames.extend(
                    payload[i : i + FRAME_BYTES] for i in range(0, len(payload), FRAME_BYTES)
                )
        return self.ambient_frames.popleft()

    async def _play(self, t: float) -> np.ndarray:
        await self._echo_marks()
        pcm = np.zeros(WIRE_RATE // 50, np.float32)
        due = t + FRAME_S / 2
        if self.playout and self.playout[0][0] == "audio" and self.playout[0][2] <= due:
            _, chunk, arrived = self.playout.popleft()
            played = max(arrived, self.agent_queue_end)
            self.agent_queue_end = played + FRAME_S
            self.agent_played.append(played)
            pcm = wire_samples(chunk)
            self.heard.frames.append(pcm)
            self.heard.last_audio = t + FRAME_S
            await self._echo_marks()
        else:
            self.agent_played.append(t)
        return pcm

    def _vad(self, events: list[VadEvent], source: str) -> None:
        times = self.caller_sent if source == "caller" else self.agent_played
        super()._vad([wire_time(event, times) for event in events], source)

    # ------------------------------------------------------------------ the caller thinks

    async def _listen(self, t: float) -> None:
        if self.preparing is not None:
            if not self.preparing.done():
                return  # still listening / speaking to itself; the line keeps streaming
            task, self.preparing = self.preparing, None
            task.result()
        await super()._listen(t)

    async def _respond(self, t: float, start_at: float) -> None:
        respond = super()._respond
        self.preparing = asyncio.create_task(respond(t, start_at))

    async def _stop_background(self) -> None:
        """Cancel the caller's thinking (turn preparation, recognitions in flight)."""
        tasks = [self.preparing, *getattr(self.heard, "pending", [])]
        for task in tasks:
            if task is not None and not task.done():
                task.cancel()
        for task in tasks:
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    # ------------------------------------------------------------------ the agent speaks

    async def _read(self) -> None:
        handled = 0
        try:
            async for raw in self.ws:
                self._take(raw, self.rt_clock.now())
                handled += 1
                if handled % READER_BATCH == 0:
                    await asyncio.sleep(0)  # a flooding agent must not starve other calls
        except ConnectionClosed as exc:
            if not self.hanging_up:
                self._end("agent_disconnected", f"agent closed the socket: {exc}")
            return
        except CallEnded as ended:
            self.ended = self.ended or ended
            return
        if not self.hanging_up:
            self._end("agent_disconnected", "agent closed the socket")

    def _take(self, raw: Any, at: float) -> None:
        timing = timing_event(raw)
        if timing is not None:
            event = TimelineEvent(
                t_s=round(at, 3), source="agent", kind="agent_timing", data=timing
            )
            self.events.append(event)
            return
        message = wire.parse_agent_message(raw)
        self._receive(message, at)
        if isinstance(message, wire.Media):
            problem = self.format_monitor.feed(message.media.audio())
            problem = problem or flood_problem(len(self.playout), FRAME_S)
            if problem:
                raise CallEnded("protocol_error", problem)

    def _end(self, reason: EndReason, error: str) -> None:
        if self.ended is None:
            self.ended = CallEnded(reason, error)

    def _raise_if_ended(self) -> None:
        if self.ended is not None:
            raise self.ended

    async def _send_raw(self, message: str) -> None:
        try:
            await self.ws.send(message)
        except ConnectionClosed as exc:
            raise CallEnded("agent_disconnected", f"agent closed the socket: {exc}") from None


def _open_ws(url: str, config: SimulationConfig) -> Any:
    return connect(
        url,
        compression=None,
        max_size=wire.MAX_MESSAGE_BYTES,
        open_timeout=min(config.agent_timeout_s, 10.0),
        close_timeout=CLOSE_TIMEOUT_S,
    )


async def _agent_url(
    stack: AsyncExitStack, scenario: Scenario, config: SimulationConfig, gateway: Any
) -> tuple[str, dict[str, str]]:
    """The URL to call and the ``start`` parameters: external agents get a tool bridge."""
    url = external_url(config)
    if url is None:
        ctx = AgentContext(scenario=scenario, tools=gateway, config=config)
        agent = get_agent(config.agent, "audio")
        params: dict[str, str] = {}
        if getattr(agent, "out_of_process", False):  # its own process: tools via the bridge
            bridge = await stack.enter_async_context(serve_tool_bridge(gateway, scenario.agent))
            params = {**bridge.start_parameters(), **agent.start_parameters(ctx)}  # type: ignore[attr-defined]
        return await stack.enter_async_context(agent.serve(ctx)), params
    bridge_config = BridgeConfig(
        host=str(config.agent_params.get("bridge_host", "127.0.0.1")),
        share_scenario=bool(config.agent_params.get("share_scenario", False)),
    )
    bridge = await stack.enter_async_context(
        serve_tool_bridge(gateway, scenario.agent, bridge_config, scenario)
    )
    return url, bridge.start_parameters()


@functools.cache
def warm_up_speech() -> None:
    """Load the speech stack (eSpeak, resampling filters, lazy imports) before any call
    starts: a first use in the middle of a call would stall every call on the loop."""
    clip = synthesize("Hello.", VoiceSpec())
    to_wire(resample(clip, CLEAN_RATE))
    from_wire(to_wire(clip))


class _Attempt:
    """Everything an attempt needs before its call starts (built off the event loop)."""

    def __init__(self, scenario: Scenario, config: SimulationConfig) -> None:
        self.record = new_record(scenario, config)
        self.rng = call_rng(config, scenario)
        self.style = trial_style(scenario, config.condition)
        self.channel = trial_channel(scenario, config, self.rng)
        self.voice = trial_voice(scenario, self.style, config, self.channel, self.rng)
        # Decoding holds the GIL: in a worker process it cannot delay this or any other call.
        self.recognizer = PooledCallerRecognizer(
            scenario, config.caller_stt, config.cache_dir, config.seed
        )
        self.caller = build_caller(config.caller, scenario, config)
        self.gateway = new_gateway(scenario)
        self.interaction, self.backchannels = trial_interaction(
            scenario, config, self.style, self.voice
        )
        warm_up_speech()
        prepare_engine(config.caller_tts, self.voice)  # a hosted voice's client, before the call

    def side(self, ws: Any, config: SimulationConfig, params: dict[str, str]) -> RealtimeCallerSide:
        return RealtimeCallerSide(
            ws,
            self.caller,
            self.style,
            self.voice,
            self.recognizer,
            self.channel,
            self.gateway,
            config,
            self.rng,  # type: ignore[arg-type]
            start_parameters=params,
            interaction=self.interaction,
            backchannels=self.backchannels,
        )


def _finish(
    attempt: _Attempt,
    scenario: Scenario,
    config: SimulationConfig,
    side: RealtimeCallerSide | None,
    outcome: tuple[EndReason, str | None, float],
) -> AttemptRecord:
    reason, error, duration = outcome
    record = finish_record(attempt.record, scenario, attempt.gateway, reason, error)
    if side is not None:
        fill_from_call(record, side, duration, config)
    return record


async def simulate_realtime_async(scenario: Scenario, config: SimulationConfig) -> AttemptRecord:
    """One conversation on the real-time clock; never raises for agent faults.

    Set-up and bookkeeping (DB copies, hashes, WAV files) run in a worker thread so that
    other calls sharing this event loop keep their 20 ms pace.
    """
    started = time.perf_counter()
    config = config.model_copy(update={"mode": "audio", "clock": "realtime"})
    try:
        attempt = await asyncio.to_thread(_Attempt, scenario, config)
        if not speaks_for_itself(attempt.caller):  # a caller with its own ears never decodes
            await asyncio.wrap_future(attempt.recognizer.warm())
    except Exception as exc:  # noqa: BLE001 - stored, with the clock this attempt ran on
        failed = harness_failure(scenario, config, exc)
        failed.wall_s = time.perf_counter() - started
        return failed
    side: RealtimeCallerSide | None = None
    outcome: tuple[EndReason, str | None, float] = ("harness_error", None, 0.0)
    called: str | None = None  # the agent's URL, once known
    try:
        async with AsyncExitStack() as stack:
            url, params = await _agent_url(stack, scenario, config, attempt.gateway)
            called = url
            ws = await stack.enter_async_context(_open_ws(url, config))
            side = attempt.side(ws, config, params)
            stack.enter_context(frozen_heap())  # no full GC pass stalls the calls' pacing
            attempt.gateway.now = side.rt_clock.now
            # A caller that speaks for itself connects to its own service for the call.
            await stack.enter_async_context(caller_session(attempt.caller, attempt.voice))
            limit = config.max_duration_s + SHUTDOWN_GRACE_S
            outcome = await asyncio.wait_for(side.run(), timeout=limit)
    except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
        if called is None:  # the bridge or the agent's server could not start
            outcome = ("harness_error", f"could not set up the call: {exc!r}", 0.0)
        elif side is None:
            outcome = ("agent_disconnected", f"could not reach the agent: {exc!r}", 0.0)
        else:
            outcome = ("harness_error", f"call did not end in time: {exc!r}", 0.0)
    except Exception as exc:  # noqa: BLE001 - a harness bug is data, never a crash
        outcome = ("harness_error", "".join(traceback.format_exception_only(exc)).strip(), 0.0)
    served = None if called is None or external_url(config) else called
    outcome = await harness_side(outcome, served, side is not None)
    record = await asyncio.to_thread(_finish, attempt, scenario, config, side, outcome)
    record.wall_s = time.perf_counter() - started
    return record
