"""A local stand-in of the Gemini API's REST ``generateContent`` (LLM with audio in, and TTS).

Endpoints, as the API reference (https://ai.google.dev/api/generate-content,
https://ai.google.dev/api/models) and the ``google-genai`` SDK (``models.generate_content``
/ ``generate_content_stream``, ``models.get``; ``_api_client`` builds
``{base_url}/{api_version}/models/{model}:{method}``) define them:

- ``POST /v1beta/models/{model}:generateContent`` and
  ``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` (server-sent events, one
  ``data: <GenerateContentResponse>`` each). The request holds ``contents`` (``role``
  ``user`` / ``model``; ``parts`` with ``text``, ``inlineData`` {``mimeType``, ``data``
  base64}, ``functionCall`` {``id``, ``name``, ``args``}, ``functionResponse`` {``id``,
  ``name``, ``response``}), ``systemInstruction``, ``tools[].functionDeclarations`` and
  ``generationConfig`` (``responseModalities``, ``speechConfig.voiceConfig.
  prebuiltVoiceConfig.voiceName`` for the TTS models). The answer is
  ``candidates[0].content.parts`` (``text``, or ``functionCall``; for TTS ``inlineData`` of
  ``audio/L16;codec=pcm;rate=24000``), ``finishReason`` ``STOP`` and ``usageMetadata``
  (``promptTokenCount``, ``candidatesTokenCount``, ``totalTokenCount``,
  ``promptTokensDetails`` / ``candidatesTokensDetails`` by modality).
- ``GET /v1beta/models/{model}``: the ``Model`` resource (``name``,
  ``supportedGenerationMethods``, ...), what a key check reads.

Auth: the ``x-goog-api-key`` header the SDK sends (or ``?key=``); a missing key answers
403 ``PERMISSION_DENIED``, the key ``reject`` the API's own answer to an invalid key (400
``INVALID_ARGUMENT``, reason ``API_KEY_INVALID``: Google does not use 401 for API keys).
The other fault keys the HTTP stand-ins share: ``ratelimit`` answers 429
``RESOURCE_EXHAUSTED``, ``malformed`` a 200 cut mid-JSON, ``drop`` half an answer and
a closed connection.
The REST API is plain HTTP to the SDK (httpx, or aiohttp when installed), so unlike the
Live stand-in this one needs no TLS: ``HttpOptions(base_url="http://127.0.0.1:PORT")``.

The LLM hears: every ``inlineData`` audio part of ``contents`` (``audio/wav``, or raw
``audio/pcm`` / ``audio/L16`` with ``;rate=``) is decoded and transcribed by the recogniser
it was given (after the model's own question asking to spell something, with its code
grammar), so the brain's chat history holds what the caller's audio says, as heard; text
parts are text; function calls and responses become ``tool_calls`` / ``tool`` messages. A
clip is heard once per expectation (keyed by its bytes): the full history is resent every
request, as the real API re-reads it. The TTS speaks: eSpeak speech of the text sent, as
24 kHz 16-bit PCM in several SSE events. Tokens: audio 32 per second (Gemini's token
counting guide), text about 4 characters a token.

Judges: a brain with ``answer_heard(heard)`` gets each audio part's transcript apart from
the prompt (inline, or ``fileData`` of the Files API: :mod:`.gemini_files`). Real limits to
switch on: ``max_request_bytes`` (the API's 400 "Request payload size exceeds the limit")
and ``hear_inline_audio=False`` (Gemini dropping a large inline payload).

What it cannot show about the real provider: model quality (the brain is the reference
policy), thinking and its ``thoughtSignature`` checks, compressed audio formats (MP3,
OGG, FLAC are refused here with 400), voices (every voice is the same eSpeak voice),
latency and rate limits.
"""

from __future__ import annotations

