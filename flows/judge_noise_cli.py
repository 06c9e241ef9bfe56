"""``evaflow judges noise``: judge a stored run's kept attempts N times and measure how
much of each metric's variation is the judge (``tasks.judge_noise``)."""

from __future__ import annotations

import math
from typing import Annotated, Any

import typer
from rich.table import Table

from flows.app import DEFAULT_STORE, StoreOpt, emit_json, fail, open_store, out, split_values
from flows.judge_options import (
    JudgeModelOpt,
    MetricsOpt,
    ModelListOpt,
    RejudgeOpt,
    judge_options,
    rejudge_params,
)
from flows.judges_cli import judges_app


@judges_app.command("noise")
def judges_noise(
    run_id: str,
    repeats: Annotated[
        int,
        typer.Option(
            "--repeats",
            metavar="N",
            help="Judgings of every kept attempt (at least 2), stored as scorings "
            "PREFIX-1..N; the ones already stored are kept, not judged again",
        ),
    ] = 3,
    store: StoreOpt = DEFAULT_STORE,
    judge: RejudgeOpt = None,
    metrics: MetricsOpt = None,
    prefix: Annotated[
        str, typer.Option("--prefix", help="Name prefix of the repeat scorings")
    ] = "noise",
    model_list: ModelListOpt = None,
    judge_model: JudgeModelOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON")] = False,
) -> None:
    """Judge noise of a stored run, without simulating: re-judge its kept attempts N times
    and store, per metric and judge model, the spread between repeats of one attempt
    (judge variance, pass/fail flip rate) against the spread between attempts
    (conversation variance) in the ``judge_noise`` table. A killed measurement resumes at
    the first repeat not stored; use another --prefix to measure another judge."""
    from evaflow_core.registry import UnknownNameError
    from tasks.judge_noise import NoiseRequest, measure_judge_noise
    from tasks.rescore import reaggregate

    if repeats < 2:
        fail(f"--repeats must be at least 2 (got {repeats}): noise needs two judgings")
    if not prefix or "/" in prefix or "\\" in prefix or prefix.startswith(".") or prefix == "run":
        fail(f"--prefix {prefix!r}: a plain name without '/', not 'run'")
    s = open_store(store)
    entries, models = judge_options(model_list, judge_model)
    request = NoiseRequest(
        run_id=run_id,
        repeats=repeats,
        prefix=prefix,
        judge=judge or ("llm" if models else None),
        metrics=split_values(metrics),
    )
    try:
        params = rejudge_params(s, run_id, request.judge, entries, models)
        if params is not None:
            request.judge_params = params
        report = measure_judge_noise(s, request)
    except (UnknownNameError, ValueError) as exc:  # ConfigError is a ValueError
        fail(str(exc).splitlines()[0] if str(exc) else repr(exc))
        return
    reaggregate(s, run_id)  # the latest scoring moved: the aggregates follow it
    if as_json:
        emit_json(report.model_dump())
        return
    out.print(_table(report.rows, run_id, prefix))
    out.print(
        f"{len(report.scorings)} repeats of {run_id} ({', '.join(report.scorings)}): "
        f"{len(report.judged)} judged now, {len(report.resumed)} already stored; "
        f"table judge_noise (evaflow query \"SELECT * FROM judge_noise WHERE prefix = '{prefix}'\")"
    )


def _num(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def _table(rows: list[dict[str, Any]], run_id: str, prefix: str) -> Table:
    """The figures that answer "judge or conversations?"; every column is in the table.
    Metrics with no value in any repeat (skipped in this mode) are left out."""
    table = Table(title=f"judge noise of {run_id} ({prefix}-*)")
    columns = ("metric", "judge", "n", "mean", "judge SD", "flip rate", "conv. SD", "judge %")
    for col in columns:
        text = col in ("metric", "judge")
        # Names fold onto a second line rather than vanish in a narrow terminal.
        table.add_column(col, overflow="fold" if text else "ellipsis", no_wrap=not text)
    for r in rows:
        if not r["n_values"]:
            continue
        share = r["judge_share"]
        table.add_row(
            r["metric"],
            r["judge_model"],
            str(r["n_attempts"]),
            _num(r["mean"]),
            _num(r["judge_sd"]),
            _num(r["flip_rate"], 2),
            _num(r["conversation_sd"]),
            "-" if share is None else f"{100 * share:.0f}",
        )
    return table
