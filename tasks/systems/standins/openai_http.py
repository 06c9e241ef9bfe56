"""A local stand-in of the OpenAI REST API and of the OpenAI-compatible servers (vLLM and
the like) that host the catalogue's open-weight models.

Served under any base path (``base_url = http://127.0.0.1:PORT/v1`` as the SDK expects),
following the API reference (https://platform.openai.com/docs/api-reference) and the SDK
types that mirror it (``openai.types.chat``, ``openai.types.audio``, ``openai.types.model``):

* ``POST /chat/completions`` (``ChatCompletion``; with ``stream: true``, ``ChatCompletionChunk``
  server-sent events ending ``data: [DONE]``: a ``role`` delta, ``content`` deltas or a
  ``tool_calls`` delta with ``id``/``type``/``function.name`` followed by
  ``function.arguments`` fragments, a chunk with ``finish_reason`` (``stop`` or
  ``tool_calls``), and with ``stream_options.include_usage`` a last chunk with empty
  ``choices`` and ``usage``; every earlier chunk then carries ``usage: null``). The answer is
  the brain's next message over the request's history, as given: the system prompt, the
  user messages (what the pipeline's STT transcribed), the assistant's tool calls and the
  ``tool`` messages with their results. A tool the request does not offer is not called:
  the stand-in answers 400 naming it, so a pipeline that lost its tools fails visibly.
* ``POST /audio/transcriptions`` (multipart form as the SDK sends it: ``file``, ``model``,
  ``language``, ``prompt``, ``response_format``, ...): the uploaded WAV is decoded by the
  recogniser; ``json`` -> ``Transcription`` (``text``, ``usage: {type: duration, seconds}``),
  ``text`` -> the bare text, ``verbose_json`` -> ``TranscriptionVerbose`` (``task``,
  ``language``, ``duration``, ``text``, one segment spanning the clip), ``srt`` / ``vtt``.
* ``POST /audio/speech`` (``SpeechCreateParams``: ``input``, ``model``, ``voice`` - any
  string or ``{"id": ...}``, since self-hosted Kokoro and Voxtral name their own voices -
  ``response_format``, ``speed``): eSpeak speech of ``input``, ``pcm`` (24 kHz 16-bit mono
  little-endian, no header) or ``wav`` (the same in a RIFF header), sent chunked; with
  ``stream_format: "sse"``, ``speech.audio.delta`` events (base64 audio) and
  ``speech.audio.done`` with ``usage``. Other containers (mp3, opus, aac, flac) answer 400.
* ``GET /models`` and ``GET /models/{id}`` (``Model``: ``id``, ``object``, ``created``,
  ``owned_by``); ids may contain ``/`` (``google/gemma-4-26B-A4B-it``, as vLLM serves them).

Errors use the API's shape ``{"error": {"message", "type", "param", "code"}}``. The key is
the ``Authorization: Bearer`` header: absent -> 401; fault tests inject a provider failure
through it (:data:`~tasks.systems.standins.httpserver.FAULTS`): ``reject`` -> 401
``invalid_api_key``, ``ratelimit`` -> 429 ``rate_limit_exceeded``, ``malformed`` -> a 200
cut off mid-JSON, ``drop`` -> the connection closed mid-answer. Usage is counted at about
four characters a token; transcription usage is the audio's duration.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
import wave
from collections.abc import Iterable, Iterator
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tasks.systems.standins.audio import Brain, speak, text_tokens
from tasks.systems.standins.httpserver import (
    HttpServerThread,
    dropped_response,
    error_response,
    fault_of,
    json_body,
    malformed_response,
    pieces,
    sse,
    sse_response,
)
from tasks.systems.standins.openai_audio import (
    SPEECH_CHUNK_BYTES,
    SPEECH_FORMATS,
    SPEECH_RATE,
    byte_chunks,
    decode_wav,
    speech_events,
    speech_voice,
    transcription_response,
    wav_bytes,
)
from tasks.voice.stt import Recognizer
from tasks.voice.telephony import resample

MODELS_PATH = re.compile(r"^(?P<base>.*?)/models(?:/(?P<id>.+))?/?$")


def openai_error(
    status: int, message: str, type_: str = "invalid_request_error", **extra: Any
) -> JSONResponse:
    error = {"message": message, "type": type_, "param": None, "code": None, **extra}
    return error_response(status, {"error": error})


async def key_error(request: Request) -> Response | None:
    """No bearer key -> the API's 401; a fault key (``httpserver.FAULTS``) -> that fault."""
    header = request.headers.get("authorization", "")
    key = header[7:].strip() if header.lower().startswith("bearer ") else ""
    if not key:
        return openai_error(
            401,
            "You didn't provide an API key. You need to provide your API key in an "
            "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        )
    fault = fault_of(key)
    if fault == "reject":
        return openai_error(401, "Incorrect API key provided: reject.", code="invalid_api_key")
    if fault == "ratelimit":
        message = "Rate limit reached for requests (stand-in fault). Please try again in 20s."
        return openai_error(429, message, "requests", code="rate_limit_exceeded")
    if fault is None:
        return None
    is_json = "json" in request.headers.get("content-type", "")
    body = await json_body(request) if is_json else None
    stream = bool(body and body.get("stream"))
    if fault == "malformed":
        return malformed_response(stream)
    if request.url.path.rstrip("/").endswith("/audio/speech"):
        return dropped_response("\0" * SPEECH_CHUNK_BYTES, "audio/pcm")  # 100 ms, then gone
    if stream:
        delta = {"role": "assistant", "content": ""}
        chunk = {"id": "chatcmpl-dropped", "object": "chat.completion.chunk", "created": 0}
        chunk |= {"model": body and body.get("model"), "choices": [{"index": 0, "delta": delta}]}
        return dropped_response(sse(chunk), "text/event-stream")
    return dropped_response('{"id": "chatcmpl-dropped", ', "application/json")


# ------------------------------------------------------------------------- chat completions


def tool_names(body: dict[str, Any]) -> list[str]:
    return [
        str((t.get("function") or {}).get("name"))
        for t in body.get("tools") or []
        if isinstance(t, dict) and t.get("type", "function") == "function"
    ]


def prompt_tokens(body: dict[str, Any]) -> int:
    messages = body.get("messages") or []
    return sum(text_tokens(json.dumps(m, ensure_ascii=False)) for m in messages) + sum(
        text_tokens(json.dumps(t)) for t in body.get("tools") or []
    )


def completion_tokens(message: dict[str, Any]) -> int:
    calls = message.get("tool_calls") or []
    return text_tokens(str(message.get("content") or "")) + sum(
        text_tokens(c["function"]["name"] + c["function"]["arguments"]) for c in calls
    )


def assistant_message(reply: dict[str, Any]) -> dict[str, Any]:
    """The brain's message as the API returns it (fresh call ids, as the API mints them)."""
    calls = [
        {
            "id": f"call_{uuid.uuid4().hex[:24]}",
            "type": "function",
            "function": {
                "name": c["function"]["name"],
                "arguments": c["function"].get("arguments") or "{}",
            },
        }
        for c in reply.get("tool_calls") or []
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    if calls:
        message["tool_calls"] = calls
    message["refusal"] = None
    return message


def completion(body: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    usage = (prompt_tokens(body), completion_tokens(message))
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": sum(usage),
        },
    }


def completion_chunks(done: dict[str, Any], include_usage: bool) -> Iterator[dict[str, Any]]:
    """A chat completion as the chunks the streaming endpoint sends."""
    base = {k: done[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    extra = {"usage": None} if include_usage else {}
    choice = done["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            **base,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            **extra,
        }

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    for piece in pieces(message.get("content") or ""):
        yield chunk({"content": piece})
    for index, call in enumerate(message.get("tool_calls") or []):
        head = {"index": index, "id": call["id"], "type": "function"}
        yield chunk(
            {
                "tool_calls": [
                    head | {"function": {"name": call["function"]["name"], "arguments": ""}}
                ]
            }
        )
        for piece in pieces(call["function"]["arguments"], 16):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, choice["finish_reason"])
    if include_usage:
        yield {**base, "choices": [], "usage": done["usage"]}


# ----------------------------------------------------------------------------- server


class FakeOpenAIHTTP:
    """The stand-in on a loopback port: ``with FakeOpenAIHTTP(brain, recognizer) as fake``,
    then ``OpenAI(base_url=fake.base_url)`` (``http://127.0.0.1:PORT/v1``).

    ``brain`` answers chat completions, ``recognizer`` hears transcriptions (either may be
    None when the stand-in serves only the other endpoints: those then answer 501).
    ``models``, when given, are the only ids served and listed (others 404
    ``model_not_found``, as a vLLM server serving one model does; preflight checks the
    catalogue's id against that list). By default any id is served and ``GET /models``
    answers 404: a server that lists nothing, whose model id preflight leaves unchecked. ``requests`` records
    (path, JSON body or form fields) of every POST, for tests to read what a client sent.
    """

    def __init__(
        self,
        brain: Brain | None = None,
        recognizer: Recognizer | None = None,
        models: Iterable[str] | None = None,
    ) -> None:
        self.brain = brain
        self.recognizer = recognizer
        self.models = list(models) if models is not None else None
        self.requests: list[tuple[str, dict[str, Any]]] = []
        app = Starlette(routes=[Route("/{path:path}", self._dispatch, methods=["GET", "POST"])])
        self.server = HttpServerThread(app, name="openai-http-standin")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}/v1"

    def __enter__(self) -> FakeOpenAIHTTP:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    async def _dispatch(self, request: Request) -> Response:
        path = request.url.path.rstrip("/")
        denied = await key_error(request)
        if denied is not None:
            return denied
        models = MODELS_PATH.match(path)
        if request.method == "GET" and models:
            return self._models(models.group("id"))
        if request.method == "POST":
            for suffix, handler in (
                ("/chat/completions", self._chat),
                ("/audio/transcriptions", self._transcribe),
                ("/audio/speech", self._speech),
            ):
                if path.endswith(suffix):
                    return await handler(request)
        return openai_error(404, f"Invalid URL ({request.method} {request.url.path})")

    def _model_error(self, model: Any) -> JSONResponse | None:
        if not isinstance(model, str) or not model:
            return openai_error(400, "you must provide a model parameter", param="model")
        if self.models is not None and model not in self.models:
            return openai_error(404, f"The model `{model}` does not exist.", code="model_not_found")
        return None

    def _models(self, model_id: str | None) -> Response:
        def card(model: str) -> dict[str, Any]:
            return {"id": model, "object": "model", "created": 0, "owned_by": "evaflow-standin"}

        if model_id is None and self.models is None:
            # Serving any id, it cannot list them: preflight then leaves the id unchecked.
            message = "this stand-in serves any model id and lists none (give it models=)"
            return openai_error(404, message, code="not_listed")
        if model_id is None:
            return JSONResponse({"object": "list", "data": [card(m) for m in self.models or []]})
        if self.models is not None and model_id not in self.models:
            message = f"The model '{model_id}' does not exist"
            return openai_error(404, message, param="model", code="model_not_found")
        return JSONResponse(card(model_id))

    async def _chat(self, request: Request) -> Response:
        body = await json_body(request)
        if body is None or not isinstance(body.get("messages"), list):
            return openai_error(400, "the body must be a JSON object with a 'messages' list")
        self.requests.append((request.url.path, body))
        if (bad := self._model_error(body.get("model"))) is not None:
            return bad
        if self.brain is None:
            return openai_error(501, "this stand-in serves no chat model", "server_error")
        reply = await asyncio.to_thread(self.brain, [dict(m) for m in body["messages"]])
        message = assistant_message(reply)
        offered = tool_names(body)
        for call in message.get("tool_calls") or []:
            if call["function"]["name"] not in offered:
                return openai_error(
                    400,
                    f"stand-in: the model called {call['function']['name']!r}, a tool the "
                    f"request does not offer (tools: {offered})",
                    param="tools",
                )
        done = completion(body, message)
        if not body.get("stream"):
            return JSONResponse(done)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        events = [sse(c) for c in completion_chunks(done, include_usage)]
        return sse_response([*events, sse("[DONE]")])

    async def _transcribe(self, request: Request) -> Response:
        form = await request.form()
        upload = form.get("file")
        fields = {k: v for k, v in form.multi_items() if not isinstance(v, UploadFile)}
        self.requests.append((request.url.path, fields))
        if (bad := self._model_error(fields.get("model"))) is not None:
            return bad
        if not isinstance(upload, UploadFile):
            return openai_error(400, "a 'file' upload is required", param="file")
        if self.recognizer is None:
            return openai_error(501, "this stand-in serves no transcription model", "server_error")
        try:
            clip = decode_wav(await upload.read())
        except (wave.Error, ValueError, EOFError) as exc:
            message = f"Invalid file format: {exc}. The stand-in reads 16-bit PCM WAV."
            return openai_error(400, message, param="file")
        text = await asyncio.to_thread(self.recognizer.recognize, clip)
        return transcription_response(text, clip.duration_s, fields)

    async def _speech(self, request: Request) -> Response:
        body = await json_body(request)
        if body is None or not str(body.get("input") or "").strip():
            return openai_error(400, "'input' is required and must not be empty", param="input")
        self.requests.append((request.url.path, body))
        if (bad := self._model_error(body.get("model"))) is not None:
            return bad
        voice = body.get("voice")
        if not (isinstance(voice, str) and voice) and not (
            isinstance(voice, dict) and voice.get("id")
        ):
            return openai_error(400, "'voice' is required", param="voice")
        fmt = str(body.get("response_format") or "mp3")
        if fmt not in SPEECH_FORMATS:
            message = f"response_format {fmt!r} is not served by this stand-in (served: pcm, wav)"
            return openai_error(400, message, param="response_format")
        speed = float(body.get("speed") or 1.0)
        clip = resample(await speak(str(body["input"]), speech_voice(speed)), SPEECH_RATE)
        pcm = clip.to_int16().astype("<i2").tobytes()
        if body.get("stream_format") == "sse":
            return sse_response(speech_events(pcm, str(body["input"])))
        data = wav_bytes(pcm, SPEECH_RATE) if fmt == "wav" else pcm
        return StreamingResponse(byte_chunks(data), media_type=SPEECH_FORMATS[fmt])