import base64
import json
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tasks.simulate.voices import speakable
from tasks.systems.standins.audio import AGENT_VOICE, Brain, text_tokens
from tasks.systems.standins.gemini_contents import ApiError, Listener, check_key, to_chat
from tasks.systems.standins.gemini_files import FileStore, files_answer, needs_key
from tasks.systems.standins.gemini_live import camel
from tasks.voice.stt import Recognizer
from tasks.voice.telephony import resample
from tasks.voice.tts import synthesize

TTS_RATE = 24000
TTS_MIME = f"audio/L16;codec=pcm;rate={TTS_RATE}"
AUDIO_TOKENS_PER_S = 32
CHUNK_S = 0.5  # audio per SSE event of a TTS answer
PATH = re.compile(
    r"^/(v1|v1beta|v1alpha)/models/([^/:]+)(?::(generateContent|streamGenerateContent))?$"
)
# The Gemini API's prebuilt TTS voices (speech-generation guide).
_VOICE_NAMES = (
    "Zephyr Puck Charon Kore Fenrir Leda Orus Aoede Callirrhoe Autonoe Enceladus Iapetus Umbriel "
    "Algieba Despina Erinome Algenib Rasalgethi Laomedeia Achernar Alnilam Schedar Gacrux "
    "Pulcherrima Achird Zubenelgenubi Vindemiatrix Sadachbia Sadaltager Sulafat"
)
VOICES = frozenset(_VOICE_NAMES.split())
CUT_FAULTS = ("malformed", "drop")  # keys whose answer is cut (see _Handler._send)


def is_tts(model: str) -> bool:
    return "tts" in model


def usage(
    prompt_text: int, prompt_audio_s: float, out_text: int, out_audio_s: float
) -> dict[str, Any]:
    prompt_audio = round(prompt_audio_s * AUDIO_TOKENS_PER_S)
    out_audio = round(out_audio_s * AUDIO_TOKENS_PER_S)
    prompt, candidates = prompt_text + prompt_audio, out_text + out_audio
    details = [{"modality": "TEXT", "tokenCount": prompt_text}]
    if prompt_audio:
        details.append({"modality": "AUDIO", "tokenCount": prompt_audio})
    modality = "AUDIO" if out_audio else "TEXT"
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "totalTokenCount": prompt + candidates,
        "promptTokensDetails": details,
        "candidatesTokensDetails": [{"modality": modality, "tokenCount": candidates}],
    }


def _response(
    model: str, parts: list[dict[str, Any]], meta: dict[str, Any] | None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
        "modelVersion": model,
    }
    if meta is not None:
        out["candidates"][0]["finishReason"] = "STOP"
        out["usageMetadata"] = meta
    return out


