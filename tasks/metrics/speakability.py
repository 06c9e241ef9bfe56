"""speakability (spec 4.6): can the agent's text be spoken as written? (per-turn judge, 0/1)

Turns are the non-empty intended assistant turns; score = mean of the 0/1 turn ratings.
Cascade and audio-LLM pipelines only (an S2S agent produces no text to read).
"""

from __future__ import annotations

from typing import Any

from tasks.judges import JudgeTask, resolve_judge
from tasks.judges.adapters import speakability_input
from tasks.judges.scoring import score_per_turn, with_judge
from tasks.metrics.base import MetricInfo, register_metric, skipped_score
from tasks.metrics.context import MetricContext
from tasks.records import MetricScore

INFO = MetricInfo(
    name="speakability",
    category="diagnostic",
    version="v0.2",
    exclude_from_pass_at_k=True,
    kind="judge",
    pipelines=("cascade", "audio_llm"),
    description="Share of agent turns free of markdown, brackets, glued words and emojis",
)


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    judge = resolve_judge(judges, INFO.name)
    inputs = speakability_input(ctx)
    if not inputs.turns:
        return with_judge(skipped_score(INFO, "no intended assistant text"), judge, INFO.name)
    verdict = judge.evaluate(JudgeTask(metric=INFO.name, inputs=inputs))
    return score_per_turn(INFO.name, verdict, sorted(inputs.turns), low=0, high=1)
