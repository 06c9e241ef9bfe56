"""Judge a stored run again, with no simulation (``evaflow score``), and re-aggregate it.

Each stored attempt is rebuilt from its rows (:mod:`tasks.rebuild`) and judged as the run
judged it: a kept attempt (final and valid) gets the metric set of its trial, a discarded
one its validation metrics (the keep decisions stand: a re-scoring changes scores, not
which attempt was kept). ``metrics`` narrows that to a subset, ``failed_only`` to the
metrics whose latest value errored. The rows are stored as a new scoring next to the
earlier ones (``tasks.scorings``), never over them; a kept attempt whose EVA components
were re-judged gets its composites again, over its latest values.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, Field

from scenarios.models import Scenario
from tasks.config import BenchmarkConfig, ConfigError, JudgeSpec
from tasks.records import AttemptRecord, MetricScore
from tasks.store import SCORING_PREFIX, Store
from tasks.tables import RUN_SCORING, metric_rows, to_table
from tasks.trial_spec import TrialSpec

RECORD_TABLES = ("turns", "tool_calls", "events", "entities", "audio")


class ScoringRequest(BaseModel):
    run_id: str
    judge: str | None = Field(default=None, description="Judge back-end; None: the run's")
    metrics: list[str] | None = Field(default=None, description="A subset; None: all")
    failed_only: bool = Field(default=False, description="Only metrics whose value errored")
    kept_only: bool = Field(
        default=False, description="Only the kept attempts (final and valid), not discarded ones"
    )
    name: str | None = Field(default=None, description="The new scoring's name")
    judge_params: dict[str, Any] | None = Field(
        default=None,
        description="The llm judge's params from the command (model list, assignments) "
        "over the run's; None: the run's",
    )


class ScoringReport(BaseModel):
    run_id: str
    name: str
    attempts: int = Field(description="Attempts judged")
    rows: int = Field(description="Metric rows stored (sub-metrics included)")
    seconds: float


def run_config(store: Store, run_id: str) -> BenchmarkConfig:
    """The configuration the run was stored with; ConfigError for an unknown run id."""
    from tasks.config_checks import stored_config_json

    stored = stored_config_json(store, run_id)
    if stored is None:
        known = ", ".join(store.run_ids()) or "none"
        raise ConfigError(f"no run {run_id!r} in the store (runs: {known})")
    return BenchmarkConfig.model_validate_json(stored)


def scoring_judge(config: BenchmarkConfig, request: ScoringRequest) -> JudgeSpec:
    """The judge of a new scoring: the run's, or the requested back-end with the run's
    params when it is the run's; an llm judge that cannot call its models is a
    ConfigError naming them (before anything is judged or stored)."""
    from tasks.judge_checks import judged_metrics, llm_judge_problems
    from tasks.metrics.base import canonical_metric_name

    name = request.judge or config.judge.name
    params = config.judge.params if name == config.judge.name else {}
    if request.judge_params is not None:
        params = request.judge_params
    judge = JudgeSpec(name=name, params=params)
    if name == "llm":
        wanted = judged_metrics(config)
        if request.metrics is not None:
            asked = {canonical_metric_name(m) for m in request.metrics}
            wanted = [m for m in wanted if m in asked]
        problems = llm_judge_problems(params, wanted)
        if problems:
            raise ConfigError("; ".join(problems))
    return judge


def scoring_name(request: ScoringRequest, existing: list[str], judge: str) -> str:
    """The new scoring's name: given (and new) or ``<judge>-<n>``."""
    if request.name is not None:
        name = request.name
        if name == RUN_SCORING or name in existing:
            raise ConfigError(f"scoring {name!r} exists in run {request.run_id}: choose another")
        if not name or "/" in name or "\\" in name or name.startswith("."):
            raise ConfigError(f"scoring name {name!r}: a plain name without '/'")
        return name
    n = 1
    while f"{judge}-{n}" in existing:
        n += 1
    return f"{judge}-{n}"


def wanted_metrics(
    spec: TrialSpec, kept: bool, request: ScoringRequest, errored: set[str]
) -> list[str]:
    """What one attempt is judged on: its scoring's metrics, narrowed by the request."""
    from tasks.metrics.base import VALIDATION_METRICS, canonical_metric_name
    from tasks.scoring import metric_names

    names = metric_names(spec) if kept else list(VALIDATION_METRICS)
    if request.metrics is not None:
        chosen = {canonical_metric_name(n) for n in request.metrics}
        names = [n for n in names if canonical_metric_name(n) in chosen]
    if request.failed_only:
        names = [n for n in names if n in errored]
    return names


def score_from_row(row: Any) -> MetricScore:
    """A stored top-level metric row as the score the composites read."""
    missing = pd.isna
    return MetricScore(
        name=row["metric"],
        score=None if missing(row["score"]) else float(row["score"]),
        normalized_score=None
        if missing(row["normalized_score"])
        else float(row["normalized_score"]),
        error=None if missing(row["error"]) else str(row["error"]),
        skipped=bool(row["skipped"]) if not missing(row["skipped"]) else False,
    )


