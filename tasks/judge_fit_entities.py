"""The key-entity judge as a fitting problem (see ``tasks.judge_fit``): which entity kinds
to report and whether adjacent-turn drift counts (``KeyEntityParams``), scored like
``tasks.judge_validation`` scores it (lenient F1, then correctness with penalty)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tasks.judge_fit import Figures, Item, first_caller_line
from tasks.judge_validation import (
    KEY_ENTITY_METRIC,
    SET_FILES,
    SPURIOUS_PENALTY,
    entity_units,
    read_jsonl,
)
from tasks.judges.agreement import max_matching
from tasks.judges.inputs import KeyEntityInput
from tasks.judges.offline.entities import same_entity
from tasks.judges.offline.key_entities import judge_turns
from tasks.judges.offline.params import ENTITY_TYPES, KeyEntityParams
from tasks.judges.offline.tuning import Score

_ALL = KeyEntityParams(**dict.fromkeys(ENTITY_TYPES, True), adjacent_drift=True)


class JudgedEntity(BaseModel):
    type: str
    correct: bool = False  # with adjacent-turn drift tolerated
    correct_in_turn: bool = False  # in its own turn's transcript only


class LabelledTurn(BaseModel):
    """One labelled turn: the judge's entities (every kind), the human's verdicts, and
    which judge entity is leniently the same as which labelled one."""

    judged: list[JudgedEntity]
    gold_correct: list[bool]
    same: list[list[bool]]  # [judged][gold]


class Counts(BaseModel):
    labelled: int = 0
    predicted: int = 0
    matched: int = 0
    agree: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(**{k: getattr(self, k) + getattr(other, k) for k in type(self).model_fields})


def _rows(units_answer: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    return {
        int(u["turn_id"]): [e for e in u["entities"] if not e.get("skipped")] for u in units_answer
    }


def _measure(row: dict[str, Any]) -> list[LabelledTurn]:
    inp = KeyEntityInput(units=entity_units(row))
    drift = _rows(judge_turns(inp, _ALL))
    plain = _rows(judge_turns(inp, _ALL.model_copy(update={"adjacent_drift": False})))
    turns = []
    for label in row.get("labels") or []:
        turn = int(label.get("turn_id", -1))
        gold = [e for e in label.get("entities") or [] if isinstance(e, dict)]
        found, found_plain = drift.get(turn, []), plain.get(turn, [])
        judged = [
            JudgedEntity(
                type=e["type"], correct=bool(e["correct"]), correct_in_turn=bool(p["correct"])
            )
            for e, p in zip(found, found_plain, strict=True)
        ]
        same = [
            [same_entity(str(e.get("value")), str(g.get("value"))) for g in gold] for e in found
        ]
        turns.append(
            LabelledTurn(
                judged=judged, gold_correct=[bool(g.get("correct")) for g in gold], same=same
            )
        )
    return turns


def _turn_counts(turn: LabelledTurn, p: KeyEntityParams) -> Counts:
    kept = [i for i, e in enumerate(turn.judged) if p.reports(e.type)]
    pairs = max_matching(kept, range(len(turn.gold_correct)), lambda i, j: turn.same[i][j])
    agree = 0
    for left, j in pairs.items():
        entity = turn.judged[kept[left]]
        verdict = entity.correct if p.adjacent_drift else entity.correct_in_turn
        agree += verdict == turn.gold_correct[j]
    return Counts(
        labelled=len(turn.gold_correct), predicted=len(kept), matched=len(pairs), agree=agree
    )


class KeyEntityProblem:
    metric = KEY_ENTITY_METRIC
    params = KeyEntityParams

    def items(self, set_dir: Path) -> list[Item]:
        rows = read_jsonl(set_dir / SET_FILES[self.metric])
        return [
            Item(group=_row_key(row, number), labels=[], measured=_measure(row))
            for number, row in enumerate(rows)
        ]

    def predict(self, item: Item, p: Any) -> Counts:
        return sum((_turn_counts(t, p) for t in item.measured), Counts())

    def figures(self, items: Sequence[Item], preds: Sequence[Counts]) -> Figures:
        c = sum(preds, Counts())
        precision = c.matched / c.predicted if c.predicted else None
        recall = c.matched / c.labelled if c.labelled else None
        f1 = 2 * precision * recall / (precision + recall) if precision and recall else 0.0
        spurious = c.predicted - c.matched
        cwp = max(0.0, (c.agree - SPURIOUS_PENALTY * spurious) / c.labelled) if c.labelled else None
        return Figures(
            n=c.labelled,
            entity_f1_lenient=f1 if c.labelled else None,
            correctness_with_penalty=cwp,
        )

    def objective(self, figures: Figures) -> Score:
        return (figures.entity_f1_lenient or 0.0, figures.correctness_with_penalty or 0.0)


def _row_key(row: dict[str, Any], number: int) -> str:
    spoken = row.get("user_tts") or []
    if spoken:
        return " ".join(str(spoken[0]).casefold().split())
    return first_caller_line(row) if row.get("trace") else f"row {number}"
