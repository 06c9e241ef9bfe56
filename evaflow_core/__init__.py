"""The lowest layer: what every evaflow package may import, and nothing of theirs.

``evaflow_core`` imports no other evaflow package, so ``scenarios``, ``perturbations``,
``tasks``, ``flows``, ``analysis`` and ``benchmarks`` can all build on it without an
import running back up. It holds the plug-in mechanism (:mod:`evaflow_core.registry`).
"""

from __future__ import annotations

from evaflow_core.registry import PluginLoadError, Registry, UnknownNameError

__all__ = ["PluginLoadError", "Registry", "UnknownNameError"]
