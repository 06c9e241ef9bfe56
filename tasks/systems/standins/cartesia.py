"""A local stand-in of Cartesia's WebSocket APIs: Sonic TTS and Ink realtime STT.

Follows the published API, version ``2026-03-01`` (the ``Cartesia-Version`` Pipecat 1.14
pins), as Pipecat's own services speak it (they use raw ``websockets``, not the SDK):

- TTS, ``/tts/websocket`` (https://docs.cartesia.ai/2026-03-01/api-reference/tts/websocket;
  ``pipecat.services.cartesia.tts.CartesiaTTSService``, whose ``url`` is the whole
  endpoint). A generation request is JSON: ``model_id`` (``sonic-3``), ``transcript``,
  ``voice`` ``{"mode": "id", "id"}``, ``output_format`` ``{"container": "raw",
  "encoding": "pcm_s16le" | "pcm_f32le" | "pcm_mulaw", "sample_rate"}``, ``context_id``,
  ``continue``, ``add_timestamps``, ``max_buffer_delay_ms``, ``flush``; ``{"context_id",
  "cancel": true}`` cancels a context. Answers, each with its ``context_id``:
  ``timestamps`` (``word_timestamps`` ``{words, start, end}``, seconds from the context's
  first audio) when asked, ``chunk`` (base64 ``data``, ``step_time``), ``flush_done``,
  ``done``, ``error`` (``title``, ``message``, ``error_code``, ``status_code``). Text
  given with ``continue: true`` is held until it ends a sentence (or the request sets
  ``max_buffer_delay_ms: 0``, as Pipecat's sentence mode does), then spoken.
- STT, ``/stt/websocket`` (https://docs.cartesia.ai/api-reference/stt/websocket,
  "Realtime Speech-to-Text (Manual)"; ``pipecat.services.cartesia.stt.CartesiaSTTService``
  builds ``{scheme}://{host}/stt/websocket?model=ink-whisper&language=en&encoding=pcm_s16le&
  sample_rate=16000`` from ``base_url``). Binary frames are audio; the text commands
  ``finalize`` (transcribe what was heard since the last one: a ``transcript`` with
  ``is_final``, ``text``, ``duration``, ``language``, ``words`` ``[{word, start, end}]``,
  then ``flush_done``) and ``done`` / ``close`` (the same, then ``done``, then the socket
  closes).

Both authenticate with ``X-API-Key`` (Pipecat's header), ``Authorization: Bearer``, or the
``api_key`` / ``access_token`` query parameter, and need ``Cartesia-Version`` (header or
``cartesia_version``). A missing key, or the key ``reject``, is refused at the handshake
with Cartesia's HTTP error object (``{"error_code", "title", "message", "request_id"}``,
status 401); a missing version or unsupported audio format with a 400.

What it hears and says: the caller's words are what the agent-side recogniser decodes of
the speech the energy VAD of :mod:`.audio` found (lower case, no punctuation; word times
are estimates); the voice is eSpeak's agent voice whatever the Sonic voice id. Usage is
counted as Cartesia bills it (TTS characters, STT audio seconds) on the session objects;
the protocol itself reports none.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from perturbations.audio import Clip
from tasks.systems.standins.audio import ServerThread
from tasks.systems.standins.ws_audio import (
    FLOAT32,
    MULAW,
    PCM16,
    REJECTED_KEY,
    StreamEars,
    byte_chunks,
    decode_pcm,
    encode_pcm,
    http_error,
    query,
    spoken,
    word_times,
)
from tasks.voice.stt import Recognizer

ENCODINGS = {"pcm_s16le": PCM16, "pcm_f32le": FLOAT32, "pcm_mulaw": MULAW}
TTS_PATH, STT_PATH = "/tts/websocket", "/stt/websocket"
CHUNK_S = 0.1
SENTENCE_END = re.compile(r"[.!?;:]\s*$")


def _key(request: Any, params: dict[str, str]) -> str | None:
    auth = request.headers.get("Authorization", "")
    bearer = auth[7:].strip() if auth.lower().startswith("bearer ") else ""
    return (
        request.headers.get("X-API-Key")
        or bearer
        or params.get("api_key")
        or params.get("access_token")
        or None
    )


def _refuse(connection: Any, status: int, title: str, message: str) -> Any:
    body = {"error_code": None, "title": title, "message": message, "request_id": _id()}
    return http_error(connection, status, body)


def _id() -> str:
    return str(uuid.uuid4())


def check_handshake(connection: Any, request: Any) -> Any:
    """Cartesia's refusals before the upgrade: path, key, version, STT audio format."""
    path = request.path.split("?")[0]
    params = query(request.path)
    if path not in (TTS_PATH, STT_PATH):
        return _refuse(connection, 404, "Not found", f"no such endpoint {path}")
    key = _key(request, params)
    if key is None or key == REJECTED_KEY:
        return _refuse(connection, 401, "Unauthorized", "Invalid or missing API key")
    if not (request.headers.get("Cartesia-Version") or params.get("cartesia_version")):
        return _refuse(connection, 400, "Missing version", "Cartesia-Version is required")
    if path == STT_PATH:
        if not params.get("model"):
            return _refuse(connection, 400, "Invalid model", "model is required")
        if params.get("encoding") not in ENCODINGS or not params.get("sample_rate"):
            return _refuse(connection, 400, "Invalid audio format", "encoding/sample_rate")
    return None


