"""A local stand-in of Deepgram's streaming APIs: live transcription and TTS (WebSocket).

Follows the published API (https://developers.deepgram.com/reference/speech-to-text/listen-streaming
and .../text-to-speech/speak-streaming) as the official ``deepgram-sdk`` (7.17) builds and
parses it, which is what Pipecat 1.14 drives:

- ``GET /v1/listen`` upgraded to a WebSocket (``deepgram.listen.v1.raw_client.connect``:
  ``{environment.production}/v1/listen?model=nova-3&encoding=linear16&sample_rate=16000&
  channels=1&interim_results=true&punctuate=true&...``). Binary frames are audio of the
  query's ``encoding`` (``linear16``, ``mulaw``) at ``sample_rate``; text frames are the
  control messages ``KeepAlive``, ``Finalize``, ``CloseStream`` (``ListenV1KeepAlive``,
  ``ListenV1Finalize``, ``ListenV1CloseStream``). Answers: ``Results`` (``ListenV1Results``:
  ``channel.alternatives[].transcript/confidence/words``, ``is_final``, ``speech_final``,
  ``from_finalize``, ``start``, ``duration``, ``metadata.request_id/model_info/model_uuid``),
  ``SpeechStarted`` when ``vad_events=true``, ``UtteranceEnd`` when ``utterance_end_ms`` is
  set, ``Metadata`` (``ListenV1Metadata``, with the audio ``duration`` billed and its
  ``sha256``) after ``CloseStream``, ``Error`` for a message it cannot parse.
- ``GET /v1/speak`` upgraded to a WebSocket (Pipecat's ``DeepgramTTSService`` builds
  ``{base_url}/v1/speak?model={voice}&encoding=linear16&sample_rate=16000`` itself): text
  messages ``Speak`` (``{"type": "Speak", "text"}``), ``Flush``, ``Clear``, ``Close``;
  answers ``Metadata`` on connect (``SpeakV1Metadata``), binary audio of the requested
  encoding/rate, ``Flushed`` / ``Cleared`` with a ``sequence_id``.

Authentication is ``Authorization: Token KEY`` (the SDK's header; ``Bearer`` is accepted
too) or the ``token`` WebSocket subprotocol (``Sec-WebSocket-Protocol: token, KEY``). A
missing key, or the key ``reject``, is refused at the handshake with Deepgram's 401
(``{"err_code": "INVALID_AUTH", "err_msg": ..., "request_id"}`` and the ``dg-error`` header
Pipecat reports); an unsupported encoding with a 400 the same way.

What it hears and says: a caller turn is what the energy VAD of :mod:`.audio` finds in the
stream (ended by 600 ms of silence: an ``is_final``, ``speech_final`` result), or the
speech heard so far when the client sends ``Finalize`` (``from_finalize: true``); its words
are what the agent-side recogniser decodes (lower case, unpunctuated: ``punctuate`` and
``smart_format`` are accepted and not applied; word times are estimates). No interim
results are sent even with ``interim_results=true``. TTS speaks the flushed text with
eSpeak in the agent voice, whatever the Aura voice.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from perturbations.audio import Clip
from tasks.systems.standins.audio import ServerThread
from tasks.systems.standins.ws_audio import (
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

ENCODINGS = {"linear16": PCM16, "mulaw": MULAW}
DEFAULT_TTS_RATE = {"linear16": 24000, "mulaw": 8000}  # Deepgram's documented defaults
TTS_CHUNK_S = 0.1


def _key(request: Any) -> str | None:
    """The API key of a handshake: ``Authorization: Token|Bearer KEY`` or the ``token``
    subprotocol (``Sec-WebSocket-Protocol: token, KEY``)."""
    auth = request.headers.get("Authorization", "")
    scheme, _, value = auth.partition(" ")
    if scheme.lower() in ("token", "bearer") and value.strip():
        return value.strip()
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")]
    if len(offered) >= 2 and offered[0].lower() == "token" and offered[1]:
        return offered[1]
    return None


def _select_subprotocol(connection: Any, subprotocols: Any) -> str | None:
    return "token" if "token" in subprotocols else None


def _refuse(connection: Any, status: int, code: str, message: str) -> Any:
    body = {"err_code": code, "err_msg": message, "request_id": str(uuid.uuid4())}
    return http_error(connection, status, body, {"dg-error": message})


def check_handshake(connection: Any, request: Any) -> Any:
    """Deepgram's refusals before the upgrade: path, key, audio format."""
    path = request.path.split("?")[0]
    if path not in ("/v1/listen", "/v1/speak"):
        return _refuse(connection, 404, "NOT_FOUND", f"no such endpoint {path}")
    key = _key(request)
    if key is None or key == REJECTED_KEY:
        return _refuse(connection, 401, "INVALID_AUTH", "Invalid credentials.")
    params = query(request.path)
    encoding = params.get("encoding", "linear16")
    if encoding not in ENCODINGS:
        return _refuse(connection, 400, "Bad Request", f"unsupported encoding {encoding!r}")
    if path == "/v1/listen" and "encoding" in params and "sample_rate" not in params:
        return _refuse(connection, 400, "Bad Request", "raw audio needs sample_rate")
    return None


