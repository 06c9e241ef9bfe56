"""Fit the offline judges' parameters to human labels, and cross-validate that fit.

Each judged metric with fitted parameters (``tasks.judges.offline.params``) is a
:class:`Problem`: it *measures* every labelled item once (the rule's findings or counts, no
parameter involved), *predicts* an item's ratings from the measurement and a parameter set,
and turns predictions into agreement figures. :func:`fit` searches the parameters by
coordinate ascent from their label-free prior, maximising linear-weighted kappa then
accuracy (lenient entity F1 then correctness-with-penalty for key entities) on the items
it is given, and nothing else.

:func:`cross_validate` (k folds, default 5): items are grouped by conversation (variants of
one conversation, which share their opening caller line, form one group; a conciseness or
key-entity row is one conversation) and a group's fold is a seeded hash of its key, so
folds are fixed before anything is scored and a conversation never straddles two folds.
Each fold is scored with parameters fitted on the other folds only; predictions are pooled
over the folds. The report also gives the in-sample figures of the shipped defaults (fitted
on all labels) for comparison, and the fit on all labels, which should equal the defaults.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from tasks.judge_validation import (
    SET_FILES,
    agent_config,
    conciseness_trace,
    conversation_input,
    rated_conversations,
    read_jsonl,
)
from tasks.judges.agreement import accuracy, weighted_kappa
from tasks.judges.offline.experience import assistant_texts, rate_turn, turn_features
from tasks.judges.offline.faithfulness import collect_issues, decide_faithfulness
from tasks.judges.offline.params import ConcisenessParams, FaithfulnessParams, ProgressionParams
from tasks.judges.offline.progression import decide_progression, measure_progression
from tasks.judges.offline.tuning import RuleParams, Score, coordinate_ascent

K_FOLDS = 5
SEED = 0  # fixed before any fold was scored; any seed gives honest (if different) folds
Prediction = list[int | None]


class Item(BaseModel):
    """One labelled unit of a set: a conversation (its labels: one overall rating, or one
    per agent turn) with the rule's measurement of it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    group: str = Field(description="Conversation key: items of a group share a fold")
    labels: list[int]
    measured: Any = Field(description="What the rule measured; parameters decide the rest")


class Figures(BaseModel):
    n: int = Field(description="Labels compared")
    accuracy: float | None = None
    kappa: float | None = Field(default=None, description="Linear-weighted Cohen's kappa")
    entity_f1_lenient: float | None = None
    correctness_with_penalty: float | None = None


class Problem(Protocol):
    @property
    def metric(self) -> str: ...

    @property
    def params(self) -> type[RuleParams]: ...

    def items(self, set_dir: Path) -> list[Item]: ...

    def predict(self, item: Item, p: Any) -> Any: ...

    def figures(self, items: Sequence[Item], preds: Sequence[Any]) -> Figures: ...

    def objective(self, figures: Figures) -> Score: ...


def _group_key(text: str) -> str:
    return " ".join(text.casefold().split())


def first_caller_line(row: dict[str, Any]) -> str:
    """A conversation's opening caller line: the key its variants share."""
    for event in row.get("trace") or []:
        if event.get("event_type") == "user_utterance":
            return _group_key(str(event.get("utterance", "")))
    return f"row {row.get('id')}"


class RatedProblem:
    """Shared by the 1-3 rated sets: figures are accuracy and kappa over pooled labels."""

    metric = ""
    params: type[RuleParams] = RuleParams

    def figures(self, items: Sequence[Item], preds: Sequence[Prediction]) -> Figures:
        pairs = [
            (label, pred)
            for item, predicted in zip(items, preds, strict=True)
            for label, pred in zip(item.labels, predicted, strict=True)
            if pred is not None
        ]
        labels, judged = [a for a, _ in pairs], [b for _, b in pairs]
        return Figures(
            n=len(pairs),
            accuracy=accuracy(labels, judged),
            kappa=weighted_kappa(labels, judged, [1, 2, 3]),
        )

    def objective(self, figures: Figures) -> Score:
        return (_or(figures.kappa, -1.0), _or(figures.accuracy, 0.0))


def _or(value: float | None, fallback: float) -> float:
    return fallback if value is None else value


class ConversationProblem(RatedProblem):
    """Faithfulness or conversation progression: one overall rating per conversation."""

    def __init__(
        self,
        metric: str,
        params: type[RuleParams],
        measure: Callable[[Any], Any],
        decide: Callable[[Any, Any], dict[str, Any]],
    ) -> None:
        self.metric, self.params, self._measure, self._decide = metric, params, measure, decide

    def items(self, set_dir: Path) -> list[Item]:
        config = agent_config(set_dir)
        rows = rated_conversations(read_jsonl(set_dir / SET_FILES[self.metric]))
        return [
            Item(
                group=first_caller_line(row),
                labels=[int(row["expected_rating"])],
                measured=self._measure(conversation_input(row, config)),
            )
            for row in rows
        ]

    def predict(self, item: Item, p: Any) -> Prediction:
        return [int(self._decide(item.measured, p)["rating"])]