class SttSession:
    """One ``/stt/websocket`` stream (manual finalization)."""

    def __init__(self, ws: ServerConnection, recognizer: Recognizer, params: dict[str, str]):
        self.ws = ws
        self.encoding = ENCODINGS[params["encoding"]]
        self.rate = int(params["sample_rate"])
        self.language = params.get("language", "en")
        self.model = params["model"]
        self.request_id = _id()
        self.ears = StreamEars(recognizer)
        self.heard: list[tuple[float, Clip]] = []  # VAD turns not yet finalized
        self.jobs: asyncio.Queue[tuple[list[tuple[float, Clip]], str]] = asyncio.Queue()
        self.audio_s = 0.0  # what Cartesia bills STT by
        self.transcripts: list[dict[str, Any]] = []  # what was sent, for the tests
        self.commands: list[str] = []

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def run(self) -> None:
        worker = asyncio.create_task(self.answer())
        try:
            async for raw in self.ws:
                if isinstance(raw, bytes):
                    self.hear(raw)
                    continue
                command = raw.strip().strip('"')
                self.commands.append(command)
                if command in ("finalize", "done", "close"):
                    await self.jobs.put((self.take(), command))
                    if command != "finalize":
                        await worker  # the last transcript, then ``done``
                        await self.ws.close()
                        break
                else:
                    await self.error(f"unknown command {raw[:100]!r}")
        except ConnectionClosed:
            pass
        finally:
            worker.cancel()

    def hear(self, raw: bytes) -> None:
        clip = decode_pcm(raw, self.encoding, self.rate)
        self.audio_s += clip.duration_s
        for event in self.ears.feed(clip):
            if event.kind == "stop" and event.clip is not None:
                start = max(0.0, event.at_ms / 1000 - event.clip.duration_s)
                self.heard.append((start, event.clip))

    def take(self) -> list[tuple[float, Clip]]:
        """Everything heard since the last finalize, the open turn cut at this point."""
        pieces, self.heard = self.heard, []
        cut = self.ears.finalize()
        return [*pieces, cut] if cut is not None else pieces

    async def answer(self) -> None:
        while True:
            pieces, command = await self.jobs.get()
            texts: list[str] = []
            words: list[dict[str, Any]] = []
            for start, clip in pieces:
                text = await self.ears.transcribe(clip)
                texts.append(text)
                words += [
                    {"word": w, "start": s, "end": e} for w, s, e in word_times(text, clip, start)
                ]
            text = " ".join(t for t in texts if t)
            if text:
                message = {
                    "type": "transcript",
                    "is_final": True,
                    "request_id": self.request_id,
                    "text": text,
                    "duration": round(sum(c.duration_s for _, c in pieces), 3),
                    "language": self.language,
                    "words": words,
                }
                self.transcripts.append(message)
                await self.send(message)
            if command == "finalize":
                await self.send({"type": "flush_done", "request_id": self.request_id})
            else:
                await self.send({"type": "done", "request_id": self.request_id})
                return

    async def error(self, message: str) -> None:
        await self.send(
            {
                "type": "error",
                "title": "Invalid request",
                "message": message,
                "error_code": None,
                "status_code": 400,
                "request_id": self.request_id,
            }
        )


@dataclass
class Context:
    """One TTS context: its pending work, in order, and where its audio has got to."""

    context_id: str
    jobs: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    held: str = ""  # text given with continue=true, not yet a sentence
    audio_s: float = 0.0
    worker: asyncio.Task[None] | None = None


