"""Judge validation: run a judge on the human-labelled sets and measure agreement.

Sets (``<set_dir>/*.jsonl``, formats differ per file):

* ``faithfulness.jsonl``, ``conversation_progression.jsonl``: one conversation per line
  (``trace`` of ``event_type`` entries) with a 1-3 ``expected_rating``; lines flagged
  ``invalid: true`` are left out.
* ``conciseness.jsonl``: ``conv_turns``; every agent turn carries a 1-3 ``expected_rating``.
* ``key_entity_transcription.jsonl``: caller texts (``user_tts``), the agent's STT
  (``transcription``) and per-turn labelled entities with a correct/incorrect verdict.
* ``agent_speech_fidelity.jsonl``: labels only; the audio is not part of the set, so the
  metric is reported as skipped.

Agreement on all labels is *in-sample* for the offline judge: its parameters are fitted to
these labels (``tasks.judges.offline.params``). ``tasks.judge_fit.cross_validate`` measures
it honestly, each fold scored with parameters fitted on the other folds only.

Statistics per metric: n, accuracy, macro-F1, Cohen's kappa (linear weights, ordinal
scales) and the confusion matrix ``{human: {judge: count}}`` (``tasks.judges.agreement``).

Key entities:

* ``entity_f1_lenient``: per labelled turn, the judge's non-skipped entities are matched
  one-to-one (maximum matching) with the labelled entities when their values are the same
  entity leniently: equal canonical forms after spoken-form normalisation (spelled digits =
  digits; date, time and amount formats unified; case, spacing and punctuation ignored;
  alternatives given in parentheses accepted) or one value a contiguous token run of the
  other. Entity types are ignored. TP = matched pairs, precision = TP / judge entities,
  recall = TP / labelled entities (labelled turns the judge had no transcript for count as
  missed); F1 is micro-averaged over all turns.
* ``correctness_with_penalty`` = max(0, (A - 0.5 * S) / L): A = labelled entities matched
  to a judge entity with the same correct/incorrect verdict, S = spurious judge entities
  (matched to no label), L = labelled entities. It is 1 only when every labelled entity is
  found and judged like the human did and nothing extra was invented.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from tasks.judges import Judge, JudgeTask, make_judge
from tasks.judges.agreement import (
    accuracy,
    confusion,
    macro_f1,
    max_matching,
    weighted_kappa,
)
from tasks.judges.inputs import (
    ConcisenessInput,
    ConversationInput,
    EntityUnit,
    KeyEntityInput,
    TraceItem,
    trace_from_events,
)
from tasks.judges.offline.entities import same_entity
from tasks.judges.offline.policy import DIMENSIONS as FAITHFULNESS_DIMENSIONS
from tasks.judges.offline.progression import PROGRESSION_DIMENSIONS
from tasks.judges.parsing import per_turn_items
from tasks.judges.scoring import parse_per_turn, score_dimensions

KEY_ENTITY_METRIC = "transcription_accuracy_key_entities"
SET_FILES = {
    "faithfulness": "faithfulness.jsonl",
    "conversation_progression": "conversation_progression.jsonl",
    "conciseness": "conciseness.jsonl",
    "agent_speech_fidelity": "agent_speech_fidelity.jsonl",
    KEY_ENTITY_METRIC: "key_entity_transcription.jsonl",
}
ALIASES = {"key_entity_transcription": KEY_ENTITY_METRIC}
SPURIOUS_PENALTY = 0.5


class MetricAgreement(BaseModel):
    n: int = Field(description="Items compared (judge errors excluded)")
    accuracy: float | None
    macro_f1: float | None
    kappa: float | None = Field(description="Cohen's kappa, linear weights over the scale")
    confusion: dict[str, dict[str, int]] = Field(description="{human: {judge: count}}")
    errors: int = Field(default=0, description="Items the judge returned no usable rating for")


class EntityAgreement(BaseModel):
    n: int = Field(description="Labelled entities")
    entity_f1_lenient: float | None
    correctness_with_penalty: float | None
    precision: float | None = None
    recall: float | None = None
    verdict_agreement: float | None = Field(
        default=None, description="Same correct/incorrect verdict among matched entities"
    )
    turns: int = 0


class JudgeValidationReport(BaseModel):
    judge: str
    metrics: dict[str, MetricAgreement] = Field(default_factory=dict)
    key_entity_transcription: EntityAgreement | None = None
    skipped: dict[str, str] = Field(default_factory=dict, description="metric -> reason")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: invalid JSON ({exc.msg})") from None
    return rows


def rated_conversations(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of a conversation set that count: not ``invalid``, rated 1-3."""
    return [
        r for r in rows if r.get("invalid") is not True and r.get("expected_rating") in (1, 2, 3)
    ]


