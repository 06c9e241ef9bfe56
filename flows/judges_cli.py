"""``evaflow judges validate``: a judge's agreement with human labels, and for the offline
judge its cross-validated agreement (``--cv K``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from flows.app import app, emit_json, fail, out
from flows.app import split_values as _split
from flows.judge_options import JudgeModelOpt, ModelListOpt, judge_options

judges_app = typer.Typer(help="Judges: validate against human labels.", no_args_is_help=True)
app.add_typer(judges_app, name="judges")

CvOpt = Annotated[
    int | None,
    typer.Option(
        "--cv",
        metavar="K",
        help="Offline judge only: K-fold cross-validation of its fitted parameters. "
        "Each fold (conversations grouped, folds from a seeded hash) is scored with "
        "parameters fitted on the other folds only; prints the pooled CV figures next to "
        "the in-sample ones (the shipped defaults were fitted on all these labels). "
        "K=5 is the reference.",
    ),
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the fold assignment (with --cv)")]


@judges_app.command("validate")
def judges_validate(
    set_dir: Annotated[
        Path, typer.Option("--set", help="Directory of human-labelled *.jsonl sets")
    ],
    judge: Annotated[str, typer.Option(help="offline | llm")] = "offline",
    metric: Annotated[list[str] | None, typer.Option(help="Only these metrics")] = None,
    model_list: ModelListOpt = None,
    judge_model: JudgeModelOpt = None,
    cv: CvOpt = None,
    seed: SeedOpt = 0,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Agreement of a judge with human labels: accuracy, macro-F1, Cohen's kappa. With
    ``--judge llm``: the model list and assignments a run would use (checked first). The
    offline judge's parameters were fitted to these labels, so its plain figures are
    in-sample: ``--cv 5`` measures how the fit generalises."""
    from evaflow_core.registry import UnknownNameError
    from tasks.judge_validation import validate_judge

    if not set_dir.is_dir():
        fail(f"--set {set_dir}: not a directory")
    if cv is not None:
        _cross_validate(set_dir, judge, _split(metric), cv, seed, as_json)
        return
    entries, models = judge_options(model_list, judge_model)
    params = _validation_judge_params(judge, entries, models, _split(metric))
    try:
        report = validate_judge(set_dir, judge, _split(metric), judge_params=params)
    except (UnknownNameError, ValueError) as exc:  # an unknown --judge or --metric
        fail(str(exc))
    data = report.model_dump()
    if as_json:
        emit_json(data)
        return
    table = Table(title=f"judge '{judge}' vs human labels")
    for col in ("metric", "n", "accuracy", "macro-F1", "kappa"):
        table.add_column(col)
    for name, m in data.get("metrics", {}).items():
        table.add_row(
            name,
            str(m.get("n")),
            _num(m.get("accuracy")),
            _num(m.get("macro_f1")),
            _num(m.get("kappa")),
        )
    out.print(table)
    ke = data.get("key_entity_transcription") or {}
    if ke:
        out.print(
            f"key_entity_transcription: n={ke.get('n')} entity F1 (lenient)={_num(ke.get('entity_f1_lenient'))} "
            f"correctness with penalty={_num(ke.get('correctness_with_penalty'))}"
        )
    if judge == "offline":
        out.print("offline: in-sample (fitted to these labels); --cv 5 for the honest figure")


def _num(value: Any) -> str:
    return "NULL" if value is None else f"{value:.4g}"


def _cross_validate(
    set_dir: Path, judge: str, metrics: list[str] | None, k: int, seed: int, as_json: bool
) -> None:
    from tasks.judge_fit import cross_validate
    from tasks.judge_validation import ALIASES, KEY_ENTITY_METRIC

    if judge != "offline":
        fail(f"--cv is for --judge offline (the {judge!r} judge has no fitted parameters)")
    if k < 2:
        fail(f"--cv must be at least 2 (got {k})")
    try:
        report = cross_validate(set_dir, k, seed, [ALIASES.get(m, m) for m in metrics or []])
    except ValueError as exc:  # an unknown --metric
        fail(str(exc))
    if as_json:
        emit_json(report.model_dump())
        return
    table = Table(title=f"offline judge: {k}-fold cross-validation (seed {seed}) vs in-sample")
    for col in ("metric", "n", "CV acc", "CV kappa", "in-sample acc", "kappa"):
        table.add_column(col, no_wrap=col == "metric")
    stale = []
    for name, result in report.judges.items():
        cells = [_pair(result.cv.model_dump()), _pair(result.in_sample.model_dump())]
        label = "key_entity_transcription" if name == KEY_ENTITY_METRIC else name
        table.add_row(label, str(result.cv.n), *cells[0], *cells[1])
        if result.fit_all:
            stale.append(f"{name}: {result.fit_all}")
    out.print(table)
    out.print(
        "in-sample: the shipped defaults, fitted on all of these labels; CV: each fold scored "
        "with parameters fitted on the other folds only (key entities: lenient F1 in the acc "
        "columns, correctness with penalty in the kappa columns)"
    )
    for line in stale:
        out.print(f"the fit on all labels differs from the shipped defaults: {line}")


def _pair(figures: dict[str, Any]) -> tuple[str, str]:
    if figures.get("entity_f1_lenient") is not None:
        return _num(figures["entity_f1_lenient"]), _num(figures.get("correctness_with_penalty"))
    return _num(figures.get("accuracy")), _num(figures.get("kappa"))


def _validation_judge_params(
    judge: str, entries: list[Any] | None, models: dict[str, str], metrics: list[str] | None
) -> dict[str, Any]:
    """The llm judge's params for ``judges validate`` ({} for other judges), its models
    and keys checked for the metrics validated: one line and exit 2 when one is missing."""
    import os

    from tasks.judge_checks import llm_judge_params, llm_judge_problems
    from tasks.judge_validation import ALIASES, SET_FILES

    if judge != "llm":
        if entries is not None or models:
            fail("--model-list and --judge-model are for --judge llm")
        return {}
    try:
        params = llm_judge_params({}, entries, models, os.environ)
    except ValueError as exc:  # a damaged $EVA_MODEL_LIST
        fail(str(exc))
    wanted = [ALIASES.get(m, m) for m in (metrics or list(SET_FILES))]
    # agent_speech_fidelity's set has no audio: it is reported as skipped, never judged.
    problems = llm_judge_problems(
        params, [m for m in wanted if m in SET_FILES and m != "agent_speech_fidelity"]
    )
    if problems:
        fail("; ".join(problems))
    return params