@dataclass
class Turn:
    start_s: float
    clip: Clip | None
    from_finalize: bool


class ListenSession:
    """One ``/v1/listen`` stream."""

    def __init__(self, ws: ServerConnection, recognizer: Recognizer, params: dict[str, str]):
        self.ws = ws
        self.params = params
        self.encoding = ENCODINGS[params.get("encoding", "linear16")]
        self.rate = int(params.get("sample_rate", "16000"))
        self.model = params.get("model", "base")
        self.request_id = str(uuid.uuid4())
        self.ears = StreamEars(recognizer)
        self.turns: asyncio.Queue[Turn | None] = asyncio.Queue()
        self.sha = hashlib.sha256()
        self.audio_s = 0.0
        self.results: list[dict[str, Any]] = []  # what was sent, for the tests
        self.received: list[str] = []  # control messages, for the tests

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def run(self) -> None:
        worker = asyncio.create_task(self.answer_turns())
        try:
            async for raw in self.ws:
                if isinstance(raw, bytes):
                    await self.hear(raw)
                elif not await self.control(raw):
                    break
            await self.turns.put(None)
            await worker
            await self.send(self.metadata())
            await self.ws.close()
        except ConnectionClosed:
            pass
        finally:
            worker.cancel()

    async def hear(self, raw: bytes) -> None:
        self.sha.update(raw)
        clip = decode_pcm(raw, self.encoding, self.rate)
        self.audio_s += clip.duration_s
        for event in self.ears.feed(clip):
            if event.kind == "start" and self.params.get("vad_events") == "true":
                await self.send(
                    {"type": "SpeechStarted", "channel": [0], "timestamp": event.at_ms / 1000}
                )
            elif event.kind == "stop" and event.clip is not None:
                start = event.at_ms / 1000 - event.clip.duration_s
                await self.turns.put(Turn(max(0.0, start), event.clip, False))

    async def control(self, raw: str) -> bool:
        """Handle one text message; False once the stream is closing."""
        try:
            kind = json.loads(raw).get("type")
        except (ValueError, AttributeError):
            kind = None
        self.received.append(str(kind))
        if kind == "Finalize":
            cut = self.ears.finalize()
            start, clip = cut if cut is not None else (self.ears.received_s, None)
            await self.turns.put(Turn(start, clip, True))
        elif kind == "CloseStream":
            cut = self.ears.finalize()
            if cut is not None:
                await self.turns.put(Turn(cut[0], cut[1], False))
            return False
        elif kind != "KeepAlive":
            await self.send(
                {
                    "type": "Error",
                    "variant": "SchemaError",
                    "description": "could not parse the client message",
                    "message": raw[:500],
                }
            )
        return True

    async def answer_turns(self) -> None:
        while (turn := await self.turns.get()) is not None:
            text = await self.ears.transcribe(turn.clip) if turn.clip is not None else ""
            await self.send(self.result(turn, text))
            if text and "utterance_end_ms" in self.params:
                end = turn.start_s + (turn.clip.duration_s if turn.clip else 0.0)
                await self.send(
                    {"type": "UtteranceEnd", "channel": [0, 1], "last_word_end": round(end, 3)}
                )

    def result(self, turn: Turn, text: str) -> dict[str, Any]:
        duration = turn.clip.duration_s if turn.clip is not None else 0.0
        words = (
            [
                {"word": w, "start": s, "end": e, "confidence": 0.9, "punctuated_word": w}
                for w, s, e in word_times(text, turn.clip, turn.start_s)
            ]
            if turn.clip is not None
            else []
        )
        message = {
            "type": "Results",
            "channel_index": [0, 1],
            "duration": round(duration, 3),
            "start": round(turn.start_s, 3),
            "is_final": True,
            "speech_final": not turn.from_finalize and self.params.get("endpointing") != "false",
            "from_finalize": turn.from_finalize,
            "channel": {
                "alternatives": [
                    {"transcript": text, "confidence": 0.9 if text else 0.0, "words": words}
                ]
            },
            "metadata": {
                "request_id": self.request_id,
                "model_info": {"name": self.model, "version": "standin", "arch": self.model},
                "model_uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, self.model)),
            },
        }
        self.results.append(message)
        return message

    def metadata(self) -> dict[str, Any]:
        return {
            "type": "Metadata",
            "transaction_key": "deprecated",
            "request_id": self.request_id,
            "sha256": self.sha.hexdigest(),
            "created": datetime.datetime.now(datetime.UTC).isoformat(),
            "duration": round(self.audio_s, 3),
            "channels": 1,
        }


