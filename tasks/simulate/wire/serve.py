"""``serve_agent``: a registered in-process agent as a standalone WebSocket server.

Each incoming call is handled like this: read the caller's ``connected``/``start``, take the
tool bridge (and, for trace-guided agents, the shared scenario) from
``start.customParameters``, start the agent for that one call exactly as the in-process
harness would (``AgentDefinition.serve``) with an :class:`HttpToolGateway` as its tools,
then relay frames both ways until either side hangs up. The relay adds one loopback hop
(well under a millisecond), so what the harness measures is the agent's own timing.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from evaflow_core.registry import UnknownNameError
from tasks.simulate.agents import AgentContext, UnsupportedModeError, get_agent
from tasks.simulate.config import SimulationConfig
from tasks.simulate.tools.bridge_client import (
    BridgeParametersError,
    HttpToolGateway,
    fetch_scenario,
)
from tasks.simulate.wire.protocol import (
    MAX_MESSAGE_BYTES,
    ProtocolError,
    Start,
    parse_caller_message,
)
from tasks.simulate.wire.serve_timing import TurnTimer

START_TIMEOUT_S = 10.0
# Close codes (RFC 6455): 1008 policy violation, 1011 internal error.
CLOSE_POLICY = 1008
CLOSE_INTERNAL = 1011


class ServeError(RuntimeError):
    """The agent cannot be served (unknown name, unsupported mode, bad settings)."""


def call_config(name: str, params: dict[str, Any]) -> SimulationConfig:
    """The settings an agent served for one call runs with: known fields from ``params``,
    the rest as ``agent_params``."""
    fields = set(SimulationConfig.model_fields) - {"agent", "agent_params", "mode", "clock"}
    own = {k: v for k, v in params.items() if k in fields}
    rest = {k: v for k, v in params.items() if k not in fields}
    try:
        return SimulationConfig(
            agent=name, agent_params=rest, mode="audio", clock="realtime", **own
        )
    except ValidationError as exc:
        raise ServeError(f"bad settings for agent {name!r}: {exc}") from None


def check_servable(name: str) -> None:
    try:
        get_agent(name, "audio")
    except (UnknownNameError, UnsupportedModeError) as exc:
        raise ServeError(str(exc)) from None
    if name == "external":
        raise ServeError("agent 'external' is a client of another server; it cannot be served")


def warm_agent(name: str, agent_params: dict[str, Any]) -> None:
    """An agent's one-off start-up work (the ``llm`` agent: its params checked, LiteLLM
    imported) before the first call, whose caller would otherwise wait for it."""
    warm = getattr(get_agent(name, "audio"), "warm", None)
    if not callable(warm):
        return
    try:
        warm(agent_params)
    except ValueError as exc:
        raise ServeError(f"bad settings for agent {name!r}: {exc}") from None


async def read_until_start(ws: ServerConnection) -> tuple[list[str | bytes], Start]:
    """The frames up to and including ``start`` (to replay to the agent), and ``start``."""
    consumed: list[str | bytes] = []
    while True:
        raw = await asyncio.wait_for(ws.recv(), timeout=START_TIMEOUT_S)
        consumed.append(raw)
        message = parse_caller_message(raw)
        if isinstance(message, ProtocolError):
            raise BridgeParametersError(f"bad opening frame: {message.reason}")
        if isinstance(message, Start):
            return consumed, message


async def relay(
    source: ServerConnection | ClientConnection,
    sink: Any,
    watch: Callable[[Any], list[str] | None],
) -> None:
    with contextlib.suppress(ConnectionClosed):
        async for raw in source:
            await sink.send(raw)
            try:
                extra = watch(raw) or []
            except Exception:  # noqa: BLE001 - diagnostics must never break the call
                extra = []
            for message in extra:
                await sink.send(message)


async def relay_call(
    outer: ServerConnection, inner: ClientConnection, timer: TurnTimer | None = None
) -> None:
    """Forward frames both ways; when one side ends, end the other the same way.

    With a ``timer``, the agent's response times go to the caller as ``agent_timing``.
    """
    timer = timer or TurnTimer()
    up = asyncio.create_task(relay(outer, inner, timer.on_caller))  # type: ignore[arg-type]
    down = asyncio.create_task(relay(inner, outer, timer.on_agent))
    done, pending = await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    closer = outer if down in done else inner
    code = (inner if down in done else outer).close_code
    with contextlib.suppress(ConnectionClosed, OSError):
        if code is None or code == 1006:
            closer.transport.abort()  # the other side vanished: so does this one
        else:
            await asyncio.wait_for(closer.close(code), timeout=2.0)


async def handle_call(ws: ServerConnection, name: str, params: dict[str, Any]) -> None:
    try:
        consumed, start = await read_until_start(ws)
        parameters = dict(start.start.customParameters)
        tools = HttpToolGateway.from_start_parameters(parameters)
        scenario = await asyncio.to_thread(fetch_scenario, parameters)
    except (BridgeParametersError, TimeoutError, ConnectionClosed, OSError) as exc:
        print(f"serve-agent: refusing call: {exc}", file=sys.stderr, flush=True)
        with contextlib.suppress(ConnectionClosed):
            await ws.close(CLOSE_POLICY, str(exc)[:120])
        return
    ctx = AgentContext(scenario=scenario, tools=tools, config=call_config(name, params))
    try:
        async with (
            get_agent(name, "audio").serve(ctx) as inner_url,
            connect(inner_url, max_size=MAX_MESSAGE_BYTES, compression=None) as inner,
        ):
            timer = TurnTimer()
            for raw in consumed:
                timer.on_caller(raw)
                await inner.send(raw)
            await relay_call(ws, inner, timer)
    except Exception as exc:  # noqa: BLE001 - one broken call must not stop the server
        print(f"serve-agent: call failed: {exc!r}", file=sys.stderr, flush=True)
        with contextlib.suppress(ConnectionClosed):
            await ws.close(CLOSE_INTERNAL, "agent failure")
    finally:
        tools.close()


async def serve_agent_async(
    name: str,
    host: str = "127.0.0.1",
    port: int = 0,
    params: dict[str, Any] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve until ``stop`` is set; prints ``listening on ws://host:port`` when ready."""
    check_servable(name)
    settings = dict(params or {})
    config = call_config(name, settings)  # fail at startup, not on the first call
    await asyncio.to_thread(warm_agent, name, config.agent_params)
    stop = stop or asyncio.Event()

    async def on_connect(ws: ServerConnection) -> None:
        await handle_call(ws, name, settings)

    async with serve(
        on_connect, host, port, max_size=MAX_MESSAGE_BYTES, compression=None
    ) as server:
        bound = next(iter(server.sockets)).getsockname()
        print(f"listening on ws://{host}:{bound[1]}", flush=True)
        await stop.wait()


def serve_agent(
    name: str, host: str = "127.0.0.1", port: int = 8765, params: dict[str, Any] | None = None
) -> None:
    """Blocking entry point; SIGINT/SIGTERM stop the server cleanly."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        await serve_agent_async(name, host, port, params, stop)

    asyncio.run(main())
