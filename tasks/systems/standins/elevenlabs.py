"""A local stand-in of ElevenLabs' realtime speech-to-text (Scribe) and text-to-speech WebSockets.

Speech to text follows the realtime STT reference
(https://elevenlabs.io/docs/api-reference/speech-to-text/v-1-speech-to-text-realtime and the
event reference of ``elevenlabs/skills`` ``speech-to-text/references/realtime-events.md``) as
Pipecat 1.14's ``ElevenLabsRealtimeSTTService`` (``pipecat/services/elevenlabs/stt.py``) uses
it: ``GET /v1/speech-to-text/realtime?model_id=scribe_v2_realtime&audio_format=pcm_<rate>
&commit_strategy=manual|vad[&language_code=..][&include_timestamps=true]
[&include_language_detection=true][&vad_silence_threshold_secs=..]...`` with an
``xi-api-key`` header (or a single-use ``token`` query parameter). The server opens with
``session_started`` (``session_id``, ``config``); the client streams
``{"message_type": "input_audio_chunk", "audio_base_64", "commit", "sample_rate"}``;
a commit (``commit: true`` under the manual strategy, or ``{"message_type": "commit"}``;
under ``vad`` the server's own VAD) answers ``partial_transcript`` then
``committed_transcript`` (``text``, ``language_code``), and with timestamps or language
detection requested also ``committed_transcript_with_timestamps`` (``words``: ``text``,
``start``, ``end``, ``type``, ``logprob``). Errors use the documented ``message_type``
names (``input_error``, ...) with an ``error`` text.

Text to speech follows the WebSocket references
(https://elevenlabs.io/docs/api-reference/text-to-speech/v-1-text-to-speech-voice-id-multi-stream-input
and ``.../stream-input``) as Pipecat's ``ElevenLabsTTSService`` (``elevenlabs/tts.py``,
``tts_base.py``) uses them: ``GET /v1/text-to-speech/{voice_id}/multi-stream-input
?model_id=..&output_format=pcm_<rate>|ulaw_8000&auto_mode=..`` (or ``stream-input``, one
context) with ``xi-api-key`` (or ``xi_api_key`` / ``authorization`` in the first message).
Client messages: ``{"text", "context_id", "voice_settings"}`` opening a context,
``{"text", "context_id"}``, ``{"context_id", "flush": true}``,
``{"context_id", "close_context": true}``, ``{"text": ""}`` (keep-alive on
multi-stream-input, end of input on stream-input), ``{"close_socket": true}``. Server
messages: ``{"audio": base64, "alignment", "normalizedAlignment", "contextId"}`` with
``alignment = {"chars", "charStartTimesMs", "charDurationsMs"}``, and
``{"isFinal": true, "contextId"}`` once a context is closed and spoken.

Both paths are served on one loopback port with TLS: Pipecat's realtime STT service builds
``wss://{base_url}/v1/speech-to-text/realtime`` from a bare host, so it cannot speak plain
``ws://``; the certificate is a throwaway self-signed one
(:func:`tasks.systems.standins.gemini_live.self_signed`), trusted through ``SSL_CERT_FILE``.
An ``xi-api-key`` of ``reject`` is refused at the handshake with ElevenLabs' 401 body
(``{"detail": {"status": "invalid_api_key", "message": ...}}``).

The ears are :class:`tasks.systems.standins.audio.Ears` (energy VAD + the recogniser it is
given) over the audio received; the mouth is eSpeak (:func:`.audio.speak`) in the encoding and
rate the URL asked for. What it cannot show: Scribe's accuracy, its streaming partials (one
partial per commit here, equal to the commit), real word timings (spread evenly over the
turn), voices (every ``voice_id`` gets the same eSpeak voice), ``voice_settings``, and
ElevenLabs' text buffering (``auto_mode`` speaks every text message at once; otherwise text
waits for ``flush``, ``close_context`` or end of input). No usage fields exist on these
sockets, so none are sent.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import ssl
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from perturbations.audio import Clip
from tasks.systems.standins.audio import Ears, Encoding, ServerThread, decode_audio, speak
from tasks.systems.standins.audio import encode_audio as encode
from tasks.systems.standins.gemini_live import self_signed
from tasks.voice.stt import Recognizer

STT_PATH = "/v1/speech-to-text/realtime"
TTS_PATH = re.compile(
    r"^/v1/text-to-speech/(?P<voice>[^/]+)/(?P<kind>multi-stream-input|stream-input)$"
)
REJECTED_KEY = "reject"
INVALID_KEY = {"detail": {"status": "invalid_api_key", "message": "Invalid API key"}}
FORMAT = re.compile(r"^(?P<codec>pcm|ulaw)_(?P<rate>\d+)$")


def audio_format(name: str) -> tuple[Encoding, int]:
    """``pcm_16000`` -> 16-bit PCM at 16 kHz; ``ulaw_8000`` -> G.711 mu-law (the PCM and
    mu-law members of ElevenLabs' ``output_format`` / ``audio_format`` enums)."""
    match = FORMAT.match(name or "")
    if match is None:
        raise ValueError(
            f"unsupported audio format {name!r} (the stand-in speaks pcm_* and ulaw_8000)"
        )
    codec, rate = match["codec"], int(match["rate"])
    if codec == "ulaw" and rate != 8000:
        raise ValueError(f"unsupported audio format {name!r}")
    return ("g711_ulaw" if codec == "ulaw" else "pcm16"), rate


def _json_response(status: int, reason: str, body: dict[str, Any]) -> Response:
    data = json.dumps(body).encode()
    headers = Headers(
        [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(data))),
            ("Connection", "close"),
        ]
    )
    return Response(status, reason, headers, data)


