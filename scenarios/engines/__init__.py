"""Domain tool engines. Each domain package registers its tool table here.

A tool is a plain function ``fn(params, db, call_index) -> dict`` that validates its
own parameters, mutates ``db`` in place and returns the reference's response dict
(``{"status": "success", ...}`` or ``{"status": "error", "error_type": ..., "message": ...}``).

A domain is a subpackage here (``DOMAIN_TOOLS.add("<name>", tools)`` in its
``__init__``) or an ``evaflow.domains`` entry point of another package; the list of
domains is the registry's names, written nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evaflow_core.registry import Registry

ToolFn = Callable[[dict[str, Any], dict[str, Any], int], dict[str, Any]]

DOMAIN_TOOLS: Registry[dict[str, ToolFn]] = Registry(
    "domain", package=__name__, entry_point_group="evaflow.domains"
)


def known_domains() -> tuple[str, ...]:
    """Every registered domain, by name."""
    return tuple(DOMAIN_TOOLS.names())


def domain_tools(domain: str) -> dict[str, ToolFn]:
    """The tool table of ``domain`` (unknown names list the valid ones)."""
    return DOMAIN_TOOLS.get(domain)


def __getattr__(name: str) -> tuple[str, ...]:
    # ``KNOWN_DOMAINS`` is derived on access, so plug-in domains are in it.
    if name == "KNOWN_DOMAINS":
        return known_domains()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
