"""The judge-noise decomposition on hand-made numbers (``tasks.judge_noise``), and the
repeats' resume: a measurement killed mid-way judges only the repeats not stored."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import tasks.judge_noise as judge_noise_mod
from tasks.judge_noise import (
    FIGURES,
    NoiseRequest,
    decompose,
    judge_noise,
    measure_judge_noise,
)
from tasks.store import Store
from tasks.tables import SCHEMAS

# Three attempts, two repeats each: A moves 1 -> 3, B stays at 2, C moves 4 -> 6.
VALUES = {"A": [1.0, 3.0], "B": [2.0, 2.0], "C": [4.0, 6.0]}
PASSED = {"A": [False, True], "B": [True, True], "C": [True, True]}


def frame(values: dict[str, list[float | None]], passed: dict[str, list[Any]]) -> pd.DataFrame:
    rows = [
        {"attempt_id": a, "value": v, "passed": p, "error": v is None}
        for a in values
        for v, p in zip(values[a], passed[a], strict=True)
    ]
    return pd.DataFrame(rows)


def test_the_decomposition_of_hand_made_numbers() -> None:
    got = decompose(frame(VALUES, PASSED))  # type: ignore[arg-type]
    # Within: var(1,3) = 2, var(2,2) = 0, var(4,6) = 2 -> mean 4/3.
    assert got["judge_var"] == pytest.approx(4 / 3)
    assert got["judge_sd"] == pytest.approx(math.sqrt(4 / 3))
    assert got["judge_sd_max"] == pytest.approx(math.sqrt(2))
    # Between: the means 2, 2, 5 -> var (1 + 1 + 4) / 2 = 3.
    assert got["conversation_var"] == pytest.approx(3.0)
    assert got["judge_share"] == pytest.approx((4 / 3) / (4 / 3 + 3))
    # Adjusted: 3 - (4/3) / 2 = 7/3 -> share (4/3) / (4/3 + 7/3) = 4/11.
    assert got["conversation_var_adjusted"] == pytest.approx(7 / 3)
    assert got["judge_share_adjusted"] == pytest.approx(4 / 11)
    assert got["flip_rate"] == pytest.approx(1 / 3) and got["n_flipped"] == 1
    assert (got["repeats"], got["n_attempts"], got["n_repeated"], got["n_values"]) == (2, 3, 3, 6)
    assert got["mean"] == pytest.approx(3.0) and got["n_errors"] == 0
    assert set(got) == set(FIGURES)  # the computed figures are the stored columns


def test_errors_are_no_value_and_a_single_value_has_no_spread() -> None:
    values: dict[str, list[float | None]] = {"A": [1.0, None], "B": [2.0, 4.0]}
    passed = {"A": [True, None], "B": [True, False]}
    got = decompose(frame(values, passed))
    assert got["n_errors"] == 1 and got["n_values"] == 3
    assert got["n_repeated"] == 1 and got["judge_var"] == pytest.approx(2.0)
    assert got["flip_rate"] == 1.0  # only B has two pass/fail values, and it flips
    assert got["conversation_var"] == pytest.approx(var([1.0, 3.0]))


def var(xs: list[float]) -> float:
    return float(pd.Series(xs).var(ddof=1))


def test_nothing_varies_gives_zero_spread_and_no_share() -> None:
    # Values whose float mean is not exactly themselves still give exactly 0.
    got = decompose(frame({"A": [0.1] * 3, "B": [0.1] * 3}, {"A": [None] * 3, "B": [None] * 3}))
    assert got["judge_var"] == 0.0 and got["judge_sd_max"] == 0.0
    assert got["conversation_var"] == 0.0
    assert math.isnan(got["judge_share"])  # 0 / 0: stored as null
    assert math.isnan(got["flip_rate"])  # no pass/fail: no flip rate


def metric_row(attempt: str, metric: str, scoring: str, score: float, **extra: Any) -> dict:
    row = {
        "run_id": "r",
        "attempt_id": attempt,
        "metric": metric,
        "parent": None,
        "score": score,
        "normalized_score": score / 3,
        "passed": None,
        "error": None,
        "judge": "llm",
        "details_json": json.dumps({"judge_model": "m1"}),
        "scoring": scoring,
    }
    return {**row, **extra}


def test_judge_noise_groups_by_metric_and_judge_model_over_the_named_scorings() -> None:
    rows = [
        metric_row(a, "faithfulness", s, v)
        for a, vs in VALUES.items()
        for s, v in zip(("noise-1", "noise-2"), vs, strict=True)
    ]
    rows += [
        metric_row("A", "faithfulness", "run", 99.0),  # not a repeat: left out
        metric_row("A", "faithfulness.x", "noise-1", 99.0, parent="faithfulness"),
        metric_row("A", "task_completion", "noise-1", 1.0, judge=None, details_json="{}"),
        metric_row("A", "task_completion", "noise-2", 1.0, judge=None, details_json="{}"),
    ]
    table = judge_noise(pd.DataFrame(rows), ["noise-1", "noise-2"])
    assert list(table["metric"]) == ["faithfulness", "task_completion"]
    faith = table.iloc[0]
    assert (faith["judge"], faith["judge_model"]) == ("llm", "m1")
    assert faith["judge_var"] == pytest.approx((4 / 3) / 9)  # normalized: values / 3
    assert faith["conversation_var"] == pytest.approx(3 / 9)
    task = table.iloc[1]
    assert (task["judge"], task["judge_model"]) == ("none", "none")
    assert task["judge_var"] == 0.0 and task["n_attempts"] == 1


class Killed(RuntimeError):
    pass


def test_a_killed_measurement_resumes_at_the_first_repeat_not_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each repeat is one stored scoring: after a kill in repeat 2, a rerun keeps repeat 1
    (its file untouched) and judges 2 and 3 only."""
    calls: list[str] = []

    def rescore(store: Store, request: Any) -> None:
        calls.append(request.name)
        if request.name == "noise-2" and calls.count("noise-2") == 1:
            raise Killed
        rows = [metric_row("A", "speakability", request.name, 3.0, run_id="r", batch="b")]
        from tasks.store import SCORING_PREFIX
        from tasks.tables import to_table

        store.write_single("metrics", "r", to_table("metrics", rows), SCORING_PREFIX + request.name)

    store = Store(str(tmp_path))
    monkeypatch.setattr(store, "committed_batches", lambda run_id: {"b"})
    monkeypatch.setattr(judge_noise_mod, "rescore_run", rescore)
    request = NoiseRequest(run_id="r", repeats=3)
    with pytest.raises(Killed):
        measure_judge_noise(store, request)
    first = Path(store.parts("metrics", "r")[0]).stat().st_mtime_ns
    report = measure_judge_noise(store, request)
    assert calls == ["noise-1", "noise-2", "noise-2", "noise-3"]
    assert (report.resumed, report.judged) == (["noise-1"], ["noise-2", "noise-3"])
    assert Path(store.parts("metrics", "r")[0]).stat().st_mtime_ns == first
    stored = store.read("judge_noise", "r")
    assert list(stored.columns) == SCHEMAS["judge_noise"].names
    assert stored["scorings"].tolist() == ["noise-1,noise-2,noise-3"]
    assert stored["judge_var"].tolist() == [0.0] and stored["repeats"].tolist() == [3]


def test_the_adjusted_share_recovers_a_planted_judge_share() -> None:
    """Planted: conversation variance 1, judge variance 3 (share 0.75), 3 repeats. The
    plain share reads judge / (judge + conversation + judge / 3) = 0.6 in expectation;
    the adjusted one takes the judge / 3 back out."""
    import numpy as np

    rng = np.random.default_rng(7)
    attempts, repeats = 4000, 3
    truth = rng.normal(0.0, 1.0, attempts)
    values = truth[:, None] + rng.normal(0.0, math.sqrt(3.0), (attempts, repeats))
    rows = pd.DataFrame(
        {
            "attempt_id": np.repeat(np.arange(attempts), repeats),
            "value": values.ravel(),
            "passed": None,
            "error": False,
        }
    )
    got = decompose(rows)
    assert got["judge_var"] == pytest.approx(3.0, rel=0.05)
    assert got["judge_share"] == pytest.approx(0.6, abs=0.02)
    assert got["conversation_var_adjusted"] == pytest.approx(1.0, rel=0.1)
    assert got["judge_share_adjusted"] == pytest.approx(0.75, abs=0.02)
