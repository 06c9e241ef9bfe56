"""One attempt's EVA composites (tasks.composites): thresholds, tolerance, nulls."""

from __future__ import annotations

import pytest

from tasks.composites import composites
from tasks.records import MetricScore


def ms(name: str, value: float | None, **kw: object) -> MetricScore:
    return MetricScore(name=name, score=value, normalized_score=value, **kw)  # type: ignore[arg-type]


GOOD = {
    "task_completion": 1.0,
    "faithfulness": 0.5,
    "agent_speech_fidelity": 0.95,
    "conversation_progression": 1.0,
    "turn_taking": 0.8,
    "conciseness": 0.5,
}


def scores_of(values: dict[str, float | None]) -> dict[str, MetricScore]:
    return {k: ms(k, v) for k, v in values.items()}


def test_composites_pass_at_exact_thresholds() -> None:
    out = composites(scores_of(GOOD))
    assert out["EVA-A_pass"] == 1.0 and out["EVA-X_pass"] == 1.0 and out["EVA-overall_pass"] == 1.0
    assert out["EVA-A_mean"] == pytest.approx((1.0 + 0.5 + 0.95) / 3)
    assert out["EVA-overall_mean"] == pytest.approx(sum(GOOD.values()) / 6)


def test_composites_tolerance() -> None:
    near = dict(GOOD, task_completion=1.0 - 1e-12, turn_taking=0.8 - 5e-10)
    assert composites(scores_of(near))["EVA-A_pass"] == 1.0
    assert composites(scores_of(near))["EVA-X_pass"] == 1.0
    below = dict(GOOD, agent_speech_fidelity=0.95 - 1e-6)
    assert composites(scores_of(below))["EVA-A_pass"] == 0.0
    assert composites(scores_of(below))["EVA-overall_pass"] == 0.0
    not_one = dict(GOOD, task_completion=0.999)
    assert composites(scores_of(not_one))["EVA-A_pass"] == 0.0


def test_normalized_value_is_compared_not_raw() -> None:
    scores = scores_of(GOOD)
    scores["faithfulness"] = MetricScore(name="faithfulness", score=2.0, normalized_score=0.5)
    assert composites(scores)["EVA-A_pass"] == 1.0


def test_skipped_component_is_left_out_missing_or_errored_gives_null() -> None:
    scores = scores_of(GOOD)
    scores["agent_speech_fidelity"] = MetricScore(name="agent_speech_fidelity", skipped=True)
    out = composites(scores)
    assert out["EVA-A_pass"] == 1.0
    assert out["EVA-A_mean"] == pytest.approx(0.75)
    missing = scores_of({k: v for k, v in GOOD.items() if k != "faithfulness"})
    assert composites(missing)["EVA-A_pass"] is None
    assert composites(missing)["EVA-overall_pass"] is None
    errored = scores_of(GOOD)
    errored["conciseness"] = ms("conciseness", 0.0, error="judge down")
    out = composites(errored)
    assert out["EVA-X_pass"] is None and out["EVA-X_mean"] == pytest.approx(0.9)


def test_all_skipped_or_nothing_gives_null() -> None:
    skipped = {k: MetricScore(name=k, skipped=True) for k in GOOD}
    out = composites(skipped)
    assert out["EVA-A_pass"] is None and out["EVA-X_pass"] is None
    assert out["EVA-A_mean"] is None and out["EVA-overall_mean"] is None
    assert composites({})["EVA-overall_pass"] is None