def conversation_input(row: dict[str, Any], config: dict[str, Any]) -> ConversationInput:
    return ConversationInput(
        trace=trace_from_events(row["trace"]),
        role=str(config.get("role", "")),
        instructions=str(config.get("instructions", "")),
        tools=list(config.get("tools") or []),
        current_date_time=str(row.get("current_date_time") or ""),
    )


def conciseness_trace(row: dict[str, Any]) -> tuple[list[dict[str, Any]], list[TraceItem]]:
    """The row's turns and the trace built from them (one trace item per turn, in order)."""
    turns = row.get("conv_turns") or []
    events = [
        {
            "event_type": "agent_utterance" if t.get("role") != "user" else "user_utterance",
            "utterance": t.get("content", ""),
        }
        for t in turns
    ]
    return turns, trace_from_events(events)


def entity_units(row: dict[str, Any]) -> list[EntityUnit]:
    """The caller turns with both an intended text and a transcript."""
    spoken, heard = row.get("user_tts") or [], row.get("transcription") or []
    return [
        EntityUnit(unit_id=i, expected=text, transcribed=heard[i])
        for i, text in enumerate(spoken)
        if i < len(heard) and text.strip() and heard[i].strip()
    ]


def agent_config(set_dir: Path, domain: str = "airline") -> dict[str, Any]:
    """The domain's agent YAML of the EVA checkout the set belongs to ({} if absent)."""
    path = set_dir.parent / "configs" / "agents" / f"{domain}_agent.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}


def agreement(labels: list[int], preds: list[int | None], scale: list[int]) -> MetricAgreement:
    pairs = [(a, b) for a, b in zip(labels, preds, strict=True) if b is not None]
    lab, pred = [a for a, _ in pairs], [b for _, b in pairs]
    return MetricAgreement(
        n=len(pairs),
        accuracy=accuracy(lab, pred),
        macro_f1=macro_f1(lab, pred),
        kappa=weighted_kappa(lab, pred, scale),
        confusion=confusion(lab, pred, scale),
        errors=len(labels) - len(pairs),
    )


def _conversation_set(
    rows: list[dict[str, Any]], judge: Judge, metric: str, config: dict[str, Any]
) -> MetricAgreement:
    dims = FAITHFULNESS_DIMENSIONS if metric == "faithfulness" else PROGRESSION_DIMENSIONS
    labels, preds = [], []
    for row in rated_conversations(rows):
        inputs = conversation_input(row, config)
        verdict = judge.evaluate(JudgeTask(metric=metric, inputs=inputs))
        score = score_dimensions(metric, verdict, dims, num_turns=len(inputs.trace))
        labels.append(int(row["expected_rating"]))
        preds.append(None if score.error else int(score.score or 0))
    return agreement(labels, preds, [1, 2, 3])


def _conciseness_set(rows: list[dict[str, Any]], judge: Judge) -> MetricAgreement:
    labels: list[int] = []
    preds: list[int | None] = []
    for row in rows:
        turns, trace = conciseness_trace(row)
        expected = sorted({item.turn_id for item in trace})
        verdict = judge.evaluate(
            JudgeTask(metric="conciseness", inputs=ConcisenessInput(trace=trace))
        )
        parsed = None if verdict.error else parse_per_turn(verdict, expected, 1, 3)
        for turn, item in zip(turns, trace, strict=True):
            if turn.get("role") == "user" or turn.get("expected_rating") not in (1, 2, 3):
                continue
            labels.append(int(turn["expected_rating"]))
            preds.append(None if parsed is None else parsed.ratings.get(item.turn_id))
    return agreement(labels, preds, [1, 2, 3])


def _judge_entities(row: dict[str, Any], judge: Judge) -> dict[int, list[dict[str, Any]]]:
    verdict = judge.evaluate(
        JudgeTask(metric=KEY_ENTITY_METRIC, inputs=KeyEntityInput(units=entity_units(row)))
    )
    out: dict[int, list[dict[str, Any]]] = {}
    for item in per_turn_items(verdict.raw_text) or []:
        turn = item.get("turn_id")
        if isinstance(turn, int) and isinstance(item.get("entities"), list):
            out[turn] = [
                e for e in item["entities"] if isinstance(e, dict) and not e.get("skipped")
            ]
    return out


