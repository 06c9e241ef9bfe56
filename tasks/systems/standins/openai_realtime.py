"""A local fake of the OpenAI Realtime API (WebSocket), for tests.

Event names and payload shapes follow the published schema: the Realtime API reference
(https://platform.openai.com/docs/api-reference/realtime-client-events and
.../realtime-server-events, GA interface) and the SDK types that mirror it
(``openai.types.realtime``: ``RealtimeServerEvent``, ``ResponseAudioDeltaEvent`` whose
``type`` is ``response.output_audio.delta``, ``ResponseDoneEvent`` with
``response.usage``: ``input_tokens``/``output_tokens``/``total_tokens`` and
``input_token_details``/``output_token_details`` with ``text_tokens``/``audio_tokens``;
Pipecat's ``pipecat.services.openai.realtime.events`` validates the same shapes).
A client that connects with the beta header ``OpenAI-Beta: realtime=v1`` gets the beta
names (``response.audio.delta``, ``response.audio_transcript.delta``,
``conversation.item.created``) and may configure audio the beta way
(``input_audio_format: "pcm16" | "g711_ulaw"``); GA sessions use
``audio.input.format = {"type": "audio/pcm", "rate": 24000} | {"type": "audio/pcmu"}``.

Served: ``session.update`` -> ``session.updated``; ``input_audio_buffer.append`` (the
fake's VAD emits ``input_audio_buffer.speech_started`` / ``speech_stopped`` /
``committed``, ``conversation.item.added`` for the user's audio item and, when
``audio.input.transcription`` is set, ``conversation.item.input_audio_transcription.completed``;
with server VAD on, ``create_response`` true by default, a response follows);
``input_audio_buffer.commit`` / ``clear``; ``conversation.item.create`` (a user message or
a ``function_call_output``); ``response.create`` -> ``response.created``, then either a
function call (``response.output_item.added``, ``response.function_call_arguments.delta``
/ ``.done``, ``response.output_item.done``) or speech (``response.output_audio_transcript.delta``,
``response.output_audio.delta`` paced at real time after a head start,
``response.output_audio.done``), and ``response.done`` with ``usage``; ``response.cancel``.
Barge-in: caller speech while a response is being sent emits ``speech_started`` and ends
the response with ``response.done`` ``status: "cancelled"``. Audio tokens are counted as
the pricing page does (user audio 1 token per 100 ms, assistant audio 1 per 50 ms).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import uuid
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from perturbations.audio import VoiceSpec
from tasks.systems.standins.audio import (
    AGENT_VOICE,
    Brain,
    Dialogue,
    Ears,
    Encoding,
    ServerThread,
    TurnEvent,
    chunks,
    decode_audio,
    encode_audio,
    paced,
    speak,
    text_tokens,
)
from tasks.voice.stt import Recognizer

RATE = 24000  # GA audio/pcm is 24 kHz only
INPUT_AUDIO_TOKENS_PER_S = 10
OUTPUT_AUDIO_TOKENS_PER_S = 20
BETA_NAMES = {
    "response.output_audio.delta": "response.audio.delta",
    "response.output_audio.done": "response.audio.done",
    "response.output_audio_transcript.delta": "response.audio_transcript.delta",
    "response.output_audio_transcript.done": "response.audio_transcript.done",
    "conversation.item.added": "conversation.item.created",
}


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:20]}"


def _format(session: dict[str, Any], side: str) -> Encoding:
    beta = session.get(f"{side}_audio_format")
    if beta is not None:
        return "g711_ulaw" if beta == "g711_ulaw" else "pcm16"
    fmt = ((session.get("audio") or {}).get(side) or {}).get("format") or {}
    return "g711_ulaw" if fmt.get("type") == "audio/pcmu" else "pcm16"


def _turn_detection(session: dict[str, Any]) -> dict[str, Any] | None:
    if "turn_detection" in session:  # beta shape
        value = session["turn_detection"]
    else:
        value = ((session.get("audio") or {}).get("input") or {}).get(
            "turn_detection", {"type": "server_vad"}
        )
    return value if isinstance(value, dict) else None


def _transcribes(session: dict[str, Any]) -> bool:
    beta = session.get("input_audio_transcription")
    ga = ((session.get("audio") or {}).get("input") or {}).get("transcription")
    return bool(beta or ga)


def _merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


class RealtimeSession:
    """One WebSocket session of the fake."""

    def __init__(self, ws: ServerConnection, brain: Brain, recognizer: Recognizer) -> None:
        self.ws = ws
        headers = ws.request.headers if ws.request is not None else {}
        self.beta = "realtime=v1" in str(headers.get("OpenAI-Beta", ""))
        self.session: dict[str, Any] = {
            "type": "realtime",
            "object": "realtime.session",
            "id": _id("sess"),
            "model": _query(ws, "model") or "gpt-realtime",
            "output_modalities": ["audio"],
            "instructions": "",
            "tools": [],
            "audio": {
                "input": {"format": {"type": "audio/pcm", "rate": RATE}},
                "output": {"format": {"type": "audio/pcm", "rate": RATE}, "voice": "alloy"},
            },
        }
        self.dialogue = Dialogue(brain)
        self.ears = Ears(recognizer)
        self.item_id = _id("item")
        self.last_item: str | None = None
        self.response: asyncio.Task[None] | None = None
        self.response_id = ""
        self.turns: set[asyncio.Task[None]] = set()
        self.usage_log: list[dict[str, Any]] = []
        self.pace_output = True  # real time after a head start, so a caller can barge in
        self.received: list[dict[str, Any]] = []  # every client event, for the tests

    async def send(self, type_: str, **fields: Any) -> None:
        name = BETA_NAMES.get(type_, type_) if self.beta else type_
        await self.ws.send(json.dumps({"event_id": _id("event"), "type": name, **fields}))

    async def run(self) -> None:
        await self.send("session.created", session=self.session)
        try:
            async for raw in self.ws:
                event = json.loads(raw)
                self.received.append(event)
                await self.handle(event)
        except ConnectionClosed:
            pass
        finally:
            for task in [*self.turns, self.response]:
                if task is not None:
                    task.cancel()

    async def handle(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "session.update":
            self.session = _merge(self.session, event.get("session") or {})
            self.dialogue.instruct(str(self.session.get("instructions") or ""))
            await self.send("session.updated", session=self.session)
        elif kind == "input_audio_buffer.append":
            clip = decode_audio(
                base64.b64decode(event["audio"]), _format(self.session, "input"), RATE
            )
            for turn in self.ears.feed(clip):
                await self.on_turn(turn)
        elif kind == "input_audio_buffer.commit":
            await self.commit(self.ears.flush_turn())
        elif kind == "input_audio_buffer.clear":
            self.ears.reset()
            await self.send("input_audio_buffer.cleared")
        elif kind == "conversation.item.create":
            await self.create_item(event["item"])
        elif kind == "conversation.item.truncate":
            await self.send(
                "conversation.item.truncated",
                item_id=event["item_id"],
                content_index=event.get("content_index", 0),
                audio_end_ms=event.get("audio_end_ms", 0),
            )
        elif kind == "conversation.item.delete":
            await self.send("conversation.item.deleted", item_id=event["item_id"])
        elif kind == "response.create":
            await self.start_response()
        elif kind == "response.cancel":
            await self.cancel_response("client_cancelled")
        else:
            await self.error("invalid_request_error", f"unknown event type {kind!r}", kind)

    async def error(self, type_: str, message: str, code: str | None = None) -> None:
        await self.send("error", error={"type": type_, "code": code, "message": message})

    # ------------------------------------------------------------------ caller turns

    async def on_turn(self, turn: TurnEvent) -> None:
        detection = _turn_detection(self.session)
        if detection is None:
            if turn.kind == "stop":
                self.ears.held = turn.clip
            return
        if turn.kind == "start":
            await self.send(
                "input_audio_buffer.speech_started", audio_start_ms=turn.at_ms, item_id=self.item_id
            )
            if detection.get("interrupt_response", True):
                await self.cancel_response("turn_detected")
            return
        await self.send(
            "input_audio_buffer.speech_stopped", audio_end_ms=turn.at_ms, item_id=self.item_id
        )
        task = asyncio.create_task(self.commit(turn.clip, detection.get("create_response", True)))
        self.turns.add(task)
        task.add_done_callback(self.turns.discard)

    async def commit(self, clip: Any, respond: bool = False) -> None:
        item_id, self.item_id = self.item_id, _id("item")
        await self.send(
            "input_audio_buffer.committed", previous_item_id=self.last_item, item_id=item_id
        )
        item = {
            "id": item_id,
            "object": "realtime.item",
            "type": "message",
            "status": "completed",
            "role": "user",
            "content": [{"type": "input_audio", "transcript": None}],
        }
        await self.send("conversation.item.added", previous_item_id=self.last_item, item=item)
        self.last_item = item_id
        text = (
            await self.ears.transcribe(clip, self.dialogue.expectation())
            if clip is not None
            else ""
        )
        self.dialogue.user(text, clip.duration_s if clip is not None else 0.0)
        if _transcribes(self.session):
            await self.send(
                "conversation.item.input_audio_transcription.completed",
                item_id=item_id,
                content_index=0,
                transcript=text,
                usage={"type": "duration", "seconds": round(clip.duration_s, 3) if clip else 0},
            )
        item["content"] = [{"type": "input_audio", "transcript": text}]
        await self.send("conversation.item.done", previous_item_id=None, item=item)
        if respond:
            await self.start_response()

    async def create_item(self, item: dict[str, Any]) -> None:
        item = {"id": item.get("id") or _id("item"), "object": "realtime.item", **item}
        if item["type"] == "function_call_output":
            self.dialogue.tool_result(str(item["call_id"]), str(item.get("output") or ""))
        elif item["type"] == "message":
            text = " ".join(str(p.get("text") or "") for p in item.get("content") or [])
            if item.get("role") == "system":
                self.dialogue.instruct(text)
            elif item.get("role") == "user":
                self.dialogue.user(text)
            else:
                self.dialogue.messages.append({"role": "assistant", "content": text})
        item["status"] = "completed"
        await self.send("conversation.item.added", previous_item_id=self.last_item, item=item)
        await self.send("conversation.item.done", previous_item_id=self.last_item, item=item)
        self.last_item = item["id"]

    # ------------------------------------------------------------------ responses

    async def start_response(self) -> None:
        if self.response is not None and not self.response.done():
            await self.error(
                "invalid_request_error",
                "Conversation already has an active response",
                "conversation_already_has_active_response",
            )
            return
        self.response_id = _id("resp")
        self.response = asyncio.create_task(self.respond(self.response_id))

    async def cancel_response(self, reason: str) -> None:
        task = self.response
        if task is None or task.done():
            if reason == "client_cancelled":
                await self.error(
                    "invalid_request_error", "no active response", "response_cancel_not_active"
                )
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await self.done(self.response_id, "cancelled", [], 0.0, "", reason)

    def _response(self, response_id: str, status: str, output: list[Any]) -> dict[str, Any]:
        return {
            "id": response_id,
            "object": "realtime.response",
            "status": status,
            "output": output,
            "output_modalities": ["audio"],
        }

    async def respond(self, response_id: str) -> None:
        await self.send("response.created", response=self._response(response_id, "in_progress", []))
        message = await self.dialogue.reply()
        text = str(message.get("content") or "")
        calls = message.get("tool_calls") or []
        # One response may speak and then call a function (a caller's goodbye + end_call).
        items: list[dict[str, Any]] = []
        spoken_s = 0.0
        if text.strip() or not calls:
            item, spoken_s = await self.say(response_id, text)
            items.append(item)
        for call in calls:
            items.append(await self.function_call(response_id, len(items), call))
        await self.done(response_id, "completed", items, spoken_s, text)

    async def function_call(
        self, response_id: str, index: int, call: dict[str, Any]
    ) -> dict[str, Any]:
        item_id = _id("item")
        fn = call["function"]
        item = {
            "id": item_id,
            "object": "realtime.item",
            "type": "function_call",
            "status": "in_progress",
            "call_id": call["id"],
            "name": fn["name"],
            "arguments": "",
        }
        where = {"response_id": response_id, "item_id": item_id, "output_index": index}
        await self.send(
            "response.output_item.added", response_id=response_id, output_index=index, item=item
        )
        await self.send("conversation.item.added", previous_item_id=self.last_item, item=item)
        self.last_item = item_id
        args = str(fn["arguments"])
        await self.send(
            "response.function_call_arguments.delta", **where, call_id=call["id"], delta=args
        )
        await self.send(
            "response.function_call_arguments.done",
            **where,
            call_id=call["id"],
            name=fn["name"],
            arguments=args,
        )
        item = {**item, "status": "completed", "arguments": args}
        await self.send(
            "response.output_item.done", response_id=response_id, output_index=index, item=item
        )
        await self.send("conversation.item.done", previous_item_id=None, item=item)
        return item

    async def say(self, response_id: str, text: str) -> tuple[dict[str, Any], float]:
        item_id = _id("item")
        item: dict[str, Any] = {
            "id": item_id,
            "object": "realtime.item",
            "type": "message",
            "status": "in_progress",
            "role": "assistant",
            "content": [],
        }
        where = {
            "response_id": response_id,
            "item_id": item_id,
            "output_index": 0,
            "content_index": 0,
        }
        await self.send(
            "response.output_item.added", response_id=response_id, output_index=0, item=item
        )
        await self.send("conversation.item.added", previous_item_id=self.last_item, item=item)
        self.last_item = item_id
        part = {"type": "output_audio", "transcript": ""}
        await self.send("response.content_part.added", **where, part=part)
        clip = await speak(text, self.voice()) if text.strip() else None
        await self.send("response.output_audio_transcript.delta", **where, delta=text)
        encoding = _format(self.session, "output")

        async def send_audio(piece: Any) -> None:
            payload = base64.b64encode(encode_audio(piece, encoding, RATE)).decode()
            await self.send("response.output_audio.delta", **where, delta=payload)

        if clip is not None and self.pace_output:
            await paced(chunks(clip), send_audio)
        elif clip is not None:  # as fast as it is generated
            for piece in chunks(clip):
                await send_audio(piece)
        await self.send("response.output_audio.done", **where)
        await self.send("response.output_audio_transcript.done", **where, transcript=text)
        part = {"type": "output_audio", "transcript": text}
        await self.send("response.content_part.done", **where, part=part)
        item = {**item, "status": "completed", "content": [part]}
        await self.send(
            "response.output_item.done", response_id=response_id, output_index=0, item=item
        )
        await self.send("conversation.item.done", previous_item_id=None, item=item)
        return item, clip.duration_s if clip is not None else 0.0

    def voice(self) -> VoiceSpec:
        """The eSpeak voice the model speaks with (the agent role: the cascade's)."""
        return AGENT_VOICE

    async def done(
        self,
        response_id: str,
        status: str,
        output: list[Any],
        spoken_s: float,
        text: str,
        reason: str | None = None,
    ) -> None:
        response = self._response(response_id, status, output)
        if reason is not None:
            response["status_details"] = {"type": status, "reason": reason}
        in_text = self.dialogue.context_text_tokens()
        in_audio = round(self.dialogue.input_audio_s * INPUT_AUDIO_TOKENS_PER_S)
        out_text = text_tokens(text) + sum(
            text_tokens(json.dumps(i.get("arguments")))
            for i in output
            if i.get("type") == "function_call"
        )
        out_audio = round(spoken_s * OUTPUT_AUDIO_TOKENS_PER_S)
        response["usage"] = {
            "total_tokens": in_text + in_audio + out_text + out_audio,
            "input_tokens": in_text + in_audio,
            "output_tokens": out_text + out_audio,
            "input_token_details": {
                "text_tokens": in_text,
                "audio_tokens": in_audio,
                "cached_tokens": 0,
                "cached_tokens_details": {"text_tokens": 0, "audio_tokens": 0},
            },
            "output_token_details": {"text_tokens": out_text, "audio_tokens": out_audio},
        }
        self.usage_log.append(response["usage"])
        await self.send("response.done", response=response)


def _query(ws: ServerConnection, key: str) -> str | None:
    from urllib.parse import parse_qs, urlparse

    path = ws.request.path if ws.request is not None else ""
    values = parse_qs(urlparse(path).query).get(key)
    return values[0] if values else None


class FakeOpenAIRealtime:
    """The fake on a loopback port: ``with FakeOpenAIRealtime(brain, recognizer) as fake``,
    then point a client at ``fake.base_url`` (``ws://127.0.0.1:PORT/v1``; the client adds
    ``/realtime?model=...``)."""

    session_class: type[RealtimeSession] = RealtimeSession

    def __init__(self, brain: Brain, recognizer: Recognizer) -> None:
        self.brain = brain
        self.recognizer = recognizer
        self.sessions: list[RealtimeSession] = []
        self.server = ServerThread(self._handle)

    async def _handle(self, ws: ServerConnection) -> None:
        auth = ws.request.headers.get("Authorization", "") if ws.request is not None else ""
        path = ws.request.path if ws.request is not None else ""
        if not auth.startswith("Bearer ") or not path.split("?")[0].endswith("/realtime"):
            await ws.close(4001, "missing bearer token or not a /realtime path")
            return
        session = self.session_class(ws, self.brain, self.recognizer)
        self.sessions.append(session)
        await session.run()

    @property
    def base_url(self) -> str:
        return f"ws://127.0.0.1:{self.server.port}/v1"

    def __enter__(self) -> FakeOpenAIRealtime:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
