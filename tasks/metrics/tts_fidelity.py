"""tts_fidelity (spec 4.6): does the agent's synthesized audio say its intended text?

Opt-in (not in the default set, excluded from pass@k); cascade and audio-LLM pipelines.
Per assistant turn 1/0 with failure modes (entity_error, truncation,
garbled_hallucination, insertion_hallucination, wrong_language), cleared on rating-1
turns; score = mean; sub-metrics ``<failure_mode>_rate`` over rated turns.
"""

from __future__ import annotations

from typing import Any

from tasks.judges import resolve_judge
from tasks.judges.adapters import speech_task
from tasks.judges.scoring import (
    parse_per_turn,
    rate_sub_metrics,
    score_per_turn,
    skipped_verdict_score,
    with_judge,
)
from tasks.metrics.base import MetricInfo, register_metric, skipped_score
from tasks.metrics.context import MetricContext
from tasks.records import MetricScore

INFO = MetricInfo(
    name="tts_fidelity",
    category="diagnostic",
    version="v0.3",
    exclude_from_pass_at_k=True,
    exclude_from_default=True,
    kind="judge",
    pipelines=("cascade", "audio_llm"),
    description="Share of agent turns whose audio faithfully says the intended text",
)
FAILURE_MODES = (
    "entity_error",
    "truncation",
    "garbled_hallucination",
    "insertion_hallucination",
    "wrong_language",
)


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    judge = resolve_judge(judges, INFO.name)
    task = speech_task(ctx, INFO.name, "assistant", "tts")
    if task is None:
        return with_judge(skipped_score(INFO, "no agent audio (text mode)"), judge, INFO.name)
    expected = sorted(task.inputs.turns)  # type: ignore[attr-defined]
    if not expected:
        return with_judge(skipped_score(INFO, "no intended assistant text"), judge, INFO.name)
    verdict = judge.evaluate(task)
    if verdict.skipped:
        return skipped_verdict_score(INFO.name, verdict, verdict.skipped)
    parsed = None if verdict.error else parse_per_turn(verdict, expected, 0, 1)
    score = score_per_turn(INFO.name, verdict, expected, low=0, high=1, parsed=parsed)
    if parsed is None or score.error:
        return score
    modes = {
        t: []
        if r == 1
        else [m for m in parsed.items[t].get("failure_modes") or [] if m in FAILURE_MODES]
        for t, r in parsed.ratings.items()
    }
    rated = [t for t, r in parsed.ratings.items() if r is not None]
    score.details["per_turn_failure_modes"] = {str(t): m for t, m in modes.items()}
    score.sub_metrics = rate_sub_metrics(INFO.name, rated, modes, FAILURE_MODES)
    return score
