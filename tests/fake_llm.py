"""A local chat-completions server for tests: no network, no key.

``FakeChatServer`` is a threaded ``http.server`` on 127.0.0.1 (random port) that answers
``POST .../chat/completions`` from a scripted queue and records every request. Queue items:

* a dict -> 200 with that JSON body (build them with :func:`text_reply` /
  :func:`tool_reply`);
* :class:`FakeResponse` -> any status and raw body (HTTP errors, garbage);
* a callable ``(request_body) -> dict | FakeResponse`` -> computed from the request.

A request with ``"stream": true`` (Pipecat's OpenAI service always streams) gets the same
completion as server-sent events in the chat-completions chunk format (``choices[0].delta``
with ``role``/``content``/``tool_calls`` deltas, a ``finish_reason`` chunk, a usage chunk
when ``stream_options.include_usage`` is set, then ``data: [DONE]``).

When the queue is empty, ``fallback`` (same kinds) answers if set; otherwise the server
answers 400 (not retried by clients) and counts an overrun, so a test that scripted too
few responses fails visibly instead of hanging.

Use the ``fake_llm`` fixture (``from tests.fake_llm import fake_llm_fixture  # noqa: F401``
in the test module; it is registered under the name ``fake_llm``) or ``with
FakeChatServer()``.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from scenarios.chaining import IdChainer
from scenarios.models import Scenario
from scenarios.schema import function_name
from tasks.simulate.dialogue.script import build_script

_ids = itertools.count(1)


@dataclass
class FakeResponse:
    """A raw reply: status, body (bytes or JSON-able), content type."""

    status: int = 200
    body: Any = b""
    content_type: str = "application/json"

    def encoded(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode("utf-8")
        return json.dumps(self.body).encode("utf-8")


@dataclass
class RecordedRequest:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list((self.body or {}).get("messages") or [])


Scripted = dict[str, Any] | FakeResponse | Callable[[Any], Any]


@dataclass
class FakeChatServer:
    """Threaded chat-completions server answering from a scripted queue."""

    queue: deque[Scripted] = field(default_factory=deque)
    fallback: Scripted | None = None
    requests: list[RecordedRequest] = field(default_factory=list)
    overruns: int = 0
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}/v1"

    def push(self, *responses: Scripted) -> None:
        with self._lock:
            self.queue.extend(responses)

    def next_response(self, body: Any) -> FakeResponse:
        with self._lock:
            item = self.queue.popleft() if self.queue else self.fallback
            if item is None:
                self.overruns += 1
        if item is None:
            return FakeResponse(400, {"error": {"message": "fake_llm: response queue is empty"}})
        if callable(item) and not isinstance(item, FakeResponse):
            item = item(body)
        return item if isinstance(item, FakeResponse) else FakeResponse(200, item)

    def start(self) -> FakeChatServer:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler_for(server: FakeChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # One write per response and no Nagle: otherwise every call waits ~40 ms for ACKs.
        wbufsize = 1 << 16
        disable_nagle_algorithm = True

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            with server._lock:
                server.requests.append(
                    RecordedRequest(self.path, {k: v for k, v in self.headers.items()}, raw, body)
                )
            if not self.path.rstrip("/").endswith("/chat/completions"):
                reply = FakeResponse(404, {"error": {"message": f"no route {self.path}"}})
            else:
                reply = server.next_response(body)
                if isinstance(body, dict) and body.get("stream") and reply.status == 200:
                    reply = streamed(reply, body)
            data = reply.encoded()
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return  # keep test output clean

    return Handler


def _envelope(message: dict[str, Any], finish: str, usage: tuple[int, int]) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-fake-{next(_ids)}",
        "object": "chat.completion",
        "model": "fake-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": sum(usage),
        },
    }


def completion(message: dict[str, Any], usage: tuple[int, int] = (100, 10)) -> dict[str, Any]:
    """A completion carrying ``message`` (an assistant message, with or without tool calls)."""
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return _envelope(message, finish, usage)


def _chunk(base: dict[str, Any], delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {**base, "object": "chat.completion.chunk", "choices": [choice]}


def stream_chunks(body: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """A chat completion as the chunks a streaming endpoint sends (OpenAI's format)."""
    base = {"id": body.get("id", "chatcmpl-fake"), "created": 0, "model": body.get("model")}
    choice = body["choices"][0]
    message = choice["message"]
    chunks = [_chunk(base, {"role": "assistant", "content": ""}, None)]
    if message.get("content"):
        chunks.append(_chunk(base, {"content": message["content"]}, None))
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        head = {"index": index, "id": call["id"], "type": "function"}
        head["function"] = {"name": function["name"], "arguments": ""}
        chunks.append(_chunk(base, {"tool_calls": [head]}, None))
        tail = {"index": index, "function": {"arguments": function["arguments"]}}
        chunks.append(_chunk(base, {"tool_calls": [tail]}, None))
    chunks.append(_chunk(base, {}, choice.get("finish_reason") or "stop"))
    if include_usage:
        chunks.append(
            {**base, "object": "chat.completion.chunk", "choices": [], "usage": body.get("usage")}
        )
    return chunks


def streamed(reply: FakeResponse, request: dict[str, Any]) -> FakeResponse:
    """A JSON completion reply re-encoded as server-sent events; other bodies unchanged."""
    body = reply.body
    if not isinstance(body, dict) or not body.get("choices"):
        return reply
    include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
    events = [f"data: {json.dumps(c)}\n\n" for c in stream_chunks(body, include_usage)]
    return FakeResponse(200, "".join([*events, "data: [DONE]\n\n"]), "text/event-stream")


def text_reply(text: str, usage: tuple[int, int] = (100, 10)) -> dict[str, Any]:
    """A plain assistant answer."""
    return _envelope({"role": "assistant", "content": text}, "stop", usage)


def tool_reply(
    calls: list[tuple[str, Any]], text: str | None = None, usage: tuple[int, int] = (120, 20)
) -> dict[str, Any]:
    """An answer asking for tool calls ``[(function_name, arguments_dict_or_raw_str)]``."""
    tool_calls = [
        {
            "id": f"call_{next(_ids)}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": args if isinstance(args, str) else json.dumps(args),
            },
        }
        for name, args in calls
    ]
    message = {"role": "assistant", "content": text, "tool_calls": tool_calls}
    return _envelope(message, "tool_calls", usage)


