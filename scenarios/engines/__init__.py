"""Domain tool engines. Each domain package registers its tool table here.

A tool is a plain function ``fn(params, db, call_index) -> dict`` that validates its
own parameters, mutates ``db`` in place and returns the reference's response dict
(``{"status": "success", ...}`` or ``{"status": "error", "error_type": ..., "message": ...}``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from evaflow_core.registry import Registry

ToolFn = Callable[[dict[str, Any], dict[str, Any], int], dict[str, Any]]

DOMAIN_TOOLS: Registry[dict[str, ToolFn]] = Registry("domain")

KNOWN_DOMAINS = ("airline", "itsm", "medical_hr")


def domain_tools(domain: str) -> dict[str, ToolFn]:
    """The tool table of ``domain``, importing its engine package on first use."""
    if domain not in DOMAIN_TOOLS and domain in KNOWN_DOMAINS:
        importlib.import_module(f"scenarios.engines.{domain}")
    return DOMAIN_TOOLS.get(domain)