def check_handshake(_: ServerConnection, request: Request) -> Response | None:
    """Refuse unknown paths (404) and a rejected or missing key (401) before upgrading."""
    path = urlsplit(request.path).path
    if path != STT_PATH and not TTS_PATH.match(path):
        return _json_response(
            404, "Not Found", {"detail": {"status": "not_found", "message": path}}
        )
    key = request.headers.get("xi-api-key")
    token = parse_qs(urlsplit(request.path).query).get("token")
    if key == REJECTED_KEY or (path == STT_PATH and not key and not token):
        return _json_response(401, "Unauthorized", INVALID_KEY)
    return None


def query_of(ws: ServerConnection) -> dict[str, str]:
    path = ws.request.path if ws.request is not None else ""
    return {k: v[-1] for k, v in parse_qs(urlsplit(path).query).items()}


def flag(query: dict[str, str], name: str) -> bool:
    return query.get(name, "false").lower() == "true"


class ScribeSession:
    """One realtime speech-to-text socket."""

    def __init__(self, ws: ServerConnection, recognizer: Recognizer) -> None:
        self.ws = ws
        self.query = query_of(ws)
        self.encoding, self.rate = audio_format(self.query.get("audio_format", "pcm_16000"))
        self.strategy = self.query.get("commit_strategy", "manual")
        self.timestamps = flag(self.query, "include_timestamps")
        self.language_detection = flag(self.query, "include_language_detection")
        self.language = self.query.get("language_code") or "en"
        self.ears = Ears(recognizer)
        self.speech_heard = False  # since the last commit
        self.committed: list[str] = []

    async def send(self, message_type: str, **fields: Any) -> None:
        await self.ws.send(json.dumps({"message_type": message_type, **fields}))

    async def run(self) -> None:
        config = {
            "sample_rate": self.rate,
            "audio_format": self.query.get("audio_format", "pcm_16000"),
            "language_code": self.language,
            "model_id": self.query.get("model_id", "scribe_v2_realtime"),
            "commit_strategy": self.strategy,
            "include_timestamps": self.timestamps,
        }
        await self.send("session_started", session_id=uuid.uuid4().hex, config=config)
        with contextlib.suppress(ConnectionClosed):
            async for raw in self.ws:
                message = json.loads(raw)
                kind = message.get("message_type", "input_audio_chunk")
                if kind == "input_audio_chunk":
                    await self.audio(message)
                elif kind == "commit":
                    await self.commit(self.ears.flush_turn())
                else:
                    await self.send("input_error", error=f"unknown message_type {kind!r}")

    async def audio(self, message: dict[str, Any]) -> None:
        data = base64.b64decode(message.get("audio_base_64") or "")
        if data:
            rate = int(message.get("sample_rate") or self.rate)
            for turn in self.ears.feed(decode_audio(data, self.encoding, rate)):
                self.speech_heard = True
                if self.strategy == "vad" and turn.kind == "stop":
                    self.ears.reset()
                    await self.commit(turn.clip)
        if message.get("commit"):
            await self.commit(self.ears.flush_turn())

    async def commit(self, clip: Clip | None) -> None:
        heard, self.speech_heard = self.speech_heard, False
        text = await self.ears.transcribe(clip) if clip is not None and heard else ""
        self.committed.append(text)
        await self.send("partial_transcript", text=text)
        await self.send("committed_transcript", text=text, language_code=self.language)
        if self.timestamps or self.language_detection:
            words = _words(text, clip) if self.timestamps else None
            await self.send(
                "committed_transcript_with_timestamps",
                text=text,
                language_code=self.language,
                words=words,
            )


def _words(text: str, clip: Clip | None) -> list[dict[str, Any]]:
    """Word entries spread evenly over the segment (the recogniser gives no timings)."""
    tokens = text.split()
    span = clip.duration_s if clip is not None else 0.0
    step = span / max(1, len(tokens))
    words: list[dict[str, Any]] = []
    for i, token in enumerate(tokens):
        if i:
            words.append({"text": " ", "start": i * step, "end": i * step, "type": "spacing"})
        words.append(
            {
                "text": token,
                "start": i * step,
                "end": (i + 1) * step,
                "type": "word",
                "logprob": 0.0,
            }
        )
    return words


def alignment(text: str, duration_s: float) -> dict[str, list[Any]]:
    """Character timings of ``text`` spread evenly over its audio (ms, from the chunk's start)."""
    chars = list(text)
    step = duration_s * 1000 / max(1, len(chars))
    return {
        "chars": chars,
        "charStartTimesMs": [round(i * step) for i in range(len(chars))],
        "charDurationsMs": [max(1, round(step)) for _ in chars],
    }


