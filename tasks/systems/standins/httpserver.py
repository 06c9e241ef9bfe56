"""What the HTTP stand-ins share: an ASGI app served on a loopback port from a background
thread, server-sent events, the pieces a streamed answer is cut into, and injected faults.

The server is ``uvicorn`` (Prefect's own HTTP server, so already installed with evaflow)
running a Starlette app on its own event loop in a daemon thread, bound to 127.0.0.1 on a
port the OS picks, so a test or a ``--rehearse`` run can start any number side by side.
Server-sent events follow the WHATWG HTML "server-sent events" format (``event:`` and
``data:`` lines, a blank line after each event), which the OpenAI and Anthropic SDKs parse.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import socket
import threading
from collections.abc import AsyncIterator, Iterable
from typing import Any, Literal

import uvicorn
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.types import ASGIApp

STREAM_PIECE_CHARS = 24  # about what a provider puts in one streamed text delta

# Faults a test injects through the API key the client sends (the only knob a rehearsal
# hands the system): "reject" -> the provider's 401, "ratelimit" -> its 429 (after which
# the SDK retries, then gives up), "malformed" -> a 200 whose body is cut mid-JSON,
# "drop" -> the connection closed in the middle of the answer.
Fault = Literal["reject", "ratelimit", "malformed", "drop"]
FAULTS: tuple[Fault, ...] = ("reject", "ratelimit", "malformed", "drop")


def fault_of(key: str) -> Fault | None:
    return next((f for f in FAULTS if f == key), None)


def malformed_response(stream: bool, event: str | None = None) -> Response:
    """A 200 the client cannot parse: JSON (or an SSE event's data, under ``event`` for
    APIs whose events are named) cut off mid-object."""
    if stream:
        head = f"event: {event}\n" if event else ""
        return sse_response(iter([f'{head}data: {{"type": "{event or "chunk"}", "id": [\n\n']))
    return Response(b'{"id": "cut-off", "choices": [', media_type="application/json")


def dropped_response(first: str, media_type: str) -> StreamingResponse:
    """A 200 that sends ``first`` (the answer's first event, or the start of its JSON),
    then the server drops the connection."""

    async def body() -> AsyncIterator[str]:
        yield first
        raise DroppedConnection("stand-in fault: the connection drops mid-answer")

    return StreamingResponse(body(), media_type=media_type)


class DroppedConnection(Exception):
    """Raised inside a response body so the server aborts the connection mid-answer."""


class _QuietDrops(logging.Filter):
    """A dropped connection is the fault a test asked for, not a server error to log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], DroppedConnection))


class HttpServerThread:
    """``uvicorn`` serving ``app`` on 127.0.0.1 (a free port) from a daemon thread."""

    def __init__(self, app: ASGIApp, name: str = "http-standin") -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
        uvicorn_errors = logging.getLogger("uvicorn.error")
        if not any(isinstance(f, _QuietDrops) for f in uvicorn_errors.filters):
            uvicorn_errors.addFilter(_QuietDrops())
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, daemon=True, name=name)

    def _run(self) -> None:
        asyncio.run(self.server.serve(sockets=[self.sock]))

    def start(self) -> HttpServerThread:
        self._thread.start()
        for _ in range(1000):
            if self.server.started or not self._thread.is_alive():
                break
            threading.Event().wait(0.01)
        if not self.server.started:
            raise RuntimeError("HTTP stand-in did not start within 10 s")
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(10)
        with contextlib.suppress(OSError):
            self.sock.close()

    def __enter__(self) -> HttpServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def sse(data: Any, event: str | None = None) -> str:
    """One server-sent event; ``data`` is JSON-encoded unless it is already a string."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n"


def sse_response(events: Iterable[str] | AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(
        events,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "Connection": "keep-alive"},
    )


def pieces(text: str, size: int = STREAM_PIECE_CHARS) -> list[str]:
    """``text`` cut at word boundaries into deltas of about ``size`` characters (joined,
    they give ``text`` back exactly)."""
    out: list[str] = []
    current = ""
    for word in re.findall(r"\S+\s*|\s+", text):
        if current and len(current) + len(word) > size:
            out.append(current)
            current = ""
        current += word
    if current:
        out.append(current)
    return out


async def json_body(request: Request) -> dict[str, Any] | None:
    """The request's JSON object, or None when the body is not one."""
    try:
        body = await request.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def error_response(
    status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers=headers)
