"""The tool bridge: one trial's tools for an agent in another process (HTTP JSON and MCP).

An external agent cannot share the harness's :class:`~tasks.simulate.tools.gateway.EngineGateway`
object, so each trial gets a small HTTP server bound to loopback that forwards calls to it:

* ``GET  /tools``          -> the OpenAI function-calling schemas of the trial's tools;
* ``POST /tools/<name>``   -> the engine's response to a call with the JSON body as params
  (``<name>`` is the tool id or its OpenAI function name);
* ``POST /mcp``            -> an MCP server (streamable HTTP, stateless, JSON responses)
  with ``tools/list`` and ``tools/call`` over the same tools;
* ``GET  /scenario``       -> the resolved scenario, only when ``share_scenario`` is set (the
  trace-guided reference agent served with ``evaflow serve-agent`` needs it; a real agent
  under test must never see it). Sharing puts a ``scenario_shared`` event on the attempt
  (``scenario_read`` each time it is fetched), stored as the trials column
  ``scenario_shared``.

Every request must carry ``Authorization: Bearer <token>``, a random token minted for the
trial: missing -> 401, any other token -> 403. Every call goes through the trial's gateway,
which logs it with call and response times on the harness clock - the same clock as the
audio timeline - so the bridge adds nothing the agent could misreport.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from pydantic import BaseModel, ConfigDict, Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from scenarios.models import AgentConfig, Scenario
from scenarios.schema import function_name_map, openai_tool_schemas
from tasks.records import TimelineEvent
from tasks.simulate.tools.gateway import ToolGateway

# customParameters keys of the protocol's ``start`` message (docs/agent-protocol.md).
PARAM_TOOLS_URL = "tools_url"
PARAM_MCP_URL = "mcp_url"
PARAM_TOKEN = "tools_token"
PARAM_SCENARIO_URL = "scenario_url"
SCENARIO_SHARED = "scenario_shared"  # event kind: GET /scenario was served to the agent
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
STARTUP_TIMEOUT_S = 10.0


class BridgeConfig(BaseModel):
    """Where the bridge listens and what it exposes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = Field(default="127.0.0.1", description="Bind address (loopback by default)")
    port: int = Field(default=0, ge=0, le=65535, description="0 picks a free port")
    mcp: bool = Field(default=True, description="Also serve MCP (streamable HTTP) at /mcp")
    share_scenario: bool = Field(
        default=False, description="Serve GET /scenario (for trace-guided reference agents only)"
    )


class BridgeEndpoint(BaseModel):
    """How an agent reaches one trial's bridge."""

    model_config = ConfigDict(frozen=True)

    base_url: str = Field(description="http://host:port of the trial's bridge")
    token: str = Field(description="Bearer token scoping every request to this trial")
    mcp: bool = Field(default=True, description="An MCP endpoint is served at /mcp")
    share_scenario: bool = Field(default=False, description="GET /scenario is served")

    @property
    def tools_url(self) -> str:
        return f"{self.base_url}/tools"

    @property
    def mcp_url(self) -> str | None:
        return f"{self.base_url}/mcp" if self.mcp else None

    def start_parameters(self) -> dict[str, str]:
        """The ``start`` message ``customParameters`` that tell the agent where its tools are."""
        params = {PARAM_TOOLS_URL: self.tools_url, PARAM_TOKEN: self.token}
        if self.mcp_url:
            params[PARAM_MCP_URL] = self.mcp_url
        if self.share_scenario:
            params[PARAM_SCENARIO_URL] = f"{self.base_url}/scenario"
        return params


