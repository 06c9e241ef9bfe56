"""user_behavioral_fidelity (spec 4.5): did the simulated caller corrupt the evaluation?

A validation gate (not in the default metric set). Conversation-level rating 1 = clean,
0 = corrupted; a rating outside {0, 1} becomes 0 (the scale minimum, spec 12.18). Details:
rating, ``corrupted`` and the judge's ``corruption_analysis``; sub-metrics ``<key>_rate`` =
1.0 when that corruption was detected.
"""

from __future__ import annotations

from typing import Any

from tasks.judges import JudgeTask, resolve_judge
from tasks.judges.adapters import behavior_input
from tasks.judges.offline.behavior import KEYS
from tasks.judges.parsing import PARSE_ERROR, conversation_rating, pick_conversation_dict
from tasks.judges.scoring import binary_sub, failed_score, judge_details
from tasks.metrics.base import MetricInfo, register_metric
from tasks.metrics.context import MetricContext
from tasks.records import MetricScore

INFO = MetricInfo(
    name="user_behavioral_fidelity",
    category="validation",
    version="v0.1",
    threshold=0.5,
    exclude_from_default=True,
    kind="judge",
    description="The simulated caller followed its instructions (1 clean, 0 corrupted)",
)


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    judge = resolve_judge(judges, INFO.name)
    verdict = judge.evaluate(JudgeTask(metric=INFO.name, inputs=behavior_input(ctx)))
    if verdict.error:
        return failed_score(INFO.name, verdict, verdict.error)
    answer = pick_conversation_dict(verdict.raw_text)
    if answer is None:
        return failed_score(INFO.name, verdict, PARSE_ERROR)
    rated = conversation_rating(answer, 0, 1)
    raw = answer.get("corruption_analysis")
    analysis: dict[str, Any] = raw if isinstance(raw, dict) else {}
    subs = {}
    for key in KEYS:
        found = analysis.get(key)
        entry: dict[str, Any] = found if isinstance(found, dict) else {}
        detected = bool(entry.get("detected"))
        subs[f"{key}_rate"] = binary_sub(
            INFO.name,
            f"{key}_rate",
            detected,
            {"detected": detected, "analysis": entry.get("analysis")},
        )
    details = {
        "rating": rated.rating,
        "corrupted": rated.rating == 0,
        "corruption_analysis": analysis,
        **judge_details(verdict),
    }
    return MetricScore(
        name=INFO.name,
        score=float(rated.rating),
        normalized_score=float(rated.normalized),
        details=details,
        sub_metrics=subs,
        judge=verdict.judge,
        prompt_hash=verdict.prompt_hash,
    )