def with_composites(new: list[MetricScore], stored: pd.DataFrame) -> list[MetricScore]:
    """``new`` plus the composites over the attempt's latest values, when ``new`` moves
    one of their components."""
    from tasks.composites import MEAN_COMPONENTS, PASS_COMPONENTS
    from tasks.scoring import composite_scores

    components = {n for names in MEAN_COMPONENTS.values() for n in names}
    components |= {c[0] for comps in PASS_COMPONENTS.values() for c in comps}
    if not components & {s.name for s in new}:
        return new
    latest = {r["metric"]: score_from_row(r) for _, r in stored.iterrows()}
    latest.update({s.name: s for s in new})
    return [*new, *composite_scores(list(latest.values()))]


def rescore_run(
    store: Store,
    request: ScoringRequest,
    load_scenarios: Callable[[BenchmarkConfig], list[Scenario]] | None = None,
) -> ScoringReport:
    """Judge the stored run again and store the result as a new scoring."""
    from tasks.config_checks import load_checked
    from tasks.metrics.runner import resolve_metric_names
    from tasks.scorings import latest_metrics, scoring_names
    from tasks.trial import expand_trials

    started = time.perf_counter()
    config = run_config(store, request.run_id)
    if request.metrics is not None:
        resolve_metric_names(request.metrics)  # UnknownNameError lists the valid names
    judge = scoring_judge(config, request)
    metrics = store.read("metrics", request.run_id)
    name = scoring_name(request, scoring_names(metrics), judge.name)
    scenarios = {s.key: s for s in (load_scenarios or _load(load_checked))(config)}
    specs = {
        s.trial_key: s.model_copy(update={"judge": judge})
        for s in expand_trials(config, list(scenarios.values()), None)
    }
    latest = latest_metrics(metrics)
    latest = latest[latest["parent"].isna()]
    scored_at = datetime.now(UTC).isoformat()
    rows: list[dict[str, Any]] = []
    attempts = 0
    trials = store.read("trials", request.run_id)
    tables = {t: _by_attempt(store.read(t, request.run_id)) for t in RECORD_TABLES}
    by_attempt = dict(iter(latest.groupby("attempt_id")))
    with tempfile.TemporaryDirectory(prefix="evaflow-score-") as scratch:
        for trial in _records(trials):
            spec = specs.get(trial["trial_key"])
            if spec is None:
                continue
            stored = by_attempt.get(trial["attempt_id"], latest.iloc[:0])
            errored = set(stored.loc[stored["error"].notna(), "metric"])
            kept = bool(trial["final"]) and bool(trial["valid"])
            if request.kept_only and not kept:
                continue
            names = wanted_metrics(spec, kept, request, errored)
            if not names:
                continue
            scenario = scenarios[spec.scenario_key]
            record = _record(trial, tables, Path(scratch) / str(attempts), scenario)
            scores = _judge(spec, scenario, record, names)
            if kept:
                scores = with_composites(scores, stored)
            rows += metric_rows(record, trial["batch"], scores, name, scored_at)
            attempts += 1
    if rows:
        store.write_single(
            "metrics", request.run_id, to_table("metrics", rows), name=SCORING_PREFIX + name
        )
    return ScoringReport(
        run_id=request.run_id,
        name=name,
        attempts=attempts,
        rows=len(rows),
        seconds=round(time.perf_counter() - started, 3),
    )


def _load(load_checked: Callable[[Any], list[Scenario]]) -> Callable[[BenchmarkConfig], Any]:
    return lambda config: load_checked(config.scenarios)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): v for k, v in row.items()} for row in frame.to_dict("records")]


def _by_attempt(frame: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for row in _records(frame):
        out.setdefault(row["attempt_id"], []).append(row)
    return out


def _record(
    trial: dict[str, Any],
    tables: dict[str, dict[str, list[dict[str, Any]]]],
    scratch: Path,
    scenario: Scenario,
) -> AttemptRecord:
    from tasks.rebuild import rebuild_record, with_replayed_dbs, write_audio

    rows = {t: tables[t].get(trial["attempt_id"], []) for t in RECORD_TABLES}
    audio = write_audio(rows["audio"], scratch) if rows["audio"] else []
    record = rebuild_record(
        trial, rows["turns"], rows["tool_calls"], rows["events"], rows["entities"], audio
    )
    return with_replayed_dbs(record, scenario)


def _judge(
    spec: TrialSpec, scenario: Scenario, record: AttemptRecord, names: list[str]
) -> list[MetricScore]:
    from tasks.judges import make_judge
    from tasks.metrics.runner import run_metrics
    from tasks.systems.spec import pipeline_of

    judge = make_judge(spec.judge.model_dump())
    return run_metrics(record, scenario, names, judge, pipeline=pipeline_of(spec.system))


def reaggregate(store: Store, run_id: str) -> list[dict[str, Any]]:
    """Recompute and store only the run's aggregates (over each metric's latest scoring)."""
    from tasks.summary import summarize_run

    run_config(store, run_id)  # an unknown run id is a ConfigError, not an empty table
    return summarize_run(store, run_id)
