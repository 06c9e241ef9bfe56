"""A local stand-in of Ultravox Realtime: call creation (REST) and the call's WebSocket.

Call creation follows ``POST /api/calls`` (https://docs.ultravox.ai/api-reference/calls/calls-post)
as Pipecat 1.14's ``UltravoxRealtimeLLMService`` (``pipecat/services/ultravox/llm.py``,
``_start_one_shot_call``) sends it: an ``X-API-Key`` header and a JSON body with
``systemPrompt``, ``temperature``, ``model``, ``voice``, ``metadata``, ``maxDuration``,
``selectedTools`` (``temporaryTool``: ``modelToolName``, ``description``,
``dynamicParameters`` of ``name``/``location``/``schema``/``required``, ``client: {}``),
``initialOutputMedium`` and ``medium.serverWebSocket`` (``inputSampleRate``, optional
``outputSampleRate`` defaulting to it, ``clientBufferSizeMs``); the answer is ``201`` with the
call object, whose ``joinUrl`` the client opens. A key of ``reject`` gets ``401``
``{"detail": "Invalid API key."}``.

The call's WebSocket follows the WebSocket integration and data-message protocol
(https://docs.ultravox.ai/apps/websockets, https://docs.ultravox.ai/apps/datamessages):
binary messages are 16-bit little-endian mono PCM both ways (caller audio at
``inputSampleRate``, agent audio at ``outputSampleRate``); text messages are JSON with a
``type``. Server: ``call_started`` (``callId``), ``state`` (``listening`` / ``thinking`` /
``speaking``), ``transcript`` (``role`` ``user``|``agent``, ``medium`` ``voice``|``text``,
``text`` or ``delta``, ``final``, ``ordinal``), ``client_tool_invocation`` (``toolName``,
``invocationId``, ``parameters``), ``playback_clear_buffer``, ``pong``. Client:
``client_tool_result`` (``invocationId``, ``result`` or ``errorType``/``errorMessage``),
``user_text_message`` (``text``, ``urgency``), ``set_output_medium``, ``ping``, ``hang_up``.

Ultravox is an audio-in LLM with its own voice. The stand-in hears the caller with
:class:`tasks.systems.standins.audio.Ears` (energy VAD + the recogniser it is given),
keeps an OpenAI chat history (system prompt, user = what it heard, ``tool`` messages from
``client_tool_result``), asks the brain, and answers with a ``client_tool_invocation`` or
eSpeak speech at the output rate, paced at real time after a head start, with the agent's
words as transcript deltas along the audio. The agent speaks first (Ultravox's default
first speaker). Caller speech while it answers stops the answer, and while the client still
holds unplayed agent audio (it is sent ahead of real time) sends ``playback_clear_buffer``.
What it cannot show: Ultravox's own hearing (it decodes with PocketSphinx, then decides on
text), voices, its turn-taking model, the REST call's other fields and per-minute billing
(the data-message protocol has no usage fields, so none are sent).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from perturbations.audio import Clip
from tasks.systems.standins.audio import (
    Brain,
    Dialogue,
    Ears,
    ServerThread,
    TurnEvent,
    chunks,
    decode_audio,
    encode_audio,
    paced,
    speak,
)
from tasks.voice.stt import Recognizer

REJECTED_KEY = "reject"
JOIN_PATH = re.compile(r"^/calls/(?P<call>[0-9a-f-]{36})$")


@dataclass
class Call:
    """A created call: what the join needs from the creation request."""

    call_id: str
    request: dict[str, Any]
    input_rate: int
    output_rate: int
    joined: bool = False
    sessions: list[CallSession] = field(default_factory=list)

    @property
    def tool_names(self) -> list[str]:
        return [
            str((t.get("temporaryTool") or {}).get("modelToolName") or t.get("toolName"))
            for t in self.request.get("selectedTools") or []
        ]


def create_call(body: dict[str, Any], join_base: str) -> tuple[int, dict[str, Any], Call | None]:
    """``POST /api/calls``: (status, response body, the call) for a request body."""
    socket = (body.get("medium") or {}).get("serverWebSocket")
    if not isinstance(socket, dict) or not socket.get("inputSampleRate"):
        return 400, {"medium": ["serverWebSocket.inputSampleRate is required"]}, None
    input_rate = int(socket["inputSampleRate"])
    call = Call(
        str(uuid.uuid4()), body, input_rate, int(socket.get("outputSampleRate") or input_rate)
    )
    created = datetime.datetime.now(datetime.UTC).isoformat().replace("+00:00", "Z")
    response = {
        "callId": call.call_id,
        "created": created,
        "joinUrl": f"{join_base}/calls/{call.call_id}",
        "systemPrompt": body.get("systemPrompt"),
        "model": body.get("model") or "fixie-ai/ultravox",
        "voice": body.get("voice"),
        "temperature": body.get("temperature", 0),
        "maxDuration": body.get("maxDuration", "3600s"),
        "medium": body["medium"],
        "initialOutputMedium": body.get("initialOutputMedium", "MESSAGE_MEDIUM_VOICE"),
        "metadata": body.get("metadata") or {},
    }
    return 201, response, call


class CallSession:
    """One joined call's WebSocket."""

    def __init__(
        self, ws: ServerConnection, call: Call, brain: Brain, recognizer: Recognizer
    ) -> None:
        self.ws = ws
        self.call = call
        self.dialogue = Dialogue(brain)
        self.dialogue.instruct(str(call.request.get("systemPrompt") or ""))
        self.ears = Ears(recognizer)
        self.medium = (
            "text" if call.request.get("initialOutputMedium") == "MESSAGE_MEDIUM_TEXT" else "voice"
        )
        self.answer: asyncio.Task[None] | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.hearing = asyncio.Lock()  # caller turns enter the history in the order spoken
        self.ordinal = 0
        self.playback_end = 0.0  # when the client's buffered agent audio ends (monotonic s)
        self.received: list[dict[str, Any]] = []  # every JSON client message, for tests
        self.output_audio_s = 0.0

    async def send(self, type_: str, **fields: Any) -> None:
        await self.ws.send(json.dumps({"type": type_, **fields}))

    async def run(self) -> None:
        await self.send("call_started", callId=self.call.call_id)
        await self.send("state", state="listening")
        first = (self.call.request.get("firstSpeakerSettings") or {}).get("user") is None
        if first and self.call.request.get("firstSpeaker") != "FIRST_SPEAKER_USER":
            self.start_answer()  # the agent greets first, as Ultravox's default does
        try:
            async for raw in self.ws:
                if isinstance(raw, bytes):
                    await self.hear_audio(raw)
                else:
                    message = json.loads(raw)
                    self.received.append(message)
                    await self.handle(message)
        except ConnectionClosed:
            pass
        finally:
            for task in [*self.tasks, self.answer]:
                if task is not None:
                    task.cancel()

    async def hear_audio(self, data: bytes) -> None:
        data = data[: len(data) // 2 * 2]  # a resampler may hand over an empty chunk
        if data:
            for turn in self.ears.feed(decode_audio(data, "pcm16", self.call.input_rate)):
                await self.on_turn(turn)

    async def handle(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "client_tool_result":
            output = message.get("result")
            if output is None:
                output = json.dumps(
                    {"error_type": message.get("errorType"), "message": message.get("errorMessage")}
                )
            self.dialogue.tool_result(str(message.get("invocationId")), str(output))
            if not self.dialogue.pending_tool_calls():
                self.start_answer()
        elif kind == "user_text_message":
            self.dialogue.user(str(message.get("text") or ""))
            if message.get("urgency") != "later":
                self.start_answer()
        elif kind == "set_output_medium":
            self.medium = "text" if message.get("medium") == "text" else "voice"
        elif kind == "ping":
            await self.send("pong", timestamp=message.get("timestamp"))
        elif kind == "hang_up":
            await self.ws.close()

    async def on_turn(self, turn: TurnEvent) -> None:
        if turn.kind == "start":
            answering = self.answer is not None and not self.answer.done()
            if answering and self.answer is not None:
                self.answer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self.answer
            # Audio goes out ahead of real time; what the client has not played yet goes.
            playing = time.monotonic() < self.playback_end
            if playing:
                self.playback_end = 0.0
                await self.send("playback_clear_buffer")
            if answering or playing:
                await self.send("state", state="listening")
            return
        task = asyncio.create_task(self.hear(turn))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def hear(self, turn: TurnEvent) -> None:
        assert turn.clip is not None
        async with self.hearing:
            text = await self.ears.transcribe(turn.clip, self.dialogue.expectation())
            self.dialogue.user(text, turn.clip.duration_s)
            await self.transcript("user", "voice", text=text, final=True)
        self.start_answer()

    async def transcript(self, role: str, medium: str, **fields: Any) -> None:
        await self.send("transcript", role=role, medium=medium, ordinal=self.ordinal, **fields)
        if fields.get("final"):
            self.ordinal += 1

    def start_answer(self) -> None:
        if self.answer is not None and not self.answer.done():
            return  # one agent turn at a time; the history already holds the new input
        self.answer = asyncio.create_task(self.respond())

    async def respond(self) -> None:
        await self.send("state", state="thinking")
        message = await self.dialogue.reply()
        calls = message.get("tool_calls") or []
        for call in calls:
            fn = call["function"]
            await self.send(
                "client_tool_invocation",
                toolName=fn["name"],
                invocationId=call["id"],
                parameters=json.loads(fn.get("arguments") or "{}"),
            )
        if calls:
            return  # the conversation waits for client_tool_result
        text = str(message.get("content") or "")
        if self.medium == "text":
            await self.transcript("agent", "text", delta=text, final=False)
            await self.transcript("agent", "text", text=text, final=True)
        elif text.strip():
            await self.say(text)
        await self.send("state", state="listening")

    async def say(self, text: str) -> None:
        clip = await speak(text)
        words = text.split(" ")
        said: list[str] = []
        sent_s = 0.0
        began = time.monotonic()
        await self.send("state", state="speaking")

        async def send_audio(piece: Clip) -> None:
            nonlocal sent_s
            # The agent's words as deltas, each as its share of the audio starts playing.
            due = min(
                len(words), int(len(words) * (sent_s + piece.duration_s) / clip.duration_s) + 1
            )
            if due > len(said):
                delta = " ".join(words[len(said) : due])
                await self.transcript(
                    "agent", "voice", delta=(" " if said else "") + delta, final=False
                )
                said.extend(words[len(said) : due])
            await self.ws.send(encode_audio(piece, "pcm16", self.call.output_rate))
            sent_s += piece.duration_s
            self.playback_end = began + sent_s
            self.output_audio_s += piece.duration_s

        try:
            await paced(chunks(clip), send_audio)
        finally:
            # The transcript of what was played, final even when the caller cut in.
            with contextlib.suppress(ConnectionClosed):
                await self.transcript("agent", "voice", text=" ".join(said), final=True)


def _rest_handler(fake: FakeUltravox) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet: tests read the fake, not logs
            pass

        def reply(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            key = self.headers.get("X-API-Key")
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            if not key:
                self.reply(401, {"detail": "Authentication credentials were not provided."})
            elif key == REJECTED_KEY:
                self.reply(401, {"detail": "Invalid API key."})
            elif self.path.split("?")[0] != "/api/calls":
                self.reply(404, {"detail": "Not found."})
            else:
                status, body, call = create_call(json.loads(raw or b"{}"), fake.join_base)
                if call is not None:
                    fake.calls[call.call_id] = call
                self.reply(status, body)

    return Handler


class FakeUltravox:
    """The stand-in: ``with FakeUltravox(brain, recognizer) as fake``; create calls at
    ``fake.base_url`` (``POST /api/calls``), join at the returned ``joinUrl``."""

    def __init__(self, brain: Brain, recognizer: Recognizer) -> None:
        self.brain = brain
        self.recognizer = recognizer
        self.calls: dict[str, Call] = {}
        self.server = ServerThread(self._join)
        self.rest = ThreadingHTTPServer(("127.0.0.1", 0), _rest_handler(self))
        self.rest.daemon_threads = True
        self._rest_thread = threading.Thread(
            target=self.rest.serve_forever, daemon=True, name="ultravox-rest"
        )

    @property
    def sessions(self) -> list[CallSession]:
        return [s for c in self.calls.values() for s in c.sessions]

    async def _join(self, ws: ServerConnection) -> None:
        match = JOIN_PATH.match(ws.request.path.split("?")[0] if ws.request is not None else "")
        call = self.calls.get(match["call"]) if match else None
        if call is None or call.joined:
            await ws.close(4404, "call not found or already joined")
            return
        call.joined = True
        session = CallSession(ws, call, self.brain, self.recognizer)
        call.sessions.append(session)
        await session.run()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.rest.server_address[1]}"

    @property
    def join_base(self) -> str:
        return f"ws://127.0.0.1:{self.server.port}"

    def __enter__(self) -> FakeUltravox:
        self.server.start()
        self._rest_thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.rest.shutdown()
        self.rest.server_close()
        self.server.stop()
