"""Fitted parameters of the offline rules, and the procedure that fits them.

Every number or switch of an offline rule that was (or could be) chosen by looking at human
labels is a field of a small parameter model (:class:`RuleParams`, one per judged metric, in
``tasks.judges.offline.params``), declared with :func:`tunable`: its search grid and its
*prior*, the value the fit starts from. The prior never comes from the labels: it is the
spec's figure where EVA_SPEC states one, else the middle of the grid. The model's defaults
are the fit on all of the project's labels (``tasks.judge_fit``), so a refit that moves them
is visible as a change to that one file.

A rule splits in two: *measuring* (what the conversation contains, the expensive part, no
parameter involved) produces :class:`Finding` records; *deciding* (cheap) turns findings into
ratings with the parameters. The fit measures each labelled item once and then searches the
parameters by deterministic coordinate ascent (:func:`coordinate_ascent`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field

Rating = Literal[1, 2, 3]  # what a finding costs its dimension; 3 = not counted
RATINGS: tuple[Rating, ...] = (1, 2, 3)
MAX_ROUNDS = 8  # coordinate-ascent sweeps; each sweep must strictly improve to continue


def tunable(default: Any, grid: tuple[Any, ...], why: str, prior: Any = None) -> Any:
    """A fitted field: ``default`` (the fit on all labels), the ``grid`` searched and the
    label-free ``prior`` the search starts from (None: the middle of the grid)."""
    start = grid[len(grid) // 2] if prior is None else prior
    if start not in grid or default not in grid:
        raise ValueError(f"prior {start!r} and default {default!r} must be in the grid {grid}")
    extra = {"grid": list(grid), "prior": start}
    return Field(default=default, description=why, json_schema_extra=extra)


class Finding(BaseModel):
    """One thing a rule measured in a conversation. Whether it counts, and how much, is
    decided by the parameters: ``kind`` names the parameter holding its rating,
    ``measures`` hold the quantities a fitted threshold is compared with."""

    kind: str = Field(description="Which check found it; a Rating field of the params")
    dimension: str = Field(description="The rubric dimension it belongs to")
    turn: int
    evidence: str
    measures: dict[str, float] = Field(default_factory=dict)


class RuleParams(BaseModel):
    """Base of the per-metric parameter models: frozen, every field :func:`tunable`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def space(cls) -> dict[str, tuple[Any, ...]]:
        """Field -> grid, in declaration order (the order the fit visits them)."""
        return {name: tuple(_extra(cls, name)["grid"]) for name in cls.model_fields}

    @classmethod
    def prior(cls) -> Self:
        """The label-free starting point of the fit."""
        return cls(**{name: _extra(cls, name)["prior"] for name in cls.model_fields})

    @classmethod
    def resolve(cls, metric: str, judge_params: Mapping[str, Any]) -> Self:
        """The defaults with the judge's overrides for ``metric`` (``params[metric]``)."""
        overrides = judge_params.get(metric) or {}
        if not isinstance(overrides, Mapping):
            raise ValueError(f"offline judge params[{metric!r}] must be a mapping")
        return cls(**dict(overrides))

    def overrides(self) -> dict[str, Any]:
        """The fields that differ from the defaults (what a non-default judge changed)."""
        default = type(self)()
        return {k: v for k, v in self.model_dump().items() if getattr(default, k) != v}


def _extra(cls: type[BaseModel], name: str) -> dict[str, Any]:
    extra = cls.model_fields[name].json_schema_extra
    if not isinstance(extra, dict) or "grid" not in extra:
        raise TypeError(f"{cls.__name__}.{name} is not declared with tunable()")
    return extra


P = TypeVar("P", bound=RuleParams)
Score = tuple[float, ...]


def coordinate_ascent(start: P, objective: Callable[[P], Score], rounds: int = MAX_ROUNDS) -> P:
    """Maximise ``objective`` one field at a time over its grid, in declaration order,
    accepting only strict improvements, until a full sweep changes nothing. Deterministic:
    the same start and objective give the same parameters."""
    best, best_score = start, objective(start)
    for _ in range(rounds):
        improved = False
        for name, grid in type(start).space().items():
            for value in grid:
                if value == getattr(best, name):
                    continue
                candidate = best.model_copy(update={name: value})
                score = objective(candidate)
                if score > best_score:
                    best, best_score, improved = candidate, score, True
        if not improved:
            break
    return best
