"""The ITSM tool engine (EVA spec 2.4 and 2.6): 59 IT-service-desk tools over one scenario DB.

Each area module registers its tools on :data:`ITSM_TOOLS` with ``@itsm_tool``; importing
them here builds :data:`TOOLS` and publishes it as the ``itsm`` domain of
:data:`scenarios.engines.DOMAIN_TOOLS`. Run one through :class:`scenarios.executor.ToolEngine`.
"""

from __future__ import annotations

from scenarios.engines import DOMAIN_TOOLS, ToolFn
from scenarios.engines.itsm import (  # noqa: F401 - imported for their @itsm_tool registrations
    accounts,
    approvals,
    auth,
    facilities,
    hardware,
    incidents,
    offboarding,
    permissions,
    rooms,
    security,
    software,
)
from scenarios.engines.itsm.common import ITSM_TOOLS, PARAM_MODELS, content_hash

TOOLS: dict[str, ToolFn] = {name: ITSM_TOOLS.get(name) for name in ITSM_TOOLS.names()}

DOMAIN_TOOLS.add("itsm", TOOLS)

__all__ = ["ITSM_TOOLS", "PARAM_MODELS", "TOOLS", "content_hash"]
