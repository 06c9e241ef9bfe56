"""What the realtime fakes share: ears (VAD turns + PocketSphinx), mouth (eSpeak), the
brain's chat history, usage counting, and a WebSocket server on a background thread.

The fakes really listen and really speak: a caller turn is what an energy VAD finds in
the audio the client streams (:class:`tasks.voice.vad.EnergyVAD`, ended by
``ENDPOINT_MS`` of silence, as the reference cascade does), its words are what the
agent-side recogniser the test hands in decodes, and an answer is eSpeak speech of the
brain's reply in the encoding the session asked for. The brain is
``tasks.systems.standins.brain.next_message`` (or any ``messages -> message`` callable a test
passes) over an OpenAI chat-completions history kept per WebSocket session.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from perturbations.audio import Clip, VoiceSpec
from tasks.simulate.voices import speakable
from tasks.voice.stt import Expectation, Recognizer
from tasks.voice.telephony import resample, ulaw_decode, ulaw_encode
from tasks.voice.tts import synthesize
from tasks.voice.vad import EnergyVAD, VadConfig

Brain = Callable[[list[dict[str, Any]]], dict[str, Any]]
Encoding = Literal["pcm16", "g711_ulaw"]

ENDPOINT_MS = 600  # silence that ends a caller turn (tasks.simulate.reference.cascade's default)
MIN_SPEECH_MS = 250  # shorter bursts are noise, not a turn
PREROLL_MS = 200
# The reference cascade's agent voice (tasks.simulate.config.SimulationConfig.agent_voice).
AGENT_VOICE = VoiceSpec(voice="en-us+klatt4")
CHUNK_S = 0.1  # audio per outgoing delta
HEAD_START_S = 1.0  # sent at once; the rest is paced at real time so a caller can barge in


def decode_audio(payload: bytes, encoding: Encoding, rate: int) -> Clip:
    if encoding == "g711_ulaw":
        return Clip.from_int16(ulaw_decode(payload), 8000)
    return Clip.from_int16(np.frombuffer(payload, dtype="<i2"), rate)


def encode_audio(clip: Clip, encoding: Encoding, rate: int) -> bytes:
    if encoding == "g711_ulaw":
        return ulaw_encode(resample(clip, 8000).to_int16()).tobytes()
    return resample(clip, rate).to_int16().astype("<i2").tobytes()


@dataclass
class TurnEvent:
    kind: Literal["start", "stop"]
    at_ms: int
    clip: Clip | None = None  # the turn's audio, on "stop"


class Ears:
    """Caller turns found by a VAD on the received stream (any one sample rate)."""

    def __init__(self, recognizer: Recognizer) -> None:
        self.recognizer = recognizer
        self.received_s = 0.0
        self.reset()

    def reset(self) -> None:
        self.vad = EnergyVAD(VadConfig(hangover_ms=ENDPOINT_MS))
        self.buffer: list[np.ndarray] = []
        self.rate: int | None = None
        self.start_s: float | None = None
        self.first_start_s: float | None = None  # the first speech since the last reset
        self.offset_s = self.received_s
        self.held: Clip | None = None  # manual turn mode: the last turn, until committed

    def flush_turn(self) -> Clip | None:
        """Manual commit: the held turn, else what was received since the last reset, from
        the first speech on. The seconds of silence before it (the caller listening to the
        agent) are cut: a decoder fed them first adapts its cepstral mean to silence and
        mishears the speech after them."""
        clip = self.held
        if clip is None and self.buffer and self.rate is not None:
            since = self.received_s - self.offset_s
            if self.first_start_s is not None:
                clip = self._cut(self.first_start_s, since)
            if clip is None:
                clip = Clip(np.concatenate(self.buffer).astype(np.float32), self.rate)
        self.reset()
        return clip

    def feed(self, clip: Clip) -> list[TurnEvent]:
        self.rate = clip.rate
        self.received_s += clip.duration_s
        self.buffer.append(clip.samples)
        keep = int(clip.rate * 30)  # bounded memory on a long silent line
        events: list[TurnEvent] = []
        for event in self.vad.process(clip):
            at_ms = int((self.offset_s + event.time_s) * 1000)
            if event.kind == "speech_start":
                self.start_s = event.time_s
                if self.first_start_s is None:
                    self.first_start_s = event.time_s
                events.append(TurnEvent("start", at_ms))
            elif self.start_s is not None:
                turn = self._cut(self.start_s, event.time_s)
                self.start_s = None
                if turn is not None:
                    events.append(TurnEvent("stop", at_ms, turn))
        if self.start_s is None and sum(b.size for b in self.buffer) > keep:
            self._drop_all_but(keep)
            self.first_start_s = None  # what it marked is gone
        return events

    def _cut(self, start_s: float, end_s: float) -> Clip | None:
        if (end_s - start_s) * 1000 < MIN_SPEECH_MS or self.rate is None:
            return None
        audio = np.concatenate(self.buffer)
        base = self.received_s - self.offset_s - audio.size / self.rate
        lo = max(0, int((start_s - PREROLL_MS / 1000 - base) * self.rate))
        hi = max(lo, int((end_s - base) * self.rate))
        return Clip(audio[lo:hi].astype(np.float32), self.rate)

    def _drop_all_but(self, keep: int) -> None:
        audio = np.concatenate(self.buffer)
        self.buffer = [audio[-keep:]]

    async def transcribe(self, clip: Clip, expect: Expectation = None) -> str:
        return await asyncio.to_thread(self.recognizer.recognize, clip, expect)


async def speak(text: str, voice: VoiceSpec = AGENT_VOICE) -> Clip:
    """eSpeak speech of ``text`` as a speaker says it (codes spelled, numbers in words)."""
    return await asyncio.to_thread(synthesize, speakable(text), voice)


def chunks(clip: Clip, seconds: float = CHUNK_S) -> list[Clip]:
    n = max(1, int(clip.rate * seconds))
    return [Clip(clip.samples[i : i + n], clip.rate) for i in range(0, clip.n_samples, n)]


async def paced(clips: list[Clip], send: Callable[[Clip], Awaitable[None]]) -> None:
    """Send ``clips`` with a head start, then no faster than real time."""
    began = time.monotonic()
    sent_s = 0.0
    for clip in clips:
        ahead = sent_s - HEAD_START_S - (time.monotonic() - began)
        if ahead > 0:
            await asyncio.sleep(ahead)
        await send(clip)
        sent_s += clip.duration_s


def text_tokens(text: str) -> int:
    """About four characters a token (OpenAI's rule of thumb for English)."""
    return math.ceil(len(text) / 4) if text else 0


@dataclass
class Dialogue:
    """One session's history in OpenAI chat-completions form, and what it has cost."""

    brain: Brain
    messages: list[dict[str, Any]] = field(default_factory=list)
    input_audio_s: float = 0.0  # caller audio the model has taken in (whole history)

    def instruct(self, text: str) -> None:
        if text:
            self.messages = [m for m in self.messages if m["role"] != "system"]
            self.messages.insert(0, {"role": "system", "content": text})

    def user(self, text: str, audio_s: float = 0.0) -> None:
        self.input_audio_s += audio_s
        self.messages.append({"role": "user", "content": text})

    def tool_result(self, call_id: str, output: str) -> None:
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": output})

    def expectation(self) -> Expectation:
        """What the agent's own last question asked for: a spelled code after "spell"
        (the reference cascade passes its policy's expectation to its recogniser too), or
        what the brain expects when it can say (``brain.expectation(messages)``)."""
        expect = getattr(self.brain, "expectation", None)
        if callable(expect):
            return expect([dict(m) for m in self.messages])  # type: ignore[no-any-return]
        said = [m for m in self.messages if m["role"] == "assistant" and m.get("content")]
        return "code" if said and "spell" in str(said[-1]["content"]).lower() else None

    def pending_tool_calls(self) -> set[str]:
        called = {
            c["id"]
            for m in self.messages
            if m["role"] == "assistant"
            for c in m.get("tool_calls") or []
        }
        answered = {m["tool_call_id"] for m in self.messages if m["role"] == "tool"}
        return called - answered

    async def reply(self) -> dict[str, Any]:
        message = await asyncio.to_thread(self.brain, [dict(m) for m in self.messages])
        self.messages.append(message)
        return message

    def context_text_tokens(self) -> int:
        return sum(
            text_tokens(str(m.get("content") or ""))
            + sum(text_tokens(json.dumps(c["function"])) for c in m.get("tool_calls") or [])
            for m in self.messages
        )


class ServerThread:
    """A WebSocket server (``websockets``) on its own event loop in a daemon thread."""

    def __init__(
        self,
        handler: Callable[[Any], Awaitable[None]],
        host: str = "127.0.0.1",
        ssl_context: Any = None,
        **serve_options: Any,
    ) -> None:
        self.handler = handler
        self.host = host
        self.ssl_context = ssl_context
        # More ``websockets.asyncio.server.serve`` options, e.g. ``process_request`` for a
        # stand-in that answers a rejected key with the provider's HTTP 401 at the handshake.
        self.serve_options = serve_options
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="realtime-fake")

    def start(self) -> ServerThread:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake realtime server did not start within 10 s")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        from websockets.asyncio.server import serve

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with serve(
            self.handler, self.host, 0, ssl=self.ssl_context, max_size=2**24, **self.serve_options
        ) as server:
            self.port = next(iter(server.sockets)).getsockname()[1]
            self._ready.set()
            await self._stop.wait()
            server.close()
            with contextlib.suppress(Exception):
                await server.wait_closed()