class SpeakSession:
    """One ``/v1/speak`` stream: text in, speech out at each ``Flush``."""

    def __init__(self, ws: ServerConnection, params: dict[str, str]) -> None:
        self.ws = ws
        name = params.get("encoding", "linear16")
        self.encoding = ENCODINGS[name]
        self.rate = int(params.get("sample_rate", DEFAULT_TTS_RATE[name]))
        self.model = params.get("model", "aura-asteria-en")
        self.buffer: list[str] = []
        self.flushes: asyncio.Queue[str] = asyncio.Queue()
        self.flushed = 0
        self.cleared = 0
        self.characters = 0  # what Deepgram bills TTS by
        self.audio_s = 0.0
        self.worker: asyncio.Task[None] | None = None

    async def run(self) -> None:
        await self.ws.send(
            json.dumps(
                {
                    "type": "Metadata",
                    "request_id": str(uuid.uuid4()),
                    "model_name": self.model,
                    "model_version": "standin",
                    "model_uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, self.model)),
                }
            )
        )
        self.worker = asyncio.create_task(self.speak_flushes())
        try:
            async for raw in self.ws:
                if not await self.control(raw):
                    break
        except ConnectionClosed:
            pass
        finally:
            if self.worker is not None:
                self.worker.cancel()

    async def control(self, raw: str | bytes) -> bool:
        try:
            message = json.loads(raw)
            kind = message.get("type")
        except (ValueError, AttributeError):
            message, kind = {}, None
        if kind == "Speak":
            self.buffer.append(str(message.get("text") or ""))
        elif kind == "Flush":
            await self.flushes.put("".join(self.buffer))
            self.buffer.clear()
        elif kind == "Clear":
            await self.clear()
        elif kind == "Close":
            await self.flushes.join()
            await self.ws.close()
            return False
        else:
            warning = {"type": "Warning", "description": "unknown message", "code": "UNKNOWN"}
            await self.ws.send(json.dumps(warning))
        return True

    async def clear(self) -> None:
        """Drop buffered text and any speech not yet sent (a barge-in)."""
        self.buffer.clear()
        if self.worker is not None:
            self.worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.worker
        while not self.flushes.empty():
            self.flushes.get_nowait()
            self.flushes.task_done()
        self.worker = asyncio.create_task(self.speak_flushes())
        await self.ws.send(json.dumps({"type": "Cleared", "sequence_id": self.cleared}))
        self.cleared += 1

    async def speak_flushes(self) -> None:
        while True:
            text = await self.flushes.get()
            try:
                clip = await spoken(text)
                self.characters += len(text)
                if clip is not None:
                    self.audio_s += clip.duration_s
                    data = encode_pcm(clip, self.encoding, self.rate)
                    for piece in byte_chunks(data, self.rate, self.encoding, TTS_CHUNK_S):
                        await self.ws.send(piece)
                await self.ws.send(json.dumps({"type": "Flushed", "sequence_id": self.flushed}))
                self.flushed += 1
            finally:
                self.flushes.task_done()


class FakeDeepgram:
    """Deepgram on a loopback port: ``with FakeDeepgram(recognizer) as fake``, then give
    Pipecat's ``DeepgramSTTService`` / ``DeepgramTTSService`` ``base_url=fake.base_url``
    (``ws://127.0.0.1:PORT``; the SDK and the TTS service add ``/v1/listen`` / ``/v1/speak``)."""

    def __init__(self, recognizer: Recognizer) -> None:
        self.recognizer = recognizer
        self.listens: list[ListenSession] = []
        self.speaks: list[SpeakSession] = []
        self.server = ServerThread(
            self._handle, process_request=check_handshake, select_subprotocol=_select_subprotocol
        )

    async def _handle(self, ws: ServerConnection) -> None:
        request = ws.request
        assert request is not None  # the handshake has completed
        params = query(request.path)
        if request.path.startswith("/v1/listen"):
            listen = ListenSession(ws, self.recognizer, params)
            self.listens.append(listen)
            await listen.run()
        else:
            speak = SpeakSession(ws, params)
            self.speaks.append(speak)
            await speak.run()

    @property
    def base_url(self) -> str:
        return f"ws://127.0.0.1:{self.server.port}"

    def __enter__(self) -> FakeDeepgram:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
