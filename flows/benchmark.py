"""The benchmark flow: expand -> per trial (simulate -> validate, regenerate -> judge the
kept attempt: nested stage tasks, tasks.steps) -> commit -> aggregate -> artifacts."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefect import flow, get_run_logger
from prefect.utilities.annotations import quote
from pydantic import BaseModel, Field

from flows.env import workers_report_here
from flows.operations import ensure_judge_limits, publish_artifacts
from flows.runners import (
    RunnerLifetime,
    completed_in_window,
    release_result,
    submission_window,
    trial_parameters,
)
from scenarios.models import Scenario
from tasks.config import BenchmarkConfig
from tasks.config_checks import check_names, load_checked, resume_config, stored_config_json
from tasks.steps import aggregate_run, run_trial_step, stage_task
from tasks.trial import TrialResult, TrialSpec, expand_trials

REPORT = "write-report"

if TYPE_CHECKING:
    # Imported where used: every trial's task context carries this flow, so each Dask
    # worker imports this module with its first trial; the store code (pandas, pyarrow,
    # DuckDB: 0.25 s and ~60 MB per worker) runs only in the flow's process.
    from tasks.store import Store
    from tasks.writer import BatchWriter

ProgressFn = Callable[[int, int, TrialResult | None], None]
_progress_hooks: list[ProgressFn] = []


def add_progress_hook(fn: ProgressFn) -> None:
    """Register a callback (done, total, last result); the CLI uses it for its progress bar."""
    _progress_hooks.append(fn)


def clear_progress_hooks() -> None:
    _progress_hooks.clear()


class RunSummary(BaseModel):
    run_id: str
    store: str
    trials: int = Field(description="Trials in the run (stored before + now)")
    simulated_trials: int = Field(description="Trials simulated by this invocation")
    skipped_trials: int = Field(description="Trials already stored, skipped on resume")
    attempts: int
    valid: int
    aggregates: list[dict[str, Any]] = Field(default_factory=list)
    report: str | None = None
    wall_s: float = 0.0
    phase_s: dict[str, float] = Field(
        default_factory=dict,
        description="Where the flow's wall time went: checks, load, start (the runner), "
        "trials, stop, summarize, report",
    )
    scenario_shared: list[str] = Field(
        default_factory=list,
        description="Systems whose agent was served the whole scenario (share_scenario)",
    )


class _Phases:
    """Wall-clock seconds of the flow's consecutive phases (``lap`` ends one)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = round(self.seconds.get(name, 0.0) + now - self._last, 3)
        self._last = now


def _notify(done: int, total: int, result: TrialResult | None) -> None:
    for hook in list(_progress_hooks):
        hook(done, total, result)


def _collect(
    completed: Iterable[Any], total: int, writer: BatchWriter, logger: Any
) -> list[BaseException]:
    """Store every trial as it completes. A worker that raises (trials themselves never
    do: their failures are rows) costs only its own trial: the others are still collected,
    and whatever is buffered is committed however the loop ends."""
    failures: list[BaseException] = []
    try:
        for i, future in enumerate(completed, start=1):
            try:
                result = future.result()
            except Exception as exc:  # noqa: BLE001 - reported after the others are stored
                logger.error("a trial failed in its worker: %r", exc)
                failures.append(exc)
                _notify(i, total, None)
                continue
            finally:
                release_result(future)
            writer.add(result)
            _notify(i, total, result)
    finally:
        writer.flush()
    return failures


def _recover(store: Store, run_id: str, logger: Any) -> None:
    recovery = store.recover(run_id)
    if not recovery.clean:
        logger.warning("recovered run %s: %s", run_id, recovery)


def price_table_columns(path: Path | None) -> dict[str, str]:
    """The runs row's price table (the config's, else $EVAFLOW_PRICES, else the shipped one);
    checked before the first trial, so a bad file stops the run storing nothing."""
    from tasks.costs.prices import load_prices

    table = load_prices(path)
    return {"price_table_version": table.version_id, "price_table_json": table.rows_json()}


def _write_run_row(store: Store, config: BenchmarkConfig) -> None:
    from importlib.metadata import version

    specs = {
        "systems": [s.model_dump(mode="json") for s in config.systems],
        "caller": config.caller.model_dump(mode="json"),
        "judge": config.judge.model_dump(mode="json"),
        "conditions": config.conditions,
    }
    row = {
        "run_id": config.run_id,
        "batch": "run",
        "created_at": datetime.now(UTC).isoformat(),
        "evaflow_version": version("evaflow"),
        "config_json": config.model_dump_json(),
        "specs_json": json.dumps(specs, sort_keys=True),
        "rehearsal": config.rehearse,
        **price_table_columns(config.prices),
    }
    from tasks.tables import to_table

    store.write_single("runs", config.run_id or "", to_table("runs", [row]), name="run")


