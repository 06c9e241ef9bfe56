"""``python -m tasks.systems.pipecat_bot --port P --system-json FILE``: serve the bot.

Checks the system before listening (an unknown provider exits with status 2 and a message
naming it and the valid ones), then serves ``ws://127.0.0.1:P/ws`` until killed. It exits
when its parent process dies, so a killed benchmark run leaves no bot behind.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import signal
import sys
from pathlib import Path

PARENT_POLL_S = 1.0
PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Linux: the kernel sends SIGTERM when the parent dies; elsewhere a poll does it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


async def watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        await asyncio.sleep(PARENT_POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tasks.systems.pipecat_bot")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--system-json", type=Path, required=True)
    args = parser.parse_args(argv)
    die_with_parent()
    from tasks.systems.pipecat_bot.pipeline import ProviderError

    try:
        asyncio.run(serve(args.port, args.host, args.system_json))
    except (ProviderError, ValueError, OSError) as exc:
        print(f"pipecat bot: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