class TrialTools:
    """The tools of one trial as the bridge serves them: schemas, name routing, calls."""

    def __init__(
        self, gateway: ToolGateway, agent: AgentConfig, scenario: Scenario | None = None
    ) -> None:
        self.gateway = gateway
        self.schemas = openai_tool_schemas(agent)
        self.by_function = function_name_map(agent)
        self.scenario = scenario

    def tool_id(self, name: str) -> str:
        """Tool id for a tool id or an OpenAI function name; unknown names pass through so
        the engine answers them with its own ``tool_not_found`` error."""
        return self.by_function.get(name, name)

    async def call(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        # Off the event loop: the engine deep-copies the DB, which would delay audio frames.
        return await asyncio.to_thread(self.gateway.call, self.tool_id(name), params)


class BearerTokenMiddleware:
    """Refuses every HTTP request without the trial's token (401) or with another (403)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        scheme, _, presented = header.partition(" ")
        if scheme.lower() != "bearer" or not presented.strip():
            response: Response = _refusal(401, "missing bearer token")
        elif not secrets.compare_digest(presented.strip().encode(), self.token.encode()):
            response = _refusal(403, "token does not belong to this trial")
        else:
            await self.app(scope, receive, send)
            return
        await response(scope, receive, send)


def _refusal(status: int, message: str) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Bearer realm="evaflow-tools"'} if status == 401 else None
    return JSONResponse(
        {"status": "error", "error_type": "unauthorized", "message": message}, status, headers
    )


def _bad_request(message: str) -> JSONResponse:
    return JSONResponse({"status": "error", "error_type": "bad_request", "message": message}, 400)


def http_routes(tools: TrialTools) -> list[Route]:
    """The plain HTTP JSON endpoints."""

    async def list_tools(request: Request) -> Response:
        return JSONResponse(tools.schemas)

    async def call_tool(request: Request) -> Response:
        body = await request.body()
        try:
            params = json.loads(body) if body.strip() else {}
        except json.JSONDecodeError as exc:
            return _bad_request(f"request body is not JSON: {exc}")
        if not isinstance(params, dict):
            return _bad_request(f"request body must be a JSON object, got {type(params).__name__}")
        return JSONResponse(await tools.call(request.path_params["name"], params))

    async def scenario(request: Request) -> Response:
        if tools.scenario is None:
            return JSONResponse({"status": "error", "error_type": "not_shared"}, 404)
        mark_scenario_shared(tools.gateway, "scenario_read")
        return JSONResponse(tools.scenario.model_dump(mode="json"))

    return [
        Route("/tools", list_tools, methods=["GET"]),
        Route("/tools/{name}", call_tool, methods=["POST"]),
        Route("/scenario", scenario, methods=["GET"]),
    ]


def build_bridge_app(tools: TrialTools, token: str, config: BridgeConfig) -> ASGIApp:
    """The bridge as one ASGI app: HTTP JSON routes, optionally MCP, behind the token check."""
    routes = http_routes(tools)
    if not config.mcp:
        return BearerTokenMiddleware(Starlette(routes=routes), token)
    from tasks.simulate.tools.bridge_mcp import mcp_app

    return BearerTokenMiddleware(mcp_app(tools, routes, config.host), token)


class _QuietServer(uvicorn.Server):
    """A uvicorn server that leaves process signals alone: many run in one event loop."""

    def install_signal_handlers(self) -> None:  # pragma: no cover - older uvicorn hook
        return

    def capture_signals(self) -> Any:
        from contextlib import nullcontext

        return nullcontext()


def _listening_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def mark_scenario_shared(gateway: ToolGateway, kind: str) -> None:
    """Put on the attempt's timeline that its agent could read (or read) the whole scenario,
    expected database included (issue 32): stored rows, report and summary say so."""
    log = getattr(gateway, "log_event", None)
    if log is None:
        return
    now = getattr(gateway, "now", None)
    t_s = float(now()) if callable(now) else 0.0
    log(TimelineEvent(t_s=t_s, source="harness", kind=kind, data={"endpoint": "/scenario"}))


@asynccontextmanager
async def serve_tool_bridge(
    gateway: ToolGateway,
    agent: AgentConfig,
    config: BridgeConfig | None = None,
    scenario: Scenario | None = None,
) -> AsyncIterator[BridgeEndpoint]:
    """Serve one trial's tools for the duration of the ``async with`` block.

    ``scenario`` is served at ``/scenario`` only when ``config.share_scenario`` is set.
    """
    config = config or BridgeConfig()
    if config.share_scenario:
        mark_scenario_shared(gateway, SCENARIO_SHARED)
    token = secrets.token_urlsafe(32)
    tools = TrialTools(gateway, agent, scenario if config.share_scenario else None)
    app = build_bridge_app(tools, token, config)
    sock = _listening_socket(config.host, config.port)
    port = sock.getsockname()[1]
    server = _QuietServer(
        uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    )
    task = asyncio.create_task(server.serve(sockets=[sock]), name=f"tool-bridge:{port}")
    try:
        await _wait_started(server, task)
        yield BridgeEndpoint(
            base_url=f"http://{_url_host(config.host)}:{port}",
            token=token,
            mcp=config.mcp,
            share_scenario=config.share_scenario,
        )
    finally:
        server.should_exit = True
        try:
            await asyncio.wait_for(task, timeout=5.0)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
        finally:
            sock.close()


async def _wait_started(server: uvicorn.Server, task: asyncio.Task[None]) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STARTUP_TIMEOUT_S
    while not server.started:
        if task.done():
            task.result()  # re-raise the startup failure
            raise RuntimeError("tool bridge stopped during startup")
        if loop.time() > deadline:
            raise RuntimeError(f"tool bridge did not start within {STARTUP_TIMEOUT_S} s")
        await asyncio.sleep(0.005)
