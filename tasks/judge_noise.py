"""Judge noise: how much of a score's variation is the judge and how much the conversations.

The same kept attempts are judged again N times (``evaflow judges noise``), each time as
a named scoring ``<prefix>-1`` .. ``<prefix>-N`` next to the run's own (``tasks.scorings``;
never over it). A repeat is one re-scoring, stored atomically, so a killed measurement
resumes at the first repeat not stored. From those scorings, per metric and judge model
(top-level metrics; a value is ``normalized_score``, else ``score``; errored and skipped
rows are no value):

* **judge variance**: the mean over attempts (with >= 2 values) of the variance of an
  attempt's values across repeats (ddof 1); ``judge_sd`` is its root, ``judge_sd_max``
  the largest single attempt's SD (0 means no attempt moved at all);
* **flip rate**: the share of attempts (with >= 2 pass/fail values) whose ``passed``
  differs between repeats;
* **conversation variance**: the variance (ddof 1) across attempts of the per-attempt
  means over repeats;
* **judge share**: judge / (judge + conversation variance), a one-way decomposition;
  null when both are 0 (nothing varies). The variance of the means still holds
  judge variance / R (R repeats), so ``conversation_var_adjusted`` subtracts it (the
  one-way random-effects ANOVA estimator, floored at 0; R the harmonic mean of the
  attempts' repeat counts) and ``judge_share_adjusted`` is the share over that: the
  judge's share of the variance of a single judging.

:func:`decompose` and :func:`judge_noise` are pure; :func:`measure_judge_noise` runs the
repeats and stores the ``judge_noise`` table (``tasks.tables.SCHEMAS``), one part per
prefix, so measurements under different prefixes (judges) sit side by side.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from tasks.rescore import ScoringRequest, rescore_run
from tasks.store import Store
from tasks.tables import SCHEMAS, to_table

NOISE_PREFIX = "noise"
NO_JUDGE = "none"
"""The ``judge`` of a metric computed without one (task_completion, stt_wer, ...)."""

GROUP = ("metric", "judge", "judge_model")
_COLUMNS: list[str] = SCHEMAS["judge_noise"].names
FIGURES = tuple(_COLUMNS[_COLUMNS.index(GROUP[-1]) + 1 :])
"""The computed columns: the stored table's columns after its key (one home: the schema)."""


class NoiseRequest(BaseModel):
    run_id: str
    repeats: int = Field(ge=2, description="Judgings of every kept attempt")
    prefix: str = Field(default=NOISE_PREFIX, description="The repeats are PREFIX-1..N")
    judge: str | None = Field(default=None, description="Judge back-end; None: the run's")
    metrics: list[str] | None = Field(default=None, description="A subset; None: all")
    judge_params: dict[str, Any] | None = None


class NoiseReport(BaseModel):
    run_id: str
    scorings: list[str]
    judged: list[str] = Field(description="Repeats judged now")
    resumed: list[str] = Field(description="Repeats already stored, not judged again")
    rows: list[dict[str, Any]] = Field(description="The judge_noise rows stored")


def repeat_names(prefix: str, repeats: int) -> list[str]:
    return [f"{prefix}-{i}" for i in range(1, repeats + 1)]


def _judge_model(details: Any) -> str | None:
    if not isinstance(details, str):
        return None
    try:
        model = json.loads(details).get("judge_model")
    except (ValueError, AttributeError):
        return None
    return str(model) if model else None


def repeat_values(metrics: pd.DataFrame, scorings: list[str]) -> pd.DataFrame:
    """The top-level metric values of the named scorings, one row per (attempt, metric,
    scoring): ``value`` null when the row errored or was skipped, ``error`` flags errors."""
    frame = metrics[metrics["scoring"].isin(scorings) & metrics["parent"].isna()]
    errored = frame["error"].notna()
    value = frame["normalized_score"].where(frame["normalized_score"].notna(), frame["score"])
    judge = frame["judge"].fillna(NO_JUDGE)
    model = frame["details_json"].map(_judge_model)
    return pd.DataFrame(
        {
            "attempt_id": frame["attempt_id"],
            "metric": frame["metric"],
            "judge": judge,
            "judge_model": model.where(model.notna(), judge),
            "scoring": frame["scoring"],
            "value": value.where(~errored).astype(float),
            "passed": frame["passed"].where(~errored),
            "error": errored,
        }
    )


def _share(judge: float, conversation: float) -> float:
    total = judge + conversation
    return judge / total if total > 0 else math.nan