def _entity_set(rows: list[dict[str, Any]], judge: Judge) -> EntityAgreement:
    labelled = matched = spurious = agree = predicted = turns = 0
    for row in rows:
        found = _judge_entities(row, judge)
        for label in row.get("labels") or []:
            gold = [e for e in label.get("entities") or [] if isinstance(e, dict)]
            pred = found.get(int(label.get("turn_id", -1)), [])
            pairs = max_matching(
                pred, gold, lambda p, g: same_entity(str(p.get("value")), str(g.get("value")))
            )
            turns += 1
            labelled += len(gold)
            predicted += len(pred)
            matched += len(pairs)
            spurious += len(pred) - len(pairs)
            agree += sum(
                1
                for i, j in pairs.items()
                if bool(pred[i].get("correct")) == bool(gold[j].get("correct"))
            )
    precision = matched / predicted if predicted else None
    recall = matched / labelled if labelled else None
    f1 = (2 * precision * recall / (precision + recall)) if precision and recall else 0.0
    cwp = max(0.0, (agree - SPURIOUS_PENALTY * spurious) / labelled) if labelled else None
    return EntityAgreement(
        n=labelled,
        entity_f1_lenient=f1 if labelled else None,
        correctness_with_penalty=cwp,
        precision=precision,
        recall=recall,
        verdict_agreement=agree / matched if matched else None,
        turns=turns,
    )


def validate_judge(
    set_dir: Path,
    judge: str = "offline",
    metrics: list[str] | None = None,
    *,
    judge_params: dict[str, Any] | None = None,
) -> JudgeValidationReport:
    """Run ``judge`` on every labelled set in ``set_dir`` (or only ``metrics``)."""
    set_dir = Path(set_dir)
    if not set_dir.is_dir():
        raise FileNotFoundError(f"{set_dir}: judge-validation set directory not found")
    wanted = [ALIASES.get(m, m) for m in (metrics or list(SET_FILES))]
    unknown = [m for m in wanted if m not in SET_FILES]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; valid: {', '.join(SET_FILES)}")
    instance = make_judge({"name": judge, "params": judge_params or {}})
    report = JudgeValidationReport(judge=instance.name)
    config = agent_config(set_dir)
    runners: dict[str, Callable[[list[dict[str, Any]]], Any]] = {
        "faithfulness": lambda rows: _conversation_set(rows, instance, "faithfulness", config),
        "conversation_progression": lambda rows: _conversation_set(
            rows, instance, "conversation_progression", config
        ),
        "conciseness": lambda rows: _conciseness_set(rows, instance),
    }
    for metric in wanted:
        path = set_dir / SET_FILES[metric]
        if not path.is_file():
            report.skipped[metric] = f"{path.name} not found in {set_dir}"
        elif metric == "agent_speech_fidelity":
            report.skipped[metric] = "labels only: the set does not include the agent audio"
        elif metric == KEY_ENTITY_METRIC:
            report.key_entity_transcription = _entity_set(read_jsonl(path), instance)
        else:
            report.metrics[metric] = runners[metric](read_jsonl(path))
    return report


def format_report(report: JudgeValidationReport) -> str:
    """A plain-text table for people (the CLI prints this without ``--json``)."""

    def fmt(x: float | None) -> str:
        return "  n/a" if x is None else f"{x:5.3f}"

    lines = [
        f"judge: {report.judge}",
        f"{'metric':28} {'n':>4} {'acc':>6} {'macroF1':>8} {'kappa':>6}",
    ]
    for name, m in report.metrics.items():
        lines.append(
            f"{name:28} {m.n:>4} {fmt(m.accuracy):>6} {fmt(m.macro_f1):>8} {fmt(m.kappa):>6}"
        )
        for label, row in m.confusion.items():
            lines.append(f"{'':30}human {label}: " + " ".join(f"{k}:{v}" for k, v in row.items()))
    ke = report.key_entity_transcription
    if ke is not None:
        lines.append(
            f"key entities: n={ke.n} entity_f1_lenient={fmt(ke.entity_f1_lenient)} "
            f"correctness_with_penalty={fmt(ke.correctness_with_penalty)}"
        )
    lines += [f"skipped {name}: {why}" for name, why in report.skipped.items()]
    return "\n".join(lines)
