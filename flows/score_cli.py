"""``evaflow score`` and ``evaflow aggregate``: judge a stored run again, re-aggregate it.

Neither simulates: both read the store (``tasks.rescore``). Bad input (an unknown run id,
judge or metric, a scoring name in use) is one line and exit 2.
"""

from __future__ import annotations

from typing import Annotated

import typer

from flows.app import DEFAULT_STORE, StoreOpt, app, emit_json, fail, open_store, out, split_values
from flows.judge_options import (
    JudgeModelOpt,
    MetricsOpt,
    ModelListOpt,
    RejudgeOpt,
    judge_options,
    rejudge_params,
)


@app.command()
def score(
    run_id: str,
    store: StoreOpt = DEFAULT_STORE,
    judge: RejudgeOpt = None,
    metrics: MetricsOpt = None,
    failed_only: Annotated[
        bool, typer.Option("--failed-only", help="Only metrics whose latest value errored")
    ] = False,
    name: Annotated[
        str | None, typer.Option("--name", help="Name of the new scoring (default JUDGE-N)")
    ] = None,
    model_list: ModelListOpt = None,
    judge_model: JudgeModelOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON")] = False,
) -> None:
    """Judge a stored run again without simulating; stored as a new scoring next to the
    earlier ones (views show each metric's latest). Then re-aggregates the run."""
    from evaflow_core.registry import UnknownNameError
    from tasks.rescore import ScoringRequest, reaggregate, rescore_run

    s = open_store(store)
    entries, models = judge_options(model_list, judge_model)
    request = ScoringRequest(
        run_id=run_id,
        judge=judge or ("llm" if models else None),
        metrics=split_values(metrics),
        failed_only=failed_only,
        name=name,
    )
    try:
        params = rejudge_params(s, run_id, request.judge, entries, models)
        if params is not None:
            request.judge_params = params
        report = rescore_run(s, request)
    except (UnknownNameError, ValueError) as exc:  # ConfigError is a ValueError
        fail(str(exc).splitlines()[0] if str(exc) else repr(exc))
        return
    reaggregate(s, run_id)
    if as_json:
        emit_json(report.model_dump())
        return
    out.print(
        f"scoring {report.name} of {run_id}: {report.attempts} attempts, {report.rows} metric "
        f"rows in {report.seconds:.1f} s; aggregates rewritten"
    )


@app.command()
def aggregate(run_id: str, store: StoreOpt = DEFAULT_STORE) -> None:
    """Recompute only the aggregates of a stored run (over each metric's latest scoring)."""
    from tasks.rescore import reaggregate

    s = open_store(store)
    try:
        rows = reaggregate(s, run_id)
    except ValueError as exc:
        fail(str(exc))
        return
    out.print(f"aggregates of {run_id} rewritten: {len(rows)} headline rows")