def decompose(values: pd.DataFrame) -> dict[str, Any]:
    """The figures of one (metric, judge model) from its rows (``attempt_id``, ``value``,
    ``passed``, ``error``): see the module docstring. Missing figures are NaN."""
    valued = values[values["value"].notna()]
    per = valued.groupby("attempt_id")["value"]
    n, lo, hi = per.count(), per.min(), per.max()
    # Equal values give exactly 0 and their own value: a float mean of copies can drift.
    var = per.var(ddof=1).where(hi != lo, 0.0)[n >= 2]
    means = per.mean().where(hi != lo, lo)
    judge_var = float(var.mean()) if len(var) else math.nan
    conv_var = float(means.var(ddof=1)) if len(means) >= 2 else math.nan
    if len(means) >= 2 and float(means.max()) == float(means.min()):
        conv_var = 0.0
    harmonic = len(var) / float((1.0 / n[n >= 2]).sum()) if len(var) else math.nan
    adjusted = max(0.0, conv_var - judge_var / harmonic) if len(var) else math.nan
    passes = values[values["passed"].notna()].groupby("attempt_id")["passed"]
    eligible = passes.count() >= 2
    flipped = int((passes.nunique()[eligible] > 1).sum())
    return {
        "repeats": int(n.max()) if len(n) else 0,
        "n_attempts": int(len(n)),
        "n_repeated": int(len(var)),
        "n_values": int(len(valued)),
        "n_errors": int(values["error"].sum()),
        "mean": float(valued["value"].mean()) if len(valued) else math.nan,
        "judge_var": judge_var,
        "judge_sd": math.sqrt(judge_var) if len(var) else math.nan,
        "judge_sd_max": float(np.sqrt(var.max())) if len(var) else math.nan,
        "flip_rate": flipped / int(eligible.sum()) if eligible.any() else math.nan,
        "n_flipped": flipped,
        "conversation_var": conv_var,
        "conversation_sd": math.sqrt(conv_var) if not math.isnan(conv_var) else math.nan,
        "judge_share": _share(judge_var, conv_var),
        "conversation_var_adjusted": adjusted,
        "judge_share_adjusted": _share(judge_var, adjusted),
    }


def judge_noise(metrics: pd.DataFrame, scorings: list[str]) -> pd.DataFrame:
    """One row per (metric, judge, judge model) over the named repeat scorings of a run's
    metric rows (``Store.read("metrics", run)``); empty when none of them is stored."""
    values = repeat_values(metrics, scorings)
    rows = [
        {**dict(zip(GROUP, key, strict=True)), **decompose(group)}
        for key, group in values.groupby(list(GROUP), sort=True)
    ]
    return pd.DataFrame(rows, columns=[*GROUP, *FIGURES])


def measure_judge_noise(store: Store, request: NoiseRequest) -> NoiseReport:
    """Judge the run's kept attempts ``repeats`` times (the repeats already stored are
    kept, not judged again), then compute and store the ``judge_noise`` table."""
    from tasks.metrics.runner import resolve_metric_names
    from tasks.scorings import scoring_names

    if request.metrics is not None:  # checked even when every repeat is resumed
        resolve_metric_names(request.metrics)  # UnknownNameError lists the valid names
    names = repeat_names(request.prefix, request.repeats)
    judged: list[str] = []
    resumed: list[str] = []
    for name in names:
        if name in scoring_names(store.read("metrics", request.run_id)):
            resumed.append(name)
            continue
        scoring = ScoringRequest(
            run_id=request.run_id,
            judge=request.judge,
            metrics=request.metrics,
            name=name,
            judge_params=request.judge_params,
            kept_only=True,
        )
        rescore_run(store, scoring)
        judged.append(name)
    table = judge_noise(store.read("metrics", request.run_id), names)
    rows = noise_table_rows(table, request, names)
    store.write_single(
        "judge_noise", request.run_id, to_table("judge_noise", rows), name=request.prefix
    )
    return NoiseReport(
        run_id=request.run_id, scorings=names, judged=judged, resumed=resumed, rows=rows
    )


def noise_table_rows(
    table: pd.DataFrame, request: NoiseRequest, names: list[str]
) -> list[dict[str, Any]]:
    """The stored rows: the figures (NaN -> null) with the run, prefix and scorings."""
    at = datetime.now(UTC).isoformat()
    rows = []
    for record in table.to_dict("records"):
        clean = {
            str(k): (None if isinstance(v, float) and math.isnan(v) else v)
            for k, v in record.items()
        }
        rows.append(
            {
                **clean,
                "run_id": request.run_id,
                "batch": request.prefix,
                "prefix": request.prefix,
                "scorings": ",".join(names),
                "computed_at": at,
            }
        )
    return rows
