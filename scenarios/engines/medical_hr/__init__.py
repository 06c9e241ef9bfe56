"""The medical_hr tool engine (EVA spec 2.4 and 2.7).

Importing this package registers every tool module's tools in ``MEDICAL_HR_TOOLS`` and
publishes the table as ``DOMAIN_TOOLS["medical_hr"]`` for :class:`scenarios.executor.ToolEngine`.
"""

from __future__ import annotations

from scenarios.engines import DOMAIN_TOOLS, ToolFn
from scenarios.engines.medical_hr import (  # noqa: F401 - imported to register their tools
    auth,
    credentialing,
    employee_records,
    provider_access,
    pto,
    scheduling,
    shifts,
)
from scenarios.engines.medical_hr.common import MEDICAL_HR_TOOLS, PARAM_MODELS

TOOLS: dict[str, ToolFn] = {name: MEDICAL_HR_TOOLS.get(name) for name in MEDICAL_HR_TOOLS}

DOMAIN_TOOLS.add("medical_hr", TOOLS)

__all__ = ["MEDICAL_HR_TOOLS", "PARAM_MODELS", "TOOLS"]
