"""Perturbation kinds beyond the built-in axes: registered, named in conditions by key.

A kind is a name, a pydantic params model, a pure ``apply(clip, params, rng) -> Clip``
and its place in the chain a caller utterance goes through (``order``). The built-in
axes keep their places: background noise at :data:`NOISE_ORDER`, the connection at
:data:`CONNECTION_ORDER`; a kind with ``order`` 150 acts on the noisy speech before the
phone line degrades it. A condition names a kind by its key, like the built-ins::

    conditions:
      - name: quiet-voice
        volume: {db: -12}

Adding one is one module with ``@perturbation_kind(...)`` (and, from another package, an
``evaflow.perturbations`` entry point). Each kind draws from its own random stream,
``(seed, <name>, "utterance", k)``, so adding one never moves what the others draw.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel

from evaflow_core.registry import Registry
from perturbations.audio import Clip

NOISE_ORDER = 100.0
CONNECTION_ORDER = 200.0

ApplyFn = Callable[[Clip, Any, np.random.Generator], Clip]
# (n_samples, rate, params, rng of the gap, samples already sent in the gap) -> open-mic audio
AmbientFn = Callable[[int, int, Any, np.random.Generator, int], Clip]
PrepareFn = Callable[[Any], None]  # costly set-up, run when a channel is made (before the call)


@dataclass(frozen=True)
class PerturbationKind:
    """A registered kind: the key conditions use, its params model, apply and place."""

    name: str
    params: type[BaseModel]
    apply: ApplyFn
    order: float
    # What the open mic sends while the caller is silent (None: the kind leaves it alone).
    ambient: AmbientFn | None = None
    prepare: PrepareFn | None = None


PERTURBATIONS: Registry[PerturbationKind] = Registry(
    "perturbation kind", entry_point_group="evaflow.perturbations"
)
# Keys a kind may not take: ConditionSpec's own fields.
RESERVED = frozenset(
    {"name", "version", "description", "accent", "noise", "connection", "interaction", "persona"}
)


def perturbation_kind(
    name: str,
    params: type[BaseModel],
    order: float,
    ambient: AmbientFn | None = None,
    prepare: PrepareFn | None = None,
) -> Callable[[ApplyFn], ApplyFn]:
    """Decorator registering ``apply(clip, params, rng) -> Clip`` as the kind ``name``."""
    if name in RESERVED:
        raise ValueError(f"perturbation kind {name!r}: the name is a ConditionSpec field")
    if order in (NOISE_ORDER, CONNECTION_ORDER):
        raise ValueError(f"perturbation kind {name!r}: order {order} is a built-in's place")

    def decorator(fn: ApplyFn) -> ApplyFn:
        PERTURBATIONS.add(name, PerturbationKind(name, params, fn, order, ambient, prepare))
        return fn

    return decorator
