"""transcription_accuracy_key_entities (spec 4.6): did the agent's STT keep the caller's
key entities? (judged; diagnostic, excluded from pass@k)

Cascade: one unit per caller turn with both an intended and a transcribed text. Audio-native
pipelines: one unit per tool call (numbered 1..N); no tool calls => skipped without asking
the judge. Per unit, over non-skipped entities: correct / total; a unit without such
entities is -1 (not applicable). normalized = mean over applicable units (score the same);
none applicable => skipped. Sub-metrics ``<entity type>_accuracy``.
"""

from __future__ import annotations

from typing import Any

from tasks.judges import JudgeTask, JudgeVerdict, resolve_judge
from tasks.judges.adapters import key_entity_input
from tasks.judges.parsing import PARSE_ERROR, as_int_rating, per_turn_items
from tasks.judges.scoring import failed_score, judge_details, skipped_verdict_score, with_judge
from tasks.metrics.base import MetricInfo, register_metric, skipped_score
from tasks.metrics.context import MetricContext
from tasks.records import MetricScore

INFO = MetricInfo(
    name="transcription_accuracy_key_entities",
    category="diagnostic",
    version="v0.4",
    exclude_from_pass_at_k=True,
    kind="judge",
    description="Share of the caller's key entities the agent's STT kept",
)
NOT_APPLICABLE = -1.0


def unit_rating(entities: list[Any]) -> tuple[float, list[dict[str, Any]]]:
    rated = [e for e in entities if isinstance(e, dict) and not e.get("skipped")]
    if not rated:
        return NOT_APPLICABLE, rated
    return sum(1 for e in rated if e.get("correct") is True) / len(rated), rated


def score_entities(verdict: JudgeVerdict, unit_ids: list[int], id_key: str) -> MetricScore:
    if verdict.error:
        return failed_score(INFO.name, verdict, verdict.error)
    items = per_turn_items(verdict.raw_text)
    if items is None:
        return failed_score(INFO.name, verdict, PARSE_ERROR)
    ratings: dict[int, float] = {}
    per_type: dict[str, list[bool]] = {}
    unit_details: dict[str, Any] = {}
    for item in items:
        unit = as_int_rating(item.get(id_key, item.get("turn_id")))
        if unit is None or unit not in unit_ids or unit in ratings:
            continue
        raw = item.get("entities")
        entities: list[Any] = raw if isinstance(raw, list) else []
        ratings[unit], rated = unit_rating(entities)
        for e in rated:
            per_type.setdefault(str(e.get("type") or "entity"), []).append(e.get("correct") is True)
        unit_details[str(unit)] = {"entities": entities, "summary": item.get("summary", "")}
    applicable = [r for r in ratings.values() if r != NOT_APPLICABLE]
    details = {
        "num_turns": len(unit_ids),
        "num_evaluated": len(ratings),
        "num_not_applicable": len(ratings) - len(applicable),
        "per_turn_ratings": {str(u): r for u, r in ratings.items()},
        "per_turn_details": unit_details,
        "unit": id_key,
        **judge_details(verdict),
    }
    if not applicable:
        return skipped_verdict_score(INFO.name, verdict, "no applicable entities", **details)
    mean = sum(applicable) / len(applicable)
    subs = {
        f"{kind}_accuracy": MetricScore(
            name=f"{INFO.name}.{kind}_accuracy",
            score=sum(v) / len(v),
            normalized_score=sum(v) / len(v),
            details={"count": len(v)},
        )
        for kind, v in sorted(per_type.items())
    }
    return MetricScore(
        name=INFO.name,
        score=round(mean, 4),
        normalized_score=mean,
        details=details,
        sub_metrics=subs,
        judge=verdict.judge,
        prompt_hash=verdict.prompt_hash,
    )


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    judge = resolve_judge(judges, INFO.name)
    inputs = key_entity_input(ctx)
    if inputs.mode == "tool_calls":
        n_calls = sum(1 for item in inputs.trace if item.kind == "tool_call")
        if n_calls == 0:
            skip = skipped_score(INFO, "no tool calls to check (audio-native pipeline)")
            return with_judge(skip, judge, INFO.name)
        unit_ids, id_key = list(range(1, n_calls + 1)), "tool_call_id"
    else:
        if not inputs.units:
            skip = skipped_score(INFO, "no caller turn has both intended and transcribed text")
            return with_judge(skip, judge, INFO.name)
        unit_ids, id_key = [u.unit_id for u in inputs.units], "turn_id"
    verdict = judge.evaluate(JudgeTask(metric=INFO.name, inputs=inputs))
    return score_entities(verdict, unit_ids, id_key)