class TtsSession:
    """One ``/tts/websocket`` connection, any number of contexts."""

    def __init__(self, ws: ServerConnection) -> None:
        self.ws = ws
        self.contexts: dict[str, Context] = {}
        self.characters = 0  # what Cartesia bills TTS by
        self.requests: list[dict[str, Any]] = []  # every request, for the tests
        self.flushes = 0

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def run(self) -> None:
        try:
            async for raw in self.ws:
                try:
                    request = json.loads(raw)
                except ValueError:
                    await self.error("", "Invalid JSON", "the request is not JSON")
                    continue
                self.requests.append(request)
                await self.handle(request)
        except ConnectionClosed:
            pass
        finally:
            for context in self.contexts.values():
                if context.worker is not None:
                    context.worker.cancel()

    async def handle(self, request: dict[str, Any]) -> None:
        context_id = str(request.get("context_id") or _id())
        if request.get("cancel"):
            context = self.contexts.pop(context_id, None)
            if context is not None and context.worker is not None:
                context.worker.cancel()
            return
        problem = _invalid(request)
        if problem is not None:
            await self.error(context_id, *problem)
            return
        context = self.contexts.get(context_id)
        if context is None:
            context = self.contexts[context_id] = Context(context_id)
            context.worker = asyncio.create_task(self.work(context))
        context.held += str(request.get("transcript") or "")
        more = bool(request.get("continue", False))
        now = request.get("max_buffer_delay_ms") == 0 or SENTENCE_END.search(context.held)
        if context.held.strip() and (now or not more):
            await context.jobs.put({"speak": context.held, **request})
            context.held = ""
        if request.get("flush"):
            await context.jobs.put({"flush": True})
        if not more:
            await context.jobs.put({"done": True})

    async def work(self, context: Context) -> None:
        while True:
            job = await context.jobs.get()
            where = {"status_code": 206, "context_id": context.context_id}
            if "speak" in job:
                await self.speak(context, job)
            elif job.get("flush"):
                self.flushes += 1
                await self.send(
                    {"type": "flush_done", "done": False, "flush_done": True}
                    | {"flush_id": self.flushes, **where}
                )
            else:
                await self.send({"type": "done", "done": True, **where})
                self.contexts.pop(context.context_id, None)
                return

    async def speak(self, context: Context, job: dict[str, Any]) -> None:
        text = str(job["speak"])
        began = time.monotonic()
        clip = await spoken(text)
        self.characters += len(text)
        if clip is None:
            return
        where = {"done": False, "status_code": 206, "context_id": context.context_id}
        if job.get("add_timestamps"):
            times = word_times(text, clip, context.audio_s)
            stamps = {
                "words": [w for w, _, _ in times],
                "start": [s for _, s, _ in times],
                "end": [e for _, _, e in times],
            }
            await self.send({"type": "timestamps", **where, "word_timestamps": stamps})
        fmt = job["output_format"]
        encoding, rate = ENCODINGS[fmt["encoding"]], int(fmt["sample_rate"])
        step_ms = round((time.monotonic() - began) * 1000)
        for piece in byte_chunks(encode_pcm(clip, encoding, rate), rate, encoding, CHUNK_S):
            data = base64.b64encode(piece).decode()
            await self.send({"type": "chunk", "data": data, "step_time": step_ms, **where})
        context.audio_s += clip.duration_s

    async def error(self, context_id: str, title: str, message: str) -> None:
        await self.send(
            {
                "type": "error",
                "done": True,
                "title": title,
                "message": message,
                "error_code": None,
                "status_code": 400,
                "context_id": context_id,
            }
        )


def _invalid(request: dict[str, Any]) -> tuple[str, str] | None:
    """What makes a generation request invalid (title, message), or None."""
    if not request.get("model_id"):
        return "Invalid model", "model_id is required"
    voice = request.get("voice") or {}
    if voice.get("mode", "id") != "id" or not voice.get("id"):
        return "Invalid voice", "voice must be {mode: id, id}"
    fmt = request.get("output_format") or {}
    if fmt.get("container", "raw") != "raw" or fmt.get("encoding") not in ENCODINGS:
        return "Invalid output format", f"unsupported output_format {fmt}"
    if not isinstance(fmt.get("sample_rate"), int) or fmt["sample_rate"] <= 0:
        return "Invalid output format", "output_format.sample_rate must be a positive integer"
    return None


class FakeCartesia:
    """Cartesia on a loopback port: ``with FakeCartesia(recognizer) as fake``; give
    ``CartesiaSTTService`` ``base_url=fake.base_url`` (``ws://127.0.0.1:PORT``) and
    ``CartesiaTTSService`` ``url=fake.tts_url`` (``.../tts/websocket``)."""

    def __init__(self, recognizer: Recognizer) -> None:
        self.recognizer = recognizer
        self.stt_sessions: list[SttSession] = []
        self.tts_sessions: list[TtsSession] = []
        self.server = ServerThread(self._handle, process_request=check_handshake)

    async def _handle(self, ws: ServerConnection) -> None:
        request = ws.request
        assert request is not None  # the handshake has completed
        if request.path.startswith(STT_PATH):
            stt = SttSession(ws, self.recognizer, query(request.path))
            self.stt_sessions.append(stt)
            await stt.run()
        else:
            tts = TtsSession(ws)
            self.tts_sessions.append(tts)
            with contextlib.suppress(ConnectionClosed):
                await tts.run()

    @property
    def base_url(self) -> str:
        return f"ws://127.0.0.1:{self.server.port}"

    @property
    def tts_url(self) -> str:
        return f"{self.base_url}{TTS_PATH}"

    def __enter__(self) -> FakeCartesia:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