@pytest.fixture(name="fake_llm")
def fake_llm_fixture() -> Iterator[FakeChatServer]:
    """A started :class:`FakeChatServer`, stopped after the test."""
    with FakeChatServer() as server:
        yield server


# ---------------------------------------------------------------------- trace-driven models


def _since_last_user(messages: list[dict[str, Any]]) -> tuple[int, int]:
    """(user messages, assistant messages after the last user message)."""
    users = sum(m.get("role") == "user" for m in messages)
    last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return users, sum(m.get("role") == "assistant" for m in messages[last + 1 :])


@dataclass
class PlannedResponse:
    """One model response of a replayed trace block: tool calls (trace params) and text."""

    calls: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = field(default_factory=list)
    text: str = ""


def _strings(value: Any) -> set[str]:
    if isinstance(value, dict):
        return {s for v in value.values() for s in _strings(v)}
    if isinstance(value, list):
        return {s for v in value for s in _strings(v)}
    return {value} if isinstance(value, str) else set()


def _depends_on(params: dict[str, Any], response: PlannedResponse) -> bool:
    """The call quotes a value one of the response's earlier calls returns."""
    returned = {s for _, _, trace in response.calls for s in _strings(trace or {})}
    return bool(_strings(params) & returned)


def agent_plan(scenario: Scenario) -> list[list[PlannedResponse]]:
    """Per agent block of the golden trace, the model responses that replay it.

    Consecutive calls go out as one response (parallel tool calls) unless one needs a value
    an earlier one returns; sentences before a call ride along as its text; the block's
    remaining sentences are the final answer.
    """
    plan: list[list[PlannedResponse]] = []
    for block in build_script(scenario).blocks:
        responses = [PlannedResponse()]
        for step in block:
            current = responses[-1]
            if step.kind == "call":
                if _depends_on(step.params, current):
                    current = PlannedResponse()
                    responses.append(current)
                current.calls.append((step.tool, step.params, step.trace_response))
                continue
            if current.calls:
                current = PlannedResponse()
                responses.append(current)
            current.text = f"{current.text} {step.text}".strip()
        if responses[-1].calls:
            responses.append(PlannedResponse())
        responses[-1].text = responses[-1].text or "Is there anything else I can help with?"
        plan.append(responses)
    return plan


def _chainer(messages: list[dict[str, Any]], plan: list[list[PlannedResponse]]) -> IdChainer:
    """Stale trace IDs -> the IDs the engine really returned, as a real model would read them.

    The k-th tool message of the request answers the k-th call of the trace.
    """
    trace_responses = [c[2] for block in plan for r in block for c in r.calls]
    actual = [m.get("content") for m in messages if m.get("role") == "tool"]
    chainer = IdChainer()
    for trace_response, content in zip(trace_responses, actual, strict=False):
        try:
            chainer.feed(trace_response, json.loads(content or "null"))
        except ValueError:
            continue
    return chainer


def trace_agent_model(scenario: Scenario) -> Callable[[Any], dict[str, Any]]:
    """A fake agent model that plays the record's golden trace, whatever the request order.

    The block is the number of caller messages in the request, the step the number of
    assistant messages since the last one - so it needs the whole history in each request.
    IDs the trace quotes from earlier responses are replaced by the real ones.
    """
    plan = agent_plan(scenario)

    def respond(body: Any) -> dict[str, Any]:
        messages = body["messages"]
        block, step = _since_last_user(messages)
        steps = plan[block] if block < len(plan) else []
        if step >= len(steps):
            return text_reply("Thank you for calling. Goodbye!")
        planned = steps[step]
        if not planned.calls:
            return text_reply(planned.text)
        chainer = _chainer(messages, plan)
        calls = [(function_name(tool), chainer.apply(params)) for tool, params, _ in planned.calls]
        return tool_reply(calls, text=planned.text or None)

    return respond


def trace_caller_model(scenario: Scenario) -> Callable[[Any], dict[str, Any]]:
    """A fake caller model saying the trace's caller lines in order, then goodbye + end_call.

    The line is the number of its own (assistant) messages in the request.
    """
    lines = build_script(scenario).user_lines

    def respond(body: Any) -> dict[str, Any]:
        said = sum(m.get("role") == "assistant" for m in body["messages"])
        if said < len(lines):
            return text_reply(lines[said])
        return tool_reply([("end_call", {"reason": "done"})], text="Thank you, goodbye.")

    return respond
