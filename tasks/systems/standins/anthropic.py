"""A local stand-in of the Anthropic Messages API.

Follows the API reference (https://docs.anthropic.com/en/api/messages, streaming:
https://docs.anthropic.com/en/docs/build-with-claude/streaming, errors:
https://docs.anthropic.com/en/api/errors, models: https://docs.anthropic.com/en/api/models)
and the SDK types that mirror it (``anthropic.types``: ``Message``, ``RawMessageStartEvent``,
``RawContentBlockStartEvent``, ``RawContentBlockDeltaEvent`` with ``TextDelta`` /
``InputJSONDelta``, ``RawContentBlockStopEvent``, ``RawMessageDeltaEvent`` with
``MessageDeltaUsage``, ``RawMessageStopEvent``). The SDK posts to ``{base_url}/v1/messages``
(``?beta=true`` from ``client.beta.messages``, which Pipecat's ``AnthropicLLMService``
uses), so ``base_url`` is ``http://127.0.0.1:PORT`` with no ``/v1``.

* ``POST /v1/messages``: the request's ``system`` (a string or text blocks) and
  ``messages`` (string content or blocks: ``text``, ``tool_use``, ``tool_result``) become
  an OpenAI chat history for the brain (:func:`openai_history`): ``tool_result`` blocks
  become ``tool`` messages, ``tool_use`` blocks the assistant's ``tool_calls``. The brain's
  answer becomes a ``text`` block (``stop_reason: end_turn``) or one ``tool_use`` block
  (``stop_reason: tool_use``) whose ``input`` is the call's arguments. With
  ``stream: true`` it is sent as the named events ``message_start``,
  ``content_block_start`` / ``ping`` / ``content_block_delta`` (``text_delta`` or
  ``input_json_delta`` fragments of the JSON input) / ``content_block_stop``,
  ``message_delta`` (``stop_reason``, ``usage.output_tokens``) and ``message_stop``.
  A tool the request does not offer is not called (400 naming it).
* ``GET /v1/models`` and ``GET /v1/models/{id}`` (``ModelInfo``: ``type: model``, ``id``,
  ``display_name``, ``created_at``), which preflight uses as its cheap authenticated call.

Headers: ``x-api-key`` is required (401 ``authentication_error`` when absent),
``anthropic-version`` is required on every request (400 ``invalid_request_error`` when
absent). Fault tests inject a provider failure through the key
(``tasks.systems.standins.httpserver.FAULTS``): ``reject`` -> 401 ``authentication_error``,
``ratelimit`` -> 429 ``rate_limit_error``, ``malformed`` -> a 200 cut off mid-JSON,
``drop`` -> the connection closed after ``message_start``. Errors have the API's shape
``{"type": "error", "error": {"type", "message"}}`` and every answer a ``request-id``
header. Usage is counted at about four characters a token.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tasks.systems.standins.audio import Brain, text_tokens
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

MODELS_PATH = re.compile(r"^(?P<base>.*?)/v1/models(?:/(?P<id>.+))?/?$")
MODEL_CREATED = "2025-10-01T00:00:00Z"


def _request_id() -> str:
    return f"req_{uuid.uuid4().hex[:24]}"


def anthropic_error(status: int, type_: str, message: str) -> JSONResponse:
    body = {"type": "error", "error": {"type": type_, "message": message}}
    return error_response(status, body, headers={"request-id": _request_id()})


async def header_error(request: Request) -> Response | None:
    """Missing headers -> the API's 401/400; a fault key (``httpserver.FAULTS``) -> that fault."""
    key = request.headers.get("x-api-key", "")
    bearer = request.headers.get("authorization", "")
    if not key and bearer.lower().startswith("bearer "):
        key = bearer[7:].strip()  # the SDK's auth_token alternative
    if not key:
        return anthropic_error(401, "authentication_error", "x-api-key header is required")
    fault = fault_of(key)
    if fault == "reject":
        return anthropic_error(401, "authentication_error", "invalid x-api-key")
    if not request.headers.get("anthropic-version"):
        return anthropic_error(
            400, "invalid_request_error", "anthropic-version: header is required"
        )
    if fault == "ratelimit":
        message = "Number of requests has exceeded your rate limit (stand-in fault)."
        return anthropic_error(429, "rate_limit_error", message)
    if fault is None:
        return None
    body = await json_body(request) if request.method == "POST" else None
    stream = bool(body and body.get("stream"))
    if fault == "malformed":
        return malformed_response(stream, "message_start")
    if not stream:
        return dropped_response('{"id": "msg_dropped", ', "application/json")
    start: dict[str, Any] = {"id": "msg_dropped", "type": "message", "role": "assistant"}
    start["content"] = []
    start |= {"model": body and body.get("model"), "stop_reason": None, "stop_sequence": None}
    start["usage"] = {"input_tokens": 1, "output_tokens": 1}
    first = sse({"type": "message_start", "message": start}, "message_start")
    return dropped_response(first, "text/event-stream")


