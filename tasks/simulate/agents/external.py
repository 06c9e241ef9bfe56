"""``external``: any ws:// or wss:// agent (see :mod:`tasks.simulate.wire.external`)."""

from __future__ import annotations

from tasks.simulate.agents import AGENTS
from tasks.simulate.wire.external import ExternalAgent

AGENTS.add("external", ExternalAgent)  # type: ignore[arg-type]
