"""Small misbehaving and calibrated agents speaking raw protocol JSON, for tests and benchmarks.

They are written against the wire format only (no harness code), so they behave like
somebody else's server. "Speech" is a tone burst: the harness VAD hears it, its STT hears
nothing useful, which is all a timing or fault test needs.

Registered (``FAULT_AGENTS``):

* ``hang``: accepts the call, reads everything, never sends a byte;
* ``disconnect``: greets, then drops the connection in the middle of its first reply;
* ``garbage``: greets, then sends frames that are not protocol messages;
* ``wrong_format``: answers with 16 kHz 16-bit linear PCM where 8 kHz mu-law is required;
* ``never_ends``: talks without pause and never hangs up;
* ``flood``: sends audio far faster than real time;
* ``delay``: a well-behaved agent that answers each caller turn after a known delay and
  reports it in an ``agent_timing`` event (the timing calibration target);
* ``echo``: a real but useless agent: it answers every caller turn with "I heard: ..." and
  after ``turns`` turns (default 6) says goodbye and hangs up with ``end_call``. It never
  calls a tool, so it must score 0 on task completion, not be regenerated away.

:class:`EchoSession` is the same agent in text form (agent ``echo``, text mode).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from evaflow_core.registry import Registry
from perturbations.audio import Clip
from tasks.simulate.reference.policy import AgentReply
from tasks.voice.telephony import FRAME_BYTES, WIRE_RATE, frames, to_wire, ulaw_decode
from tasks.voice.vad import EnergyVAD, VadConfig

FRAME_S = 0.02
ANSWER_S = 0.3  # like a phone being picked up: the line is open before anyone speaks
FaultHandler = Callable[[ServerConnection, dict[str, Any]], Awaitable[None]]
FAULT_AGENTS: Registry[FaultHandler] = Registry(
    "fault agent", entry_point_group="evaflow.fault_agents"
)


def tone(seconds: float, freq: float = 440.0, dbfs: float = -12.0) -> bytes:
    """A steady tone as 8 kHz mu-law: loud enough for any VAD, starts at full level."""
    t = np.arange(int(seconds * WIRE_RATE)) / WIRE_RATE
    samples = (10 ** (dbfs / 20)) * np.sin(2 * math.pi * freq * t)
    return to_wire(Clip(samples.astype(np.float32), WIRE_RATE))


def media(sid: str, payload: bytes) -> str:
    return json.dumps(
        {
            "event": "media",
            "streamSid": sid,
            "media": {"payload": base64.b64encode(payload).decode()},
        }
    )


class CallState:
    """What a simple agent tracks: the stream id and when the caller stops talking."""

    def __init__(self, endpoint_ms: int = 300) -> None:
        self.sid = ""
        self.started = asyncio.Event()
        self.stopped = asyncio.Event()
        self.vad = EnergyVAD(VadConfig(hangover_ms=endpoint_ms))
        self.arrivals: list[float] = []  # wall time each received frame arrived
        self.turn_ends: asyncio.Queue[float] = asyncio.Queue()

    def on_message(self, raw: str | bytes) -> None:
        msg = json.loads(raw)
        event = msg.get("event")
        if event == "start":
            self.sid = str(msg.get("streamSid") or msg.get("start", {}).get("streamSid") or "")
            self.started.set()
        elif event == "stop":
            self.stopped.set()
        elif event == "media":
            self._on_audio(base64.b64decode(msg["media"]["payload"]))

    def _on_audio(self, payload: bytes) -> None:
        now = time.perf_counter()
        for chunk in frames(payload):
            self.arrivals.append(now)
            clip = Clip.from_int16(ulaw_decode(chunk), WIRE_RATE)
            for event in self.vad.process(clip):
                if event.kind == "speech_end":
                    # Wall time at which the last speech frame had fully arrived.
                    last = min(round(event.time_s / FRAME_S) - 1, len(self.arrivals) - 1)
                    self.turn_ends.put_nowait(self.arrivals[max(last, 0)])


async def read_into(ws: ServerConnection, state: CallState) -> None:
    with contextlib.suppress(ConnectionClosed):
        async for raw in ws:
            state.on_message(raw)


async def send_paced(ws: ServerConnection, sid: str, audio: bytes) -> None:
    """Send audio as 20 ms frames on an absolute real-time schedule."""
    start = time.perf_counter()
    for n, frame in enumerate(frames(audio)):
        delay = start + n * FRAME_S - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        await ws.send(media(sid, frame))


async def greet(ws: ServerConnection, state: CallState, seconds: float = 0.8) -> None:
    await asyncio.wait_for(state.started.wait(), timeout=10)
    await asyncio.sleep(ANSWER_S)
    await send_paced(ws, state.sid, tone(seconds))


def _reader(ws: ServerConnection, state: CallState) -> asyncio.Task[None]:
    return asyncio.create_task(read_into(ws, state))


async def next_turn_end(state: CallState, reader: asyncio.Task[None]) -> float | None:
    """Wall time the caller's next turn ended, or None once the call is over."""
    getter = asyncio.ensure_future(state.turn_ends.get())
    await asyncio.wait({getter, reader}, return_when=asyncio.FIRST_COMPLETED)
    if getter.done():
        return getter.result()
    getter.cancel()
    return None