# ------------------------------------------------------------------ Anthropic -> OpenAI


def _text(content: Any) -> str:
    """The text of a string or of a list of blocks (non-text blocks are not text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _user(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A user turn: its tool results (which must lead the content) as ``tool`` messages,
    then its text as one user message."""
    out: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") == "tool_result":
            content = block.get("content")
            text = content if isinstance(content, str) else _text(content)
            out.append({"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": text})
    texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
    if texts:
        out.append({"role": "user", "content": " ".join(texts)})
    return out


def _assistant(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    calls = [
        {
            "id": b.get("id"),
            "type": "function",
            "function": {
                "name": b.get("name"),
                "arguments": json.dumps(b.get("input") or {}, ensure_ascii=False),
            },
        }
        for b in blocks
        if b.get("type") == "tool_use"
    ]
    text = " ".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return message


def openai_history(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The Messages request's conversation as an OpenAI chat-completions history."""
    history: list[dict[str, Any]] = []
    system = _text(body.get("system"))
    if system:
        history.append({"role": "system", "content": system})
    for message in body.get("messages") or []:
        blocks = _blocks(message.get("content"))
        if message.get("role") == "assistant":
            history.append(_assistant(blocks))
        else:
            history.extend(_user(blocks))
    return history


# ------------------------------------------------------------------ OpenAI -> Anthropic


def content_blocks(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """The brain's message as Messages content: text, or one ``tool_use`` per call."""
    blocks: list[dict[str, Any]] = []
    if reply.get("content"):
        blocks.append({"type": "text", "text": str(reply["content"])})
    for call in reply.get("tool_calls") or []:
        function = call["function"]
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = {}
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_{uuid.uuid4().hex[:24]}",
                "name": function["name"],
                "input": arguments,
            }
        )
    return blocks


def input_tokens(body: dict[str, Any]) -> int:
    parts = [body.get("system"), body.get("messages"), body.get("tools")]
    return sum(text_tokens(json.dumps(p, ensure_ascii=False)) for p in parts if p)


def output_tokens(blocks: list[dict[str, Any]]) -> int:
    return sum(
        text_tokens(b["text"]) if b["type"] == "text" else text_tokens(json.dumps(b["input"]))
        for b in blocks
    )


def message(body: dict[str, Any], blocks: list[dict[str, Any]]) -> dict[str, Any]:
    tool_use = any(b["type"] == "tool_use" for b in blocks)
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": blocks,
        "stop_reason": "tool_use" if tool_use else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens(body),
            "output_tokens": output_tokens(blocks),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def stream_events(done: dict[str, Any]) -> Iterator[str]:
    """A message as the named server-sent events of a streamed Messages response."""
    usage = done["usage"]
    start = {**done, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield sse({"type": "message_start", "message": start}, "message_start")
    for index, block in enumerate(done["content"]):
        if block["type"] == "text":
            head: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in pieces(block["text"])]
        else:
            head = {**block, "input": {}}
            arguments = json.dumps(block["input"], ensure_ascii=False)
            deltas = [
                {"type": "input_json_delta", "partial_json": p} for p in pieces(arguments, 16)
            ]
        yield sse(
            {"type": "content_block_start", "index": index, "content_block": head},
            "content_block_start",
        )
        if index == 0:
            yield sse({"type": "ping"}, "ping")
        for delta in deltas:
            yield sse(
                {"type": "content_block_delta", "index": index, "delta": delta},
                "content_block_delta",
            )
        yield sse({"type": "content_block_stop", "index": index}, "content_block_stop")
    end = {"stop_reason": done["stop_reason"], "stop_sequence": None}
    end_usage = {"output_tokens": usage["output_tokens"]}
    yield sse({"type": "message_delta", "delta": end, "usage": end_usage}, "message_delta")
    yield sse({"type": "message_stop"}, "message_stop")


# ----------------------------------------------------------------------------- server


class FakeAnthropic:
    """The stand-in on a loopback port: ``with FakeAnthropic(brain) as fake``, then
    ``Anthropic(base_url=fake.base_url)`` or ``ANTHROPIC_BASE_URL=fake.base_url`` (Pipecat's
    ``AnthropicLLMService`` takes no base URL; its ``AsyncAnthropic`` reads that variable).

    ``models``, when given, are the only ids served and listed (others 404
    ``not_found_error``); by default any id is served and none listed (404);
    ``requests`` records the JSON body of every ``POST /v1/messages``.
    """

    def __init__(self, brain: Brain, models: list[str] | None = None) -> None:
        self.brain = brain
        self.models = models
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        app = Starlette(routes=[Route("/{path:path}", self._dispatch, methods=["GET", "POST"])])
        self.server = HttpServerThread(app, name="anthropic-standin")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def __enter__(self) -> FakeAnthropic:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    async def _dispatch(self, request: Request) -> Response:
        denied = await header_error(request)
        if denied is not None:
            return denied
        path = request.url.path.rstrip("/")
        models = MODELS_PATH.match(path)
        if request.method == "GET" and models:
            return self._models(models.group("id"))
        if request.method == "POST" and path.endswith("/v1/messages"):
            self.headers.append(dict(request.headers))
            return await self._messages(request)
        return anthropic_error(404, "not_found_error", f"Not found: {request.url.path}")

    def _unknown(self, model: str) -> bool:
        return self.models is not None and model not in self.models

    def _models(self, model_id: str | None) -> Response:
        def info(model: str) -> dict[str, Any]:
            return {
                "type": "model",
                "id": model,
                "display_name": model,
                "created_at": MODEL_CREATED,
            }

        if model_id is None and self.models is None:
            message = "this stand-in serves any model id and lists none (give it models=)"
            return anthropic_error(404, "not_found_error", message)
        if model_id is None:
            data = [info(m) for m in self.models or []]
            first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
            return JSONResponse(
                {"data": data, "has_more": False, "first_id": first, "last_id": last}
            )
        if self._unknown(model_id):
            return anthropic_error(404, "not_found_error", f"model: {model_id}")
        return JSONResponse(info(model_id), headers={"request-id": _request_id()})

    def _invalid(self, body: dict[str, Any] | None) -> str | None:
        if body is None:
            return "the body must be a JSON object"
        if not isinstance(body.get("model"), str):
            return "model: Field required"
        if not isinstance(body.get("max_tokens"), int):
            return "max_tokens: Field required"
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            return "messages: at least one message is required"
        return None

    async def _messages(self, request: Request) -> Response:
        body = await json_body(request)
        problem = self._invalid(body)
        if problem is not None or body is None:
            return anthropic_error(400, "invalid_request_error", problem or "invalid body")
        self.requests.append(body)
        if self._unknown(body["model"]):
            return anthropic_error(404, "not_found_error", f"model: {body['model']}")
        reply = await asyncio.to_thread(self.brain, openai_history(body))
        blocks = content_blocks(reply)
        offered = [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]
        for block in blocks:
            if block["type"] == "tool_use" and block["name"] not in offered:
                return anthropic_error(
                    400,
                    "invalid_request_error",
                    f"stand-in: the model called {block['name']!r}, a tool the request does "
                    f"not offer (tools: {offered})",
                )
        done = message(body, blocks)
        headers = {"request-id": _request_id()}
        if not body.get("stream"):
            return JSONResponse(done, headers=headers)
        response = sse_response(stream_events(done))
        response.headers.update(headers)
        return response