@flow(name="evaflow-benchmark", log_prints=False, validate_parameters=True)
def run_benchmark(config: BenchmarkConfig, new_run_if_changed: bool = False) -> RunSummary:
    """Run (or resume) a benchmark; every trial is stored exactly once.

    A stored run id resumes only with the configuration it was stored with (see
    :func:`resume_config`); ``new_run_if_changed`` starts a new run id instead of failing.
    """
    started = time.perf_counter()
    phases = _Phases()
    # The configured runner, not the flow's default one (an unbounded thread pool that would
    # run every pending trial at once and ignore --workers / --runner dask). A local Dask
    # cluster starts in the background while the configuration is checked and the records
    # load, and closes while the run is summarised: workers are idle in neither.
    # A rehearsal's stand-ins start first and stop last: the runner's local workers (and
    # the bots they start) inherit its variables (tasks.systems.rehearsal).
    with contextlib.ExitStack() as stack:
        rehearsed = _enter_rehearsal(config, stack)
        api_url = stack.enter_context(workers_report_here())
        lifetime = stack.enter_context(RunnerLifetime(config, api_url))
        run_id, store, scenarios, pending, skipped = _prepare(
            config, new_run_if_changed, phases, rehearsed
        )
        if pending:
            ensure_judge_limits(config)  # before the first judging stage asks for a slot
        from tasks.writer import BatchWriter

        writer = BatchWriter(store, run_id, config.batch_size, rehearsal=config.rehearse)
        _notify(0, len(pending), None)
        phases.lap("load")
        if config.report:
            _import_report_in_background()
        runner = lifetime.ready()
        phases.lap("start")

        def submit(spec: TrialSpec) -> Any:
            return runner.submit(
                run_trial_step, trial_parameters(spec, scenarios[spec.scenario_key])
            )

        ordered = longest_first(pending, scenarios)
        completed = completed_in_window(
            submit,
            _then_prestart_report(ordered) if config.report else ordered,
            submission_window(config.runner.workers),
        )
        failures = _collect(completed, len(pending), writer, get_run_logger())
        phases.lap("trials")
        lifetime.close_in_background()
        if failures:
            raise RuntimeError(
                f"{len(failures)} trial(s) of run {run_id} failed in their worker; every "
                "completed trial is stored, re-run the same --run-id to resume"
            ) from failures[0]
        # The report's helper starts on the pages and analyses (they read the attempts, not
        # the aggregates) while this process aggregates; nothing is left running on failure.
        begun = _begin_report(store, run_id) if config.report else None
        if begun is not None:
            stack.callback(begun.abandon)
        aggregates = aggregate_run(store, run_id)
        phases.lap("summarize")
        report = (
            write_report_task(quote(store), run_id, quote(begun), return_state=False)
            if config.report
            else None
        )
        publish_artifacts(run_id, aggregates, report)
        phases.lap("report")
    phases.lap("stop")  # what closing the runner took beyond summarising and the report
    trials = store.read("trials", run_id)
    return RunSummary(
        run_id=run_id,
        store=config.store,
        trials=int(trials["trial_key"].nunique()) if len(trials) else 0,
        simulated_trials=len(pending),
        skipped_trials=skipped,
        attempts=len(trials),
        valid=int(trials["valid"].sum()) if len(trials) else 0,
        aggregates=aggregates,
        report=report,
        wall_s=time.perf_counter() - started,
        phase_s=phases.seconds,
        scenario_shared=_shared_systems(trials),
    )


def _shared_systems(trials: Any) -> list[str]:
    from analysis.report_index import shared_systems

    return shared_systems(trials)


def _enter_rehearsal(config: BenchmarkConfig, stack: contextlib.ExitStack) -> Any:
    """The running rehearsal (stand-ins up, variables set until ``stack`` closes), or None.
    The stand-ins listen on this machine's loopback: a remote cluster cannot reach them."""
    if not config.rehearse:
        return None
    from tasks.config import ConfigError
    from tasks.systems.rehearsal import rehearsal

    if config.runner.dask_address:
        raise ConfigError(
            "a rehearsal runs on local runners only (its stand-ins listen on loopback); "
            "drop --dask-address"
        )
    check_names(config)
    return stack.enter_context(rehearsal(config.systems, load_checked(config.scenarios)))