def _halves(text: str) -> list[str]:
    """A text answer as two stream chunks (the API streams a few words at a time)."""
    cut = text.find(" ", len(text) // 2)
    return [text[:cut], text[cut:]] if cut > 0 else [text]


def _text_tokens(messages: list[dict[str, Any]]) -> int:
    return sum(
        text_tokens(str(m.get("content") or ""))
        + sum(text_tokens(json.dumps(c["function"])) for c in m.get("tool_calls") or [])
        for m in messages
    )


class GeminiApi:
    """What the endpoints answer (transport-free, so tests can call it directly)."""

    def __init__(
        self,
        brain: Brain,
        recognizer: Recognizer,
        files: FileStore | None = None,
        hear_inline_audio: bool = True,
    ) -> None:
        self.brain = brain
        expect = getattr(brain, "expectation", None)
        self.ears = Listener(recognizer, expect) if callable(expect) else Listener(recognizer)
        self.files = files if files is not None else FileStore()
        self.hear_inline_audio = hear_inline_audio
        self.log: list[dict[str, Any]] = []  # one record per generateContent request

    def generate(self, model: str, request: dict[str, Any]) -> list[dict[str, Any]]:
        """The response chunks (one for ``generateContent``; joined by the caller)."""
        return self.speak(model, request) if is_tts(model) else self.answer(model, request)

    def answer(self, model: str, request: dict[str, Any]) -> list[dict[str, Any]]:
        heard = to_chat(request, self.ears, self.files, self.hear_inline_audio)
        listen = getattr(self.brain, "answer_heard", None)
        message = (
            listen(heard) if callable(listen) else self.brain([dict(m) for m in heard.messages])
        )
        calls = message.get("tool_calls") or []
        parts: list[dict[str, Any]] = [
            {
                "functionCall": {
                    "id": c["id"],
                    "name": c["function"]["name"],
                    "args": json.loads(c["function"]["arguments"] or "{}"),
                }
            }
            for c in calls
        ]
        text = str(message.get("content") or "")
        if text:
            parts.insert(0, {"text": text})
        out_tokens = text_tokens(text) + sum(text_tokens(c["function"]["arguments"]) for c in calls)
        meta = usage(_text_tokens(heard.messages), heard.audio_s, out_tokens, 0.0)
        self.log.append(
            {
                "model": model,
                "messages": heard.messages,
                "audio": heard.audio,
                "reply": message,
                "usage": meta,
            }
        )
        if text and not calls:
            pieces = _halves(text)
            return [
                _response(model, [{"text": p}], meta if i == len(pieces) - 1 else None)
                for i, p in enumerate(pieces)
            ]
        return [_response(model, parts, meta)]

    def speak(self, model: str, request: dict[str, Any]) -> list[dict[str, Any]]:
        config = request.get("generationConfig") or {}
        if "AUDIO" not in [str(m).upper() for m in config.get("responseModalities") or []]:
            raise ApiError(
                400, "INVALID_ARGUMENT", "TTS models answer with responseModalities AUDIO"
            )
        voice = (
            ((config.get("speechConfig") or {}).get("voiceConfig") or {}).get("prebuiltVoiceConfig")
            or {}
        ).get("voiceName")
        if voice is not None and voice not in VOICES:
            raise ApiError(400, "INVALID_ARGUMENT", f"Voice name {voice} is not supported.")
        text = " ".join(
            str(p.get("text") or "")
            for c in request.get("contents") or []
            for p in c.get("parts") or []
        ).strip()
        if not text:
            raise ApiError(400, "INVALID_ARGUMENT", "contents hold no text to speak")
        clip = resample(synthesize(speakable(text), AGENT_VOICE), TTS_RATE)
        pcm = clip.to_int16().astype("<i2").tobytes()
        step = int(TTS_RATE * CHUNK_S) * 2
        pieces = [pcm[i : i + step] for i in range(0, len(pcm), step)] or [b""]
        meta = usage(text_tokens(text), 0.0, 0, clip.duration_s)
        self.log.append(
            {
                "model": model,
                "text": text,
                "voice": voice,
                "usage": meta,
                "audio_s": clip.duration_s,
            }
        )
        return [
            _response(
                model,
                [{"inlineData": {"mimeType": TTS_MIME, "data": base64.b64encode(piece).decode()}}],
                meta if i == len(pieces) - 1 else None,
            )
            for i, piece in enumerate(pieces)
        ]


def model_resource(model: str) -> dict[str, Any]:
    tts = is_tts(model)
    return {
        "name": f"models/{model}",
        "baseModelId": model,
        "version": "stand-in",
        "displayName": model,
        "description": "evaflow's local stand-in of this Gemini model",
        "inputTokenLimit": 32768 if tts else 1048576,
        "outputTokenLimit": 16384 if tts else 65536,
        "supportedGenerationMethods": ["generateContent", "countTokens"]
        + ([] if tts else ["createCachedContent", "batchGenerateContent"]),
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    fault: str | None = None

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's name
        pass  # the test output is the place for failures, not for every request

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._serve(post=False)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        self._serve(post=True, raw=raw)

    def do_DELETE(self) -> None:  # noqa: N802
        self._serve(post=False)

    def _serve(self, post: bool, raw: bytes = b"") -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        key = self.headers.get("x-goog-api-key") or (query.get("key") or [""])[0]
        self.fault = key if key in CUT_FAULTS else None
        try:
            if needs_key(self.path):
                check_key(key)
            limit = self.server.max_request_bytes
            if limit is not None and len(raw) > limit:
                message = f"Request payload size exceeds the limit: {limit} bytes."
                raise ApiError(400, "INVALID_ARGUMENT", message)
            headers = {k.lower(): v for k, v in self.headers.items()}
            base = f"http://{self.headers.get('Host') or '127.0.0.1'}"
            served = files_answer(
                self.server.api.files, self.command, self.path, headers, raw, base
            )
            if served is not None:
                self._json(served[0], served[1], served[2])
                return
            match = PATH.match(url.path)
            if not match or bool(match.group(3)) != post or self.command == "DELETE":
                raise ApiError(404, "NOT_FOUND", f"no such method: {self.command} {url.path}")
            model, method = match.group(2), match.group(3)
            if not post:
                self._json(200, model_resource(model))
                return
            request = camel(json.loads(raw or b"{}"))
            chunks = self.server.api.generate(model, request)
        except ApiError as error:
            self._json(error.code, error.body())
            return
        except ValueError as error:
            self._json(400, ApiError(400, "INVALID_ARGUMENT", str(error)).body())
            return
        if method == "streamGenerateContent" and query.get("alt") == ["sse"]:
            body = b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in chunks)
            self._send(200, "text/event-stream", body)
        elif method == "streamGenerateContent":
            self._json(200, chunks)  # without alt=sse the API streams one JSON array
        else:
            self._json(200, _joined(chunks))

    def _json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(value).encode()
        self._send(status, "application/json; charset=UTF-8", body, headers)

    def _send(
        self, status: int, kind: str, body: bytes, headers: dict[str, str] | None = None
    ) -> None:
        """The answer; a ``malformed`` key cuts it in half (a 200 that does not parse), a
        ``drop`` key announces all of it, sends half and closes the connection."""
        length = len(body)
        if self.fault and status == 200:
            body = body[: len(body) // 2]
            length = length if self.fault == "drop" else len(body)
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(length))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        if self.fault == "drop" and status == 200:
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)


