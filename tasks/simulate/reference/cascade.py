"""The reference agent as a real voice cascade, served on loopback.

VAD endpointing -> STT -> :class:`ReferencePolicy` -> TTS, speaking the protocol of
``docs/agent-protocol.md`` as a WebSocket server. One connection is one call. All CPU
work (recognition, synthesis, the policy and its tool calls) runs off the event loop,
and all of it is charged to the call's :class:`ComputeMeter`, which the virtual clock
times the agent by: thread CPU time for local work, wall time for a policy whose session
says ``compute_kind = "wall"`` (a remote model: there the waiting is the latency).
Synthesis runs in eSpeak's helper process (byte-reproducibility), so what is charged
for it is this side's share: the request, the reply and its decoding.

It also answers the harness's ``sync`` ticks (the virtual-clock extension): a sync is
echoed only after every earlier message has been handled, so the time the harness waits
for the echo is exactly the agent's processing time.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from perturbations.audio import Clip, VoiceSpec
from tasks.simulate.meter import ComputeKind, ComputeMeter
from tasks.simulate.reference.policy import ReferencePolicy
from tasks.simulate.voices import agent_recognizer, speakable
from tasks.simulate.wire import protocol as wire
from tasks.voice.recognizer_pool import POOL, content_key
from tasks.voice.stt import Expectation, Recognizer
from tasks.voice.telephony import FRAME_BYTES, WIRE_RATE, to_wire, wire_samples
from tasks.voice.tts import synthesize
from tasks.voice.vad import EnergyVAD, VadConfig, VadEvent

FRAME_S = 0.02


class CascadeSettings(BaseModel):
    """Tuning of the reference cascade (part of a reference "system")."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    endpoint_silence_ms: int = Field(
        default=600, ge=100, le=3000, description="Silence that ends a caller turn"
    )
    min_speech_ms: int = Field(
        default=250, ge=0, le=2000, description="Shorter bursts are noise, not a turn"
    )
    preroll_ms: int = Field(default=200, ge=0, le=1000, description="Audio kept before speech")
    # An eSpeak "mm-hmm" is voiced for up to ~0.55 s on the line; a barge-in is a sentence.
    barge_in_ms: int = Field(
        default=800,
        ge=0,
        le=3000,
        description="Caller speech over ours lasting this long is a barge-in (we stop and "
        "answer it); shorter is a backchannel ('mm-hmm'), neither a turn nor a reason to stop",
    )
    yield_to_caller: bool = Field(
        default=True,
        description="Stop speaking when the caller barges in (False: the never_yield fault)",
    )


