"""The MCP face of the tool bridge (streamable HTTP via the ``mcp`` package).

Stateless with JSON responses: every ``POST /mcp`` is self-contained, so many agents (or
one agent reconnecting) need no session bookkeeping, and the bearer-token middleware of
:mod:`tasks.simulate.tools.bridge` guards it like the plain HTTP routes.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp.server import Server
from starlette.applications import Starlette
from starlette.routing import Route

SERVER_NAME = "evaflow-tool-bridge"


def mcp_tools(schemas: list[dict[str, Any]]) -> list[types.Tool]:
    """OpenAI function schemas as MCP tool declarations (same names and parameters)."""
    return [
        types.Tool(
            name=s["function"]["name"],
            description=s["function"].get("description"),
            input_schema=s["function"]["parameters"],
        )
        for s in schemas
    ]


def mcp_app(tools: Any, routes: list[Route], host: str) -> Starlette:
    """A Starlette app serving MCP at ``/mcp`` plus the given plain routes.

    ``tools`` is a :class:`tasks.simulate.tools.bridge.TrialTools`.
    """
    declared = mcp_tools(tools.schemas)

    async def on_list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=declared)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        response = await tools.call(params.name, dict(params.arguments or {}))
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(response, ensure_ascii=False))],
            structured_content=response,
            is_error=response.get("status") == "error",
        )

    server: Server[Any] = Server(
        SERVER_NAME, version="1", on_list_tools=on_list_tools, on_call_tool=on_call_tool
    )
    return server.streamable_http_app(
        stateless_http=True, json_response=True, custom_starlette_routes=routes, host=host
    )