class ConcisenessProblem(RatedProblem):
    """One rating per labelled agent turn; measured: (turn features, is final) or None."""

    metric = "conciseness"
    params = ConcisenessParams

    def items(self, set_dir: Path) -> list[Item]:
        out = []
        for number, row in enumerate(read_jsonl(set_dir / SET_FILES[self.metric])):
            turns, trace = conciseness_trace(row)
            texts = assistant_texts(trace)
            last = max(texts, default=None)
            labels, measured = [], []
            for turn, entry in zip(turns, trace, strict=True):
                if turn.get("role") == "user" or turn.get("expected_rating") not in (1, 2, 3):
                    continue
                labels.append(int(turn["expected_rating"]))
                text = texts.get(entry.turn_id)
                measured.append((turn_features(text), entry.turn_id == last) if text else None)
            key = str(row.get("conversation_id") or f"row {number}")
            out.append(Item(group=key, labels=labels, measured=measured))
        return out

    def predict(self, item: Item, p: Any) -> Prediction:
        return [None if m is None else rate_turn(m[0], m[1], p)[0] for m in item.measured]


def problems() -> dict[str, Problem]:
    """Every metric whose offline rule has fitted parameters."""
    from tasks.judge_fit_entities import KeyEntityProblem

    found: list[Problem] = [
        ConversationProblem(
            "faithfulness", FaithfulnessParams, collect_issues, decide_faithfulness
        ),
        ConversationProblem(
            "conversation_progression", ProgressionParams, measure_progression, decide_progression
        ),
        ConcisenessProblem(),
        KeyEntityProblem(),
    ]
    return {p.metric: p for p in found}


def evaluate(problem: Problem, items: Sequence[Item], p: Any) -> Figures:
    return problem.figures(items, [problem.predict(item, p) for item in items])


def fit(problem: Problem, items: Sequence[Item]) -> RuleParams:
    """The parameters that agree best with ``items``' labels (and only theirs)."""
    return coordinate_ascent(
        problem.params.prior(), lambda p: problem.objective(evaluate(problem, items, p))
    )


def fold_of(group: str, k: int = K_FOLDS, seed: int = SEED) -> int:
    digest = hashlib.sha256(f"{seed}\n{group}".encode()).hexdigest()
    return int(digest, 16) % k


class FoldFit(BaseModel):
    fold: int
    items: int = Field(description="Items scored in this fold")
    params: dict[str, Any] = Field(description="Fitted on the other folds; fields != defaults")


class JudgeCV(BaseModel):
    metric: str
    items: int
    groups: int
    cv: Figures = Field(description="Pooled over folds, each fitted on the other folds")
    in_sample: Figures = Field(description="The shipped defaults (fitted on all labels)")
    fit_all: dict[str, Any] = Field(
        description="The fit on all labels where it differs from the defaults ({}: in sync)"
    )
    folds: list[FoldFit]


class CVReport(BaseModel):
    k: int
    seed: int
    judges: dict[str, JudgeCV] = Field(default_factory=dict)


def cross_validate_items(
    problem: Problem, items: Sequence[Item], k: int = K_FOLDS, seed: int = SEED
) -> JudgeCV:
    folds = [fold_of(item.group, k, seed) for item in items]
    preds: list[Any] = [None] * len(items)
    fits = []
    for fold in range(k):
        train = [item for item, f in zip(items, folds, strict=True) if f != fold]
        params = fit(problem, train)
        scored = [i for i, f in enumerate(folds) if f == fold]
        for i in scored:
            preds[i] = problem.predict(items[i], params)
        fits.append(FoldFit(fold=fold, items=len(scored), params=params.overrides()))
    return JudgeCV(
        metric=problem.metric,
        items=len(items),
        groups=len({item.group for item in items}),
        cv=problem.figures(items, preds),
        in_sample=evaluate(problem, items, problem.params()),
        fit_all=fit(problem, items).overrides(),
        folds=fits,
    )


def cross_validate(
    set_dir: Path, k: int = K_FOLDS, seed: int = SEED, metrics: list[str] | None = None
) -> CVReport:
    """k-fold cross-validation of every fitted offline judge (or only ``metrics``) on the
    labelled sets in ``set_dir``; a set that is missing is left out."""
    if k < 2:
        raise ValueError(f"cross-validation needs at least 2 folds (got {k})")
    available = problems()
    unknown = [m for m in metrics or [] if m not in available]
    if unknown:
        raise ValueError(f"no fitted offline judge for {unknown}; valid: {', '.join(available)}")
    report = CVReport(k=k, seed=seed)
    for metric, problem in available.items():
        if (metrics and metric not in metrics) or not (set_dir / SET_FILES[metric]).is_file():
            continue
        report.judges[metric] = cross_validate_items(problem, problem.items(set_dir), k, seed)
    return report
