"""What every workflow module shares: the case catalogue and the per-record context.

A *case* is one workflow taken down one path (success, authentication failure,
no availability, policy refusal). Each domain module registers its ordered tuple of
cases in :data:`DOMAIN_CASES`; record ``i`` of a generated pack uses case
``i mod len(cases)``, so any pack at least as large as the catalogue covers them all.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from evaflow_core.registry import Registry
from scenarios.generate.record import Draft, PathKind


@dataclass(frozen=True)
class FlowContext:
    """Inputs of one record: its id, its private random stream and the agent's tools."""

    record_id: str
    rng: random.Random
    tool_names: list[str]


FlowFn = Callable[[FlowContext], Draft]


@dataclass(frozen=True)
class Case:
    """One workflow down one path, e.g. ``voluntary_change`` / ``auth_failure``."""

    workflow: str
    path: PathKind
    variant: str
    build: FlowFn

    @property
    def name(self) -> str:
        return f"{self.workflow}/{self.variant}"


DOMAIN_CASES: Registry[tuple[Case, ...]] = Registry(
    "scenario domain", package="scenarios.generate", entry_point_group="evaflow.domains"
)

CLOSING_QUESTION = "Is there anything else I can help you with today?"
GOODBYES = (
    "No, that's everything. Thank you so much, goodbye.",
    "No, that's all I needed. Thanks for your help, goodbye.",
    "Nope, that covers it. Thank you, goodbye.",
    "That's it for today. I appreciate it, goodbye.",
)


def goodbye(rng: random.Random) -> str:
    return rng.choice(GOODBYES)


def pick(rng: random.Random, *options: str) -> str:
    return rng.choice(options)