class CascadeSession:
    """One call of a cascade agent (the reference policy, or any text agent session)."""

    def __init__(
        self,
        policy: Any,
        recognizer: Recognizer,
        voice: VoiceSpec,
        settings: CascadeSettings,
        meter: ComputeMeter | None = None,
    ) -> None:
        self.policy = policy
        self.meter = meter or ComputeMeter()
        self.policy_kind = policy_compute_kind(policy)
        self.recognizer = recognizer
        self.voice = voice
        self.settings = settings
        self.vad = EnergyVAD(VadConfig(hangover_ms=settings.endpoint_silence_ms))
        self.heard: list[np.ndarray] = []
        self.stream_sid = ""
        self.outstanding: set[str] = set()
        self.replies = 0
        self.speech_start: float | None = None
        # Caller speech that began while we were speaking: a barge-in once it lasts
        # ``barge_in_ms``, a backchannel if it ends sooner.
        self.over_us = False
        self.yielded = False

    async def run(self, ws: ServerConnection) -> None:
        try:
            async for raw in ws:
                message = wire.parse_caller_message(raw)
                if isinstance(message, wire.ProtocolError):
                    await ws.close(1002, message.reason[:120])
                    return
                if not await self._handle(ws, message):
                    return
        except ConnectionClosed:
            return

    async def _handle(self, ws: ServerConnection, message: Any) -> bool:
        if isinstance(message, wire.Start):
            self.stream_sid = message.streamSid
            greeting = self.meter.call(self.policy_kind, self.policy.greet)
            await self._speak(ws, greeting.text)
        elif isinstance(message, wire.Media):
            await self._hear(ws, message.media.audio())
        elif isinstance(message, wire.Mark):
            self.outstanding.discard(message.mark.name)
        elif isinstance(message, wire.Sync):
            await ws.send(
                wire.encode(wire.Sync(event="sync", streamSid=self.stream_sid, sync=message.sync))
            )
        elif isinstance(message, wire.Stop | wire.EndCall):
            return False
        return True

    async def _hear(self, ws: ServerConnection, audio: bytes) -> None:
        # Endpointing is the agent's work too; it runs inline (no await), so metering it
        # on the event loop's thread charges exactly this frame's decoding and VAD.
        for event in self.meter.call("cpu", self._endpoint, audio):
            if event.kind == "speech_start":
                self.speech_start = event.time_s
                self.over_us, self.yielded = bool(self.outstanding), False
            elif self.speech_start is not None:
                start, self.speech_start = self.speech_start, None
                if self.over_us and not self.yielded:
                    continue  # a backchannel over our speech: keep talking, do not answer
                if (event.time_s - start) * 1000 >= self.settings.min_speech_ms:
                    await self._answer(ws, start, event.time_s)
        if self.speech_start is not None and self.over_us and not self.yielded:
            await self._maybe_yield(ws, self.speech_start)

    async def _maybe_yield(self, ws: ServerConnection, start: float) -> None:
        """The caller has talked over us for ``barge_in_ms``: a barge-in, so stop speaking."""
        # Voiced time, not time since the start: the endpointing hangover is no speech.
        if (self.vad.last_speech_s - start) * 1000 < self.settings.barge_in_ms:
            return
        self.yielded = True
        if self.outstanding and self.settings.yield_to_caller:
            self.outstanding.clear()
            await ws.send(wire.encode(wire.Clear(event="clear", streamSid=self.stream_sid)))

    def _endpoint(self, audio: bytes) -> list[VadEvent]:
        samples = wire_samples(audio)
        self.heard.append(samples)
        return self.vad.process_samples(samples, WIRE_RATE)

    def _utterance(self, start_s: float, end_s: float) -> Clip:
        audio = np.concatenate(self.heard) if self.heard else np.zeros(1, np.float32)
        lo = max(0, int((start_s - self.settings.preroll_ms / 1000) * WIRE_RATE))
        hi = min(audio.size, int((end_s + 0.1) * WIRE_RATE))
        return Clip(audio[lo : max(hi, lo + 1)].astype(np.float32), WIRE_RATE)

    async def _answer(self, ws: ServerConnection, start_s: float, end_s: float) -> None:
        clip = self.meter.call("cpu", self._utterance, start_s, end_s)
        expect: Expectation = getattr(self.policy, "expectation", None)
        text = await self.meter.run_cpu(self.recognizer.recognize, clip, expect)
        await self._send_text(ws, text, "transcript")
        reply = await self.meter.run(self.policy_kind, self.policy.respond, text)
        await self._speak(ws, reply.text)

    async def _speak(self, ws: ServerConnection, text: str) -> None:
        spoken = self.meter.call("cpu", speakable, text)
        clip = await self.meter.run_cpu(synthesize, spoken, self.voice)
        payload = await self.meter.run_cpu(to_wire, clip)
        await self._send_text(ws, spoken, "response")
        for message in self.meter.call("cpu", self._media_messages, payload):
            await ws.send(message)
        self.replies += 1
        name = f"reply-{self.replies}"
        self.outstanding.add(name)
        mark = wire.Mark(event="mark", streamSid=self.stream_sid, mark=wire.MarkInfo(name=name))
        await ws.send(wire.encode(mark))

    def _media_messages(self, payload: bytes) -> list[str]:
        return [
            wire.media_message(self.stream_sid, payload[i : i + FRAME_BYTES])
            for i in range(0, len(payload), FRAME_BYTES)
        ]

    async def _send_text(
        self, ws: ServerConnection, text: str, kind: Literal["response", "transcript"]
    ) -> None:
        message = wire.AgentText(
            event="agent_text", streamSid=self.stream_sid, text=text, kind=kind
        )
        await ws.send(wire.encode(message))


def policy_compute_kind(policy: Any) -> ComputeKind:
    """How a session's turns are charged: ``compute_kind`` if it says, else local CPU."""
    kind = getattr(policy, "compute_kind", "cpu")
    if kind not in ("cpu", "wall"):
        raise ValueError(f"compute_kind must be 'cpu' or 'wall', got {kind!r}")
    return "wall" if kind == "wall" else "cpu"


@contextlib.asynccontextmanager
async def serve_cascade(ctx: Any, session: Any) -> AsyncIterator[str]:
    """Serve one call of a cascade around ``session`` (anything with ``greet()`` and
    ``respond(heard)`` returning an ``AgentReply``) on 127.0.0.1; yields its ws:// URL.

    Its work is charged to ``ctx.meter`` (engaged here) when the harness provides one."""
    config = ctx.config
    meter: ComputeMeter = getattr(ctx, "meter", None) or ComputeMeter()
    meter.engage()
    settings = CascadeSettings(**config.agent_params.get("cascade", {}))
    # The agent's ears depend on its domain and configuration only; reused across calls
    # once reset (tasks.voice.recognizer_pool).
    agent_key = content_key(ctx.scenario.domain, ctx.scenario.agent.model_dump_json())
    ears_key = ("agent", agent_key, config.agent_stt, str(config.cache_dir), config.seed)
    build = functools.partial(
        agent_recognizer, ctx.scenario, config.agent_stt, config.cache_dir, config.seed
    )
    recognizer = await asyncio.to_thread(POOL.checkout, ears_key, build)

    async def handler(ws: ServerConnection) -> None:
        await CascadeSession(session, recognizer, config.agent_voice, settings, meter).run(ws)

    try:
        async with serve(
            handler, "127.0.0.1", 0, compression=None, max_size=wire.MAX_MESSAGE_BYTES
        ) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            yield f"ws://127.0.0.1:{port}/ws"
    finally:
        # Waits for a decode a cancelled handler left running before the reset.
        await asyncio.to_thread(POOL.release, ears_key, recognizer)


@contextlib.asynccontextmanager
async def serve_reference(ctx: Any) -> AsyncIterator[str]:
    """Serve the reference cascade for one trial; yields its ws:// URL."""
    async with serve_cascade(ctx, ReferencePolicy(ctx.scenario, ctx.tools)) as url:
        yield url
