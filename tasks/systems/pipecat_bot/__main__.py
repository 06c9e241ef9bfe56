"""``python -m tasks.systems.pipecat_bot --port P --system-json FILE``: serve the bot.

Checks the system before listening (an unknown provider exits with status 2 and a message
naming it and the valid ones), then serves ``ws://127.0.0.1:P/ws`` until killed. It exits
when its parent process dies, so a killed benchmark run leaves no bot behind.

``--check --system-json FILE`` builds every component's service without a call
(:mod:`tasks.systems.pipecat_bot.check`): one JSON line per component on stdout
(``{"component", "ok", "detail"}``) and, for each failure, one ``pipecat bot: COMPONENT:
CAUSE`` line on stderr; exit status 0 when all were built, 2 otherwise (also for a system
that cannot be built at all: unknown provider, missing role).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

PARENT_POLL_S = 1.0


async def watch_parent(parent: int) -> None:
    """Exit once reparented. (Not PR_SET_PDEATHSIG: it fires when the parent THREAD that
    started the bot ends, and harness threads come and go.)"""
    while os.getppid() == parent:
        await asyncio.sleep(PARENT_POLL_S)
    os._exit(0)  # nobody is left to talk to: no graceful shutdown to wait for


async def serve(port: int, host: str, system_json: Path) -> None:
    import uvicorn

    from tasks.systems.pipecat_bot.app import build_app
    from tasks.systems.pipecat_bot.pipeline import SystemParams, check_system, warm_up

    system = SystemParams.model_validate(json.loads(system_json.read_text()))
    check_system(system)
    await asyncio.to_thread(warm_up, system)
    watcher = asyncio.create_task(watch_parent(os.getppid()))
    config = uvicorn.Config(build_app(system), host=host, port=port, log_level="warning")
    try:
        await uvicorn.Server(config).serve()
    finally:
        watcher.cancel()


def check(system_json: Path) -> int:
    """Build without a call; report per component (see the module docstring)."""
    from tasks.systems.pipecat_bot.check import check_components
    from tasks.systems.pipecat_bot.pipeline import SystemParams, check_system

    system = SystemParams.model_validate(json.loads(system_json.read_text()))
    check_system(system)
    found = asyncio.run(check_components(dict(system.components)))
    for item in found:
        print(json.dumps(item), flush=True)
        if not item["ok"]:
            print(f"pipecat bot: {item['component']}: {item['detail']}", file=sys.stderr)
    return 0 if all(item["ok"] for item in found) else 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tasks.systems.pipecat_bot")
    parser.add_argument("--port", type=int)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--system-json", type=Path, required=True)
    parser.add_argument(
        "--check", action="store_true", help="build every component without a call, then exit"
    )
    args = parser.parse_args(argv)
    if args.port is None and not args.check:
        parser.error("--port is required (unless --check)")
    from pydantic import ValidationError

    from tasks.systems.pipecat_bot.components import ProviderError

    if args.check:
        try:
            return check(args.system_json)
        except (ProviderError, ValidationError, ValueError, OSError) as exc:
            print(f"pipecat bot: {' '.join(str(exc).split())}", file=sys.stderr)
            return 2
    try:
        asyncio.run(serve(args.port, args.host, args.system_json))
    except (ProviderError, ValueError, OSError) as exc:
        print(f"pipecat bot: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
