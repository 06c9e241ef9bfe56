"""Whose failure a lost call is when the harness itself serves the agent.

A Pipecat system's bot (:mod:`tasks.systems.pipecat_process`) and the in-process agents
are started and served by the harness. A call socket to them that does not open, or a
server that dies mid-call, is a fault of the harness's infrastructure (status
``infra_error``, regenerated; issue 29), never the agent under test's disconnect. An
agent at the user's own URL that cannot be reached stays ``agent_disconnected``
(docs/agent-protocol.md section 6).
"""

from __future__ import annotations

import asyncio
import socket
import time
from urllib.parse import urlsplit

from tasks.records import EndReason

PROBES = 3  # a dying server's listener may outlive its call sockets by a moment
PROBE_GAP_S = 0.15


def still_serving(url: str) -> bool:
    """Whether the server at ``url`` still accepts connections (every probe succeeds)."""
    parts = urlsplit(url)
    address = (parts.hostname or "127.0.0.1", parts.port or (443 if parts.scheme == "wss" else 80))
    for probe in range(PROBES):
        if probe:
            time.sleep(PROBE_GAP_S)
        try:
            with socket.create_connection(address, timeout=0.5):
                pass
        except OSError:
            return False
    return True


async def harness_side(
    outcome: tuple[EndReason, str | None, float], url: str | None, connected: bool
) -> tuple[EndReason, str | None, float]:
    """An agent the harness itself serves (``url``: a Pipecat bot's process, an in-process
    agent) whose call socket did not open, or whose server went away mid-call, failed as
    the harness's infrastructure, not as the agent under test. A server still up closed
    the call itself: that stays the agent's disconnect."""
    reason, error, duration = outcome
    if url is None or reason != "agent_disconnected":
        return outcome
    if connected and await asyncio.to_thread(still_serving, url):
        return outcome
    what = "stopped serving" if connected else "could not be reached"
    return "harness_error", f"the agent server the harness runs ({url}) {what}: {error}", duration