def _prepare(
    config: BenchmarkConfig, new_run_if_changed: bool, phases: _Phases, rehearsed: Any = None
) -> tuple[str, Store, dict[str, Scenario], list[TrialSpec], int]:
    """Checks, resume and records: run id, store, scenarios, pending trials, skipped count.
    A rehearsal's preflight checks the systems as pointed at its stand-ins."""
    config = config.with_run_id()
    run_id = config.run_id or ""
    from tasks.systems.preflight import preflight
    from tasks.systems.rehearsal import rehearsal_preflight

    check_names(config)  # bad input stops the run here: no trial, no runs row
    if rehearsed is not None:
        rehearsal_preflight(rehearsed.systems, config.systems_dirs)
    else:
        preflight(config.systems, systems_dirs=config.systems_dirs)  # nothing stored if it fails
    logger = get_run_logger()
    from tasks.store import Store

    store = Store(config.store)
    _recover(store, run_id, logger)
    config = resume_config(store, config, new_run_if_changed)  # before anything is stored
    if config.run_id != run_id:
        run_id = config.run_id or ""
        logger.warning("configuration changed: running as new run %s", run_id)
        _recover(store, run_id, logger)
    phases.lap("checks")
    # Load first: a bad scenario source must not leave a runs row for a run that never ran.
    scenarios = {s.key: s for s in load_checked(config.scenarios)}
    if stored_config_json(store, run_id) is None:
        _write_run_row(store, config)  # a resumed run keeps the row it was stored with
    scratch = (
        str(Path(config.store).resolve() / "_scratch" / run_id)
        if "://" not in config.store
        else None
    )
    specs = expand_trials(config, list(scenarios.values()), scratch)
    done = store.completed_trial_keys(run_id)
    pending = [s for s in specs if s.trial_key not in done]
    logger.info(
        "run %s: %d trials, %d already stored", run_id, len(specs), len(specs) - len(pending)
    )
    return run_id, store, scenarios, pending, len(specs) - len(pending)


def longest_first(pending: list[TrialSpec], scenarios: dict[str, Scenario]) -> list[TrialSpec]:
    """Trials with the longest golden trace (a conversation's length) first, and among
    equally long ones the most perturbed condition first. Both runners start tasks in
    submission order; a long trial started last keeps one worker busy while the others have
    nothing left. A perturbed call takes longer than its clean twin (noise is mixed into
    every frame and the agent mishears, so turns are repeated: 5.2 -> 7.2 s, 10.4 -> 13.7 s
    and 10.6 -> 16.6 s in the quick run). Which trials run is unchanged, and rows are
    stored in completion order either way."""

    def expected_work(spec: TrialSpec) -> tuple[int, int]:
        axes = 0 if spec.condition == "clean" else 1 + spec.condition.count("+")
        return -len(scenarios[spec.scenario_key].expected_trace), -axes

    return sorted(pending, key=expected_work)


def _import_report_in_background() -> None:
    """Import the report's modules (matplotlib, the analyses: about a fifth of the report's
    time, profiled) while the flow waits for its cluster, not after the trials when both
    workers sit idle. Started then, they neither slow the flow's checks and loading (same
    process) nor take a core from the first trials: while one forkserver imports the worker
    code a core is free. If the cluster is already up, they run beside the first trials."""

    threading.Thread(target=_report_module, name="report-imports", daemon=True).start()


def _then_prestart_report(specs: list[TrialSpec]) -> Iterator[TrialSpec]:
    """``specs``, then (once the last is submitted) the report's helper interpreter starts,
    so its imports (about a second) run beside the last trials rather than on the report's
    critical path (analysis.report_helper). Not earlier: the whole run long it would only
    hold memory (145 MB more at the peak of a 1,000-attempt text run)."""
    yield from specs
    with contextlib.suppress(ImportError):
        from analysis.report_helper import prestart

        prestart()


def _report_module() -> Any:
    """``analysis.report``, or None when the analysis package is not installed."""
    try:
        import analysis.report
    except ImportError:
        return None
    return analysis.report


def _begin_report(store: Store, run_id: str) -> Any:
    """The report's shared work, begun (analysis.report.begin_report); None without the
    analysis package."""
    report = _report_module()
    return None if report is None else report.begin_report(store, run_id)


@stage_task(REPORT)
def write_report_task(store: Store, run_id: str, begun: Any = None) -> str | None:
    """The report stage: the run's static HTML report (``begun``: its pages' and analyses'
    work, already begun)."""
    return _write_report(store, run_id, begun)


def _write_report(store: Store, run_id: str, begun: Any = None) -> str | None:
    """The report's location; None without the analysis package."""
    report = _report_module()
    return None if report is None else str(report.write_report(store, run_id, begun=begun))
