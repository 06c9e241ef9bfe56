"""conciseness (spec 4.4): are the agent's spoken turns easy to take in? (per-turn judge)

Expected turn ids are every distinct turn id of the trace; a turn without assistant speech
is rated null (not applicable). Ratings 1-3, score = mean raw rating (3 decimals),
normalized = mean of (r - 1) / 2. Failure modes reported on a rating-3 turn are cleared;
sub-metrics ``<failure_mode>_rate`` = flagged rated turns / rated turns.
"""

from __future__ import annotations

from typing import Any

from tasks.judges import JudgeTask, resolve_judge
from tasks.judges.adapters import conciseness_input
from tasks.judges.offline.experience import CONCISENESS_MODES
from tasks.judges.scoring import parse_per_turn, rate_sub_metrics, score_per_turn
from tasks.metrics.base import MetricInfo, register_metric
from tasks.metrics.context import MetricContext
from tasks.records import MetricScore

INFO = MetricInfo(
    name="conciseness",
    category="experience",
    version="v0.1",
    threshold=0.5,
    kind="judge",
    description="Agent turns sized for listening: no filler, overload or list reading (1-3)",
)


def expected_turns(trace: list[dict[str, Any]]) -> list[int]:
    seen: list[int] = []
    for entry in trace:
        turn = int(entry.get("turn_id", 0))
        if turn not in seen:
            seen.append(turn)
    return seen


@register_metric(INFO)
def compute(ctx: MetricContext, judges: Any = None) -> MetricScore:
    judge = resolve_judge(judges, INFO.name)
    verdict = judge.evaluate(JudgeTask(metric=INFO.name, inputs=conciseness_input(ctx)))
    expected = expected_turns(ctx.trace)
    parsed = None if verdict.error else parse_per_turn(verdict, expected, 1, 3)
    score = score_per_turn(INFO.name, verdict, expected, low=1, high=3, parsed=parsed)
    if parsed is None or score.error:
        return score
    modes: dict[int, list[str]] = {}
    for turn, rating in parsed.ratings.items():
        raw = parsed.items[turn].get("failure_modes") or []
        listed = [str(m) for m in raw] if isinstance(raw, list) else []
        modes[turn] = [] if rating == 3 else [m for m in listed if m in CONCISENESS_MODES]
    rated = [t for t, r in parsed.ratings.items() if r is not None]
    score.details["per_turn_failure_modes"] = {str(t): m for t, m in modes.items()}
    score.sub_metrics = rate_sub_metrics(INFO.name, rated, modes, CONCISENESS_MODES)
    return score
