"""The airline tool engine (EVA spec 2.2-2.5): 15 tools over a scenario DB.

Importing this package registers its tool table as ``DOMAIN_TOOLS["airline"]``;
``scenarios.executor.ToolEngine("airline", db)`` is the way to run it.
"""

from __future__ import annotations

from scenarios.engines import DOMAIN_TOOLS, ToolFn
from scenarios.engines.airline import ancillaries, compensation, lookups, rebooking
from scenarios.engines.airline.common import AIRLINE_TOOLS

# The modules above register their tools on import; keep them referenced for linters.
_TOOL_MODULES = (lookups, rebooking, ancillaries, compensation)

TOOLS: dict[str, ToolFn] = {name: AIRLINE_TOOLS.get(name) for name in AIRLINE_TOOLS}

DOMAIN_TOOLS.add("airline", TOOLS)

__all__ = ["TOOLS"]
