"""Headless Chromium driven over the Chrome DevTools Protocol, for the report's browser tests.

Protocol: https://chromedevtools.github.io/devtools-protocol/ (Target, Page, Runtime and Log
domains, flattened sessions over the browser's WebSocket endpoint).

Everything waits on the browser's own events (its "DevTools listening" line, the page's
``load`` lifecycle event, promises the page resolves from its media and image events); the
one deadline only bounds a hang, so a slow first start on a busy machine is not a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import re
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

# Flags this machine needs: no sandbox (root in a container), no GPU, no network side traffic.
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)  # fmt: skip
LISTENING = re.compile(r"DevTools listening on (ws://\S+)")
# Only bounds a hang (a browser that never starts or a page that never settles).
HANG_S = 120.0


@dataclass
class Page:
    """One attached tab: send commands, and everything the page said on its consoles."""

    ws: ClientConnection
    session: str = ""
    console: list[str] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _waiting: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    _events: list[dict[str, Any]] = field(default_factory=list)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _closed: bool = False

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        if self._closed:
            raise ConnectionError(f"DevTools connection closed before {method}")
        msg_id = next(self._ids)
        reply: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = reply
        msg: dict[str, Any] = {"id": msg_id, "method": method, "params": params}
        if self.session:
            msg["sessionId"] = self.session
        await self.ws.send(json.dumps(msg))
        return await reply

    async def attach(self) -> None:
        """Open a blank tab, attach to it and turn on the events the tests read."""
        target = await self.send("Target.createTarget", url="about:blank")
        attached = await self.send(
            "Target.attachToTarget", targetId=target["targetId"], flatten=True
        )
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            await self.send(f"{domain}.enable")
        await self.send("Page.setLifecycleEventsEnabled", enabled=True)
        # A hidden tab may defer media loading until shown; this one is in front.
        await self.send("Page.bringToFront")

    async def pump(self) -> None:
        """Route replies to their senders and keep every event (console ones as text)."""
        with contextlib.suppress(ConnectionClosed):
            async for raw in self.ws:
                msg = json.loads(raw)
                if "id" in msg:
                    self._reply(msg)
                    continue
                self._note_console(msg)
                self._events.append(msg)
                self._changed.set()
        # Nothing more will come: whatever still waits fails instead of hanging.
        self._closed = True
        self._changed.set()
        for reply in self._waiting.values():
            reply.set_exception(ConnectionError("DevTools connection closed"))
        self._waiting.clear()

    def _reply(self, msg: dict[str, Any]) -> None:
        reply = self._waiting.pop(msg["id"])
        if "error" in msg:
            reply.set_exception(RuntimeError(f"DevTools: {msg['error']}"))
        else:
            reply.set_result(msg.get("result", {}))

    def _note_console(self, msg: dict[str, Any]) -> None:
        params = msg.get("params", {})
        if msg.get("method") == "Runtime.consoleAPICalled":
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            self.console.append(f"console.{params['type']}: {args}")
        elif msg.get("method") == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.console.append(f"exception: {details.get('exception', {}).get('description')}")
        elif msg.get("method") == "Log.entryAdded":
            entry = params["entry"]
            if entry["level"] in ("warning", "error"):
                self.console.append(f"log.{entry['level']}: {entry['text']} {entry.get('url', '')}")

    async def event(self, method: str, **match: Any) -> dict[str, Any]:
        """The first event ``method`` (seen so far or still to come) whose params match."""
        while True:
            for msg in self._events:
                params = msg.get("params", {})
                if msg.get("method") == method and all(
                    params.get(k) == v for k, v in match.items()
                ):
                    return params
            if self._closed:
                raise ConnectionError(f"DevTools connection closed before {method} {match}")
            self._changed.clear()
            await self._changed.wait()

    async def open(self, url: str) -> None:
        """Navigate to ``url`` and return once its ``load`` event has fired (images included)."""
        nav = await self.send("Page.navigate", url=url)
        if nav.get("errorText"):
            raise RuntimeError(f"{url}: {nav['errorText']}")
        await self.event("Page.lifecycleEvent", name="load", loaderId=nav["loaderId"])

    async def evaluate(self, expression: str) -> Any:
        """The value of ``expression`` in the page, awaiting it if it is a promise."""
        done = await self.send(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in done:
            raise RuntimeError(f"page script failed: {done['exceptionDetails']}")
        return done["result"].get("value")


@contextlib.asynccontextmanager
async def chromium(binary: str, profile: Path) -> AsyncIterator[Page]:
    """A fresh headless Chromium (``profile`` a new user-data-dir) with one blank tab attached."""
    proc = await asyncio.create_subprocess_exec(
        binary, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    assert proc.stderr is not None
    stderr: list[str] = []
    drain: asyncio.Task[None] | None = None
    try:
        async with asyncio.timeout(HANG_S):
            url = await _devtools_url(proc.stderr, stderr)
        # The rest of stderr is drained so Chromium never blocks on a full pipe.
        drain = asyncio.create_task(_collect(proc.stderr, stderr))
        async with connect(
            url, max_size=None, proxy=None, open_timeout=None, ping_interval=None
        ) as ws:
            page = Page(ws)
            pump = asyncio.create_task(page.pump())
            async with asyncio.timeout(HANG_S):
                await page.attach()
            yield page
            page.session = ""
            async with asyncio.timeout(HANG_S):
                # Chromium may close the socket before it answers: that is the answer.
                with contextlib.suppress(ConnectionError, ConnectionClosed):
                    await page.send("Browser.close")
                await pump
        async with asyncio.timeout(HANG_S):
            await proc.wait()
    except BaseException as exc:
        said = [line for line in stderr if "dbus" not in line]  # no system bus in containers
        exc.add_note(f"chromium stderr (last lines): {said[-20:]}")
        raise
    finally:
        if proc.returncode is None:  # only after a failure: the whole browser, its own session
            os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
        if drain is not None:
            # A helper process of the browser could hold stderr open after it exits.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(drain, 10)


async def _devtools_url(stream: asyncio.StreamReader, lines: list[str]) -> str:
    while line := (await stream.readline()).decode(errors="replace"):
        lines.append(line.rstrip())
        if found := LISTENING.search(line):
            return found.group(1)
    raise RuntimeError("Chromium exited before its DevTools endpoint was up")


async def _collect(stream: asyncio.StreamReader, lines: list[str]) -> None:
    while line := await stream.readline():
        lines.append(line.decode(errors="replace").rstrip())