@dataclass
class TtsContext:
    text: list[str] = field(default_factory=list)
    spoken: list[str] = field(default_factory=list)


class TtsSession:
    """One text-to-speech socket: ``multi-stream-input`` (contexts) or ``stream-input`` (one)."""

    def __init__(self, ws: ServerConnection, voice: str, multi: bool) -> None:
        self.ws = ws
        self.voice = voice
        self.multi = multi
        self.query = query_of(ws)
        self.encoding, self.rate = audio_format(self.query.get("output_format", "mp3_44100_128"))
        self.auto = flag(self.query, "auto_mode")
        headers = ws.request.headers if ws.request is not None else Headers()
        self.authorized = bool(headers.get("xi-api-key"))
        self.contexts: dict[str, TtsContext] = {}
        self.closed: list[str] = []
        self.received: list[dict[str, Any]] = []

    async def run(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for raw in self.ws:
                message = json.loads(raw)
                self.received.append(message)
                if not self.authorized and not self.authorize(message):
                    await self.ws.close(1008, "Invalid API key")
                    return
                if message.get("close_socket"):
                    for context_id in list(self.contexts):
                        await self.finish(context_id)
                    await self.ws.close()
                    return
                await self.handle(message)

    def authorize(self, message: dict[str, Any]) -> bool:
        key = message.get("xi_api_key") or message.get("authorization")
        self.authorized = bool(key) and key != REJECTED_KEY
        return self.authorized

    async def handle(self, message: dict[str, Any]) -> None:
        context_id = str(message.get("context_id") or "") if self.multi else ""
        text = message.get("text")
        if self.multi and not context_id:
            return  # a context-less keep-alive
        if text == "" and not self.multi:
            await self.finish(context_id)  # end of input
            await self.ws.close()
            return
        context = self.contexts.setdefault(context_id, TtsContext())
        if text and text.strip():
            context.text.append(str(text))
        if message.get("close_context"):
            await self.finish(context_id)
        elif message.get("flush") or message.get("try_trigger_generation") or (self.auto and text):
            await self.generate(context_id)

    async def generate(self, context_id: str) -> None:
        context = self.contexts.get(context_id)
        if context is None or not "".join(context.text).strip():
            return
        text, context.text = "".join(context.text), []
        clip = await speak(text)
        context.spoken.append(text)
        message: dict[str, Any] = {
            "audio": base64.b64encode(encode(clip, self.encoding, self.rate)).decode(),
            "alignment": alignment(text, clip.duration_s),
            "normalizedAlignment": alignment(text, clip.duration_s),
        }
        if self.multi:
            message["contextId"] = context_id
        else:
            message["isFinal"] = False
        await self.ws.send(json.dumps(message))

    async def finish(self, context_id: str) -> None:
        await self.generate(context_id)
        self.contexts.pop(context_id, None)
        self.closed.append(context_id)
        final: dict[str, Any] = {"isFinal": True}
        if self.multi:
            final["contextId"] = context_id
        await self.ws.send(json.dumps(final))


class FakeElevenLabs:
    """The stand-in on a loopback TLS port: ``with FakeElevenLabs(recognizer, tmp)``.

    Point ``ElevenLabsRealtimeSTTService(base_url=fake.host)`` and
    ``ElevenLabsTTSService(url=fake.ws_url)`` at it, trusting ``cert_file``.
    """

    def __init__(self, recognizer: Recognizer, cert_dir: Path) -> None:
        self.recognizer = recognizer
        directory = cert_dir / "elevenlabs"
        directory.mkdir(parents=True, exist_ok=True)
        self.cert_file, key_file = self_signed(directory)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, key_file)
        self.stt_sessions: list[ScribeSession] = []
        self.tts_sessions: list[TtsSession] = []
        self.server = ServerThread(
            self._handle, ssl_context=context, process_request=check_handshake
        )

    async def _handle(self, ws: ServerConnection) -> None:
        path = urlsplit(ws.request.path if ws.request is not None else "").path
        try:
            if path == STT_PATH:
                stt = ScribeSession(ws, self.recognizer)
                self.stt_sessions.append(stt)
                await stt.run()
                return
            match = TTS_PATH.match(path)
            assert match is not None  # check_handshake refused every other path
            tts = TtsSession(ws, match["voice"], match["kind"] == "multi-stream-input")
            self.tts_sessions.append(tts)
            await tts.run()
        except ValueError as exc:  # an audio format the stand-in cannot speak
            await ws.close(1008, str(exc)[:120])

    @property
    def host(self) -> str:
        """What ``ElevenLabsRealtimeSTTService(base_url=...)`` takes: host and port, no scheme."""
        return f"127.0.0.1:{self.server.port}"

    @property
    def ws_url(self) -> str:
        """What ``ElevenLabsTTSService(url=...)`` takes."""
        return f"wss://{self.host}"

    @property
    def base_url(self) -> str:
        return f"https://{self.host}"

    def __enter__(self) -> FakeElevenLabs:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