@FAULT_AGENTS.register("hang")
async def hang(ws: ServerConnection, params: dict[str, Any]) -> None:
    await read_into(ws, CallState())


@FAULT_AGENTS.register("disconnect")
async def disconnect(ws: ServerConnection, params: dict[str, Any]) -> None:
    state = CallState()
    reader = _reader(ws, state)
    await greet(ws, state)
    if await next_turn_end(state, reader) is None:
        return
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(send_paced(ws, state.sid, tone(2.0)), timeout=0.3)
    reader.cancel()
    ws.transport.abort()  # no close handshake: a crashed process looks like this


@FAULT_AGENTS.register("garbage")
async def garbage(ws: ServerConnection, params: dict[str, Any]) -> None:
    state = CallState()
    reader = _reader(ws, state)
    await greet(ws, state)
    if await next_turn_end(state, reader) is None:
        return
    for junk in ("\x00\x01 not json {", '{"event": "media", "media": {"payload": "%%%"}}'):
        await ws.send(junk)
    await ws.send(b"\xff\xfe binary frame")
    await reader


@FAULT_AGENTS.register("wrong_format")
async def wrong_format(ws: ServerConnection, params: dict[str, Any]) -> None:
    state = CallState()
    reader = _reader(ws, state)
    await state.started.wait()
    t = np.arange(16000) / 16000
    pcm16 = (0.25 * 32767 * np.sin(2 * math.pi * 440 * t)).astype("<i2").tobytes()
    start = time.perf_counter()
    for n in range(len(pcm16) // 640):
        await asyncio.sleep(max(0.0, start + n * FRAME_S - time.perf_counter()))
        await ws.send(media(state.sid, pcm16[n * 640 : (n + 1) * 640]))
    await reader


@FAULT_AGENTS.register("never_ends")
async def never_ends(ws: ServerConnection, params: dict[str, Any]) -> None:
    state = CallState()
    reader = _reader(ws, state)
    await state.started.wait()
    chunk = tone(1.0)
    with contextlib.suppress(ConnectionClosed):
        while not reader.done():
            await send_paced(ws, state.sid, chunk)


@FAULT_AGENTS.register("flood")
async def flood(ws: ServerConnection, params: dict[str, Any]) -> None:
    state = CallState()
    reader = _reader(ws, state)
    await state.started.wait()
    frame = tone(FRAME_S)
    with contextlib.suppress(ConnectionClosed):
        for n in range(int(params.get("frames", 100_000))):
            await ws.send(media(state.sid, frame))
            if n % 200 == 0:
                await asyncio.sleep(0)
    await reader


@FAULT_AGENTS.register("delay")
async def delay(ws: ServerConnection, params: dict[str, Any]) -> None:
    """Answers every caller turn ``delay_s`` after the caller's last speech frame arrived.

    ``delays_s`` (a list, cycled) overrides ``delay_s``; ``reply_s`` is the reply length;
    ``endpoint_ms`` the silence that ends a caller turn (a pause inside a sentence must
    not count as its end).
    Each reply is preceded by ``{"event": "agent_timing", "latency_ms": ...}`` carrying the
    delay it actually achieved, measured on this agent's own clock.
    """
    state = CallState(endpoint_ms=int(params.get("endpoint_ms", 700)))
    reader = _reader(ws, state)
    delays = [float(d) for d in params.get("delays_s", [params.get("delay_s", 0.8)])]
    reply = tone(float(params.get("reply_s", 1.0)))
    await greet(ws, state)
    with contextlib.suppress(ConnectionClosed):
        turn = 0
        while (heard_end := await next_turn_end(state, reader)) is not None:
            target = heard_end + FRAME_S + delays[turn % len(delays)]
            turn += 1
            await asyncio.sleep(max(0.0, target - time.perf_counter()))
            achieved_ms = (time.perf_counter() - heard_end - FRAME_S) * 1000
            await ws.send(json.dumps({"event": "agent_timing", "latency_ms": achieved_ms}))
            await send_paced(ws, state.sid, reply)


ECHO_TURNS = 6  # caller turns the echo agent answers before it hangs up
ECHO_GREETING = "Hello! How can I help you today?"


class EchoSession:
    """The echo agent as a text session: parrots each caller turn, hangs up after ``turns``."""

    def __init__(self, turns: int = ECHO_TURNS) -> None:
        self.turns, self.answered = turns, 0

    def greet(self) -> AgentReply:
        return AgentReply(text=ECHO_GREETING)

    def respond(self, heard: str) -> AgentReply:
        self.answered += 1
        echo = f"I heard: {heard.strip() or '...'}"
        if self.answered >= self.turns:
            return AgentReply(text=f"{echo} Goodbye!", kind="closing", end_call=True)
        return AgentReply(text=echo)


@FAULT_AGENTS.register("echo")
async def echo(ws: ServerConnection, params: dict[str, Any]) -> None:
    """Over the wire it has no recogniser: it says (``agent_text``) and plays (a tone) its
    echo of each turn, then sends ``end_call`` after ``turns`` turns."""
    state = CallState(endpoint_ms=int(params.get("endpoint_ms", 700)))
    reader = _reader(ws, state)
    session = EchoSession(int(params.get("turns", ECHO_TURNS)))
    await greet(ws, state)
    with contextlib.suppress(ConnectionClosed):
        while await next_turn_end(state, reader) is not None:
            await asyncio.sleep(0.5)
            reply = session.respond("")
            text = {"event": "agent_text", "streamSid": state.sid, "kind": "response"}
            await ws.send(json.dumps(text | {"text": reply.text}))
            await send_paced(ws, state.sid, tone(1.0))
            if reply.end_call:
                await ws.send(
                    json.dumps({"event": "end_call", "streamSid": state.sid, "reason": "goodbye"})
                )
                break
        await reader


@asynccontextmanager
async def serve_fault_agent(
    kind: str, host: str = "127.0.0.1", **params: Any
) -> AsyncIterator[str]:
    """Serve the named agent on a free loopback port; yields its ws:// URL."""
    handler = FAULT_AGENTS.get(kind)

    async def on_connect(ws: ServerConnection) -> None:
        with contextlib.suppress(ConnectionClosed, asyncio.CancelledError):
            await handler(ws, params)

    async with serve(on_connect, host, 0, max_size=2**22) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://{host}:{port}"


__all__ = ["FAULT_AGENTS", "FRAME_BYTES", "serve_fault_agent", "tone"]
