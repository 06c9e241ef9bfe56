"""agent_speech_fidelity (spec 4.3): does the agent articulate key entities correctly in its
audio? (audio judge, per assistant turn 0/1, pass@k threshold 0.95)

Expected turns are the assistant turn ids of the trace. Turns the judge marks
``has_entities: false`` are stored but not scored; an invalid rating is null. normalized =
mean rating over entity turns, score the same (3 decimals); no rated entity turn =>
skipped (no error). Without agent audio (text mode) the metric is skipped; no assistant
turn in the trace is an error.

Which entities count depends on the attempt's pipeline (``tasks.judges.adapters``): for
audio-native agents (s2s, audio_llm) those of the context, the caller's turns as said and
the tool responses, that the turn speaks, as the reference's judge is asked (spec 4.3); for
cascades our offline port checks every entity of the text sent to the TTS.
"""

from __future__ import annotations

from typing import Any

from tasks.judges import resolve_judge
from tasks.judges.adapters import speech_task
from tasks.judges.scoring import (
    failed_score,
    judge_details,
    parse_per_turn,
    skipped_verdict_score,
    with_judge,
)
from tasks.metrics.base import MetricInfo, error_score, register_metric, skipped_score
from tasks.metrics.context import MetricContext
from tasks.records import MetricScore

INFO = MetricInfo(
    name="agent_speech_fidelity",
    category="accuracy",
    version="v0.4",
    threshold=0.95,
    kind="judge",
    description="Share of entity-bearing agent turns whose entities are spoken correctly",
)


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    expected = sorted({int(e["turn_id"]) for e in ctx.trace if e.get("role") == "assistant"})
    if not expected:
        return error_score(INFO, "no assistant turns in the trace")
    judge = resolve_judge(judges, INFO.name)
    task = speech_task(ctx, INFO.name, "assistant", "agent_entities")
    if task is None:
        return with_judge(skipped_score(INFO, "no agent audio (text mode)"), judge, INFO.name)
    verdict = judge.evaluate(task)
    if verdict.skipped:
        return skipped_verdict_score(INFO.name, verdict, verdict.skipped)
    if verdict.error:
        return failed_score(INFO.name, verdict, verdict.error)
    parsed = parse_per_turn(verdict, expected, 0, 1)
    if parsed is None:
        return failed_score(INFO.name, verdict, "Failed to parse judge response")
    with_entities = {
        t: r
        for t, r in parsed.ratings.items()
        if parsed.items[t].get("has_entities", True) is not False
    }
    rated = [r for r in with_entities.values() if r is not None]
    details = {
        "num_turns": len(expected),
        "num_evaluated": len(rated),
        "num_skipped_no_entities": len(parsed.ratings) - len(with_entities),
        "per_turn_ratings": {str(t): r for t, r in parsed.ratings.items()},
        "per_turn_has_entities": {
            str(t): parsed.items[t].get("has_entities", True) is not False for t in parsed.items
        },
        "per_turn_explanations": {
            str(t): i.get("explanation", "") for t, i in parsed.items.items()
        },
        "per_turn_languages": {str(t): i.get("language") for t, i in parsed.items.items()},
        "audio_trimmed": verdict.judge == "llm",
        **judge_details(verdict),
    }
    if not rated:
        return skipped_verdict_score(INFO.name, verdict, "no entity turn was rated", **details)
    mean = sum(rated) / len(rated)
    return MetricScore(
        name=INFO.name,
        score=round(mean, 3),
        normalized_score=mean,
        details=details,
        judge=verdict.judge,
        prompt_hash=verdict.prompt_hash,
    )