def _joined(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """A streamed answer as ``generateContent`` returns it: one candidate, all parts."""
    parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
    text = "".join(str(p["text"]) for p in parts if "text" in p)
    audio = b"".join(base64.b64decode(p["inlineData"]["data"]) for p in parts if "inlineData" in p)
    merged: list[dict[str, Any]] = [{"text": text}] if text else []
    if audio:
        merged.append(
            {"inlineData": {"mimeType": TTS_MIME, "data": base64.b64encode(audio).decode()}}
        )
    merged += [p for p in parts if "functionCall" in p]
    return _response(chunks[-1]["modelVersion"], merged, chunks[-1].get("usageMetadata"))


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, api: GeminiApi, max_request_bytes: int | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.api = api
        self.max_request_bytes = max_request_bytes


class FakeGemini:
    """The stand-in on a loopback port: ``with FakeGemini(brain, recognizer) as gemini``;
    point the SDK at ``HttpOptions(base_url=gemini.base_url)`` (``http://127.0.0.1:PORT``)."""

    def __init__(
        self,
        brain: Brain,
        recognizer: Recognizer,
        *,
        max_request_bytes: int | None = None,
        hear_inline_audio: bool = True,
        processing_polls: int = 1,
    ) -> None:
        files = FileStore(processing_polls=processing_polls)
        self.api = GeminiApi(brain, recognizer, files, hear_inline_audio)
        self.server = _Server(self.api, max_request_bytes)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True, name="gemini")

    @property
    def log(self) -> list[dict[str, Any]]:
        return self.api.log

    @property
    def files(self) -> FileStore:
        return self.api.files

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeGemini:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)
