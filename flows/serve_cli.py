"""``evaflow serve-agent AGENT --port P``: serve a registered agent as a standalone server.

Registered on the main Typer app by import (``flows.cli.main`` imports this module).
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from flows.app import app, fail


def _params(items: list[str] | None) -> dict[str, object]:
    """``--param key=value`` pairs; values are parsed as JSON when they are JSON."""
    params: dict[str, object] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            fail(f"--param expects key=value, got {item!r}")
        try:
            params[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            params[key.strip()] = value
    return params


@app.command("serve-agent")
def serve_agent_command(
    agent: Annotated[str, typer.Argument(help="Agent name in the AGENTS registry, e.g. reference")],
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="TCP port (0 picks a free one)")
    ] = 8765,
    host: Annotated[str, typer.Option("--host", help="Bind address")] = "127.0.0.1",
    param: Annotated[
        list[str] | None,
        typer.Option("--param", help="Agent setting key=value (JSON values allowed); repeatable"),
    ] = None,
) -> None:
    """Serve AGENT over the agent protocol (docs/agent-protocol.md) until interrupted.

    Each call's tools come from the tool bridge named in its ``start`` message. Prints
    ``listening on ws://HOST:PORT`` once ready.
    """
    from tasks.simulate.wire.serve import ServeError, serve_agent

    try:
        serve_agent(agent, host=host, port=port, params=_params(param))
    except ServeError as exc:
        fail(str(exc))
    except OSError as exc:  # binding: an unknown host, a port in use or not allowed
        fail(f"cannot listen on --host {host} --port {port}: {exc.strerror or exc}")
