"""The LLM judges' command-line options, shared by ``run``, ``score`` and ``judges
validate``: ``--model-list PATH`` and ``--judge-model METRIC=MODEL_NAME``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from flows.app import fail

ModelListOpt = Annotated[
    Path | None,
    typer.Option(
        "--model-list",
        help="LiteLLM model list (JSON or YAML; EVA_MODEL_LIST's shape) for --judge llm; "
        "default: the run's, else $EVA_MODEL_LIST",
    ),
]
JudgeModelOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--judge-model",
        help="METRIC=MODEL_NAME: the model_name judging METRIC (--judge llm); repeatable",
    ),
]


def judge_options(
    model_list: Path | None, assignments: list[str] | None
) -> tuple[list[Any] | None, dict[str, str]]:
    """(the list read from ``--model-list``, the ``--judge-model`` assignments); a bad
    file or assignment is one line and exit 2."""
    from tasks.judges.models import parse_assignments
    from tasks.model_list import read_model_list_file

    try:
        entries = read_model_list_file(model_list) if model_list is not None else None
        return entries, parse_assignments(assignments or [])
    except ValueError as exc:  # ConfigError is one
        fail(str(exc))
    raise AssertionError("unreachable: fail() exits")


def llm_params(stored: Any, entries: list[Any] | None, models: dict[str, str]) -> dict[str, Any]:
    """A re-judging's llm judge params: the run's stored judge's when it was llm, the
    ``--model-list`` / ``--judge-model`` options over them."""
    import os

    from tasks.judge_checks import llm_judge_params

    base = stored.params if stored.name == "llm" else {}
    return llm_judge_params(base, entries, models, os.environ)


def rejudge_params(
    store: Any, run_id: str, judge: str | None, entries: list[Any] | None, models: dict[str, str]
) -> dict[str, Any] | None:
    """The judge params of a re-judging of ``run_id`` by ``judge`` (None: the stored
    judge): the llm judge's (:func:`llm_params`), or None to keep the stored ones. Raises
    ``UnknownNameError`` for an unknown judge, ``ValueError`` for a run that is not there."""
    from tasks.judges import JUDGES
    from tasks.rescore import run_config

    if judge is not None:
        JUDGES.get(judge)
    stored = run_config(store, run_id).judge
    return llm_params(stored, entries, models) if (judge or stored.name) == "llm" else None


# The options a re-judging command (score, judges noise) shares.
RejudgeOpt = Annotated[
    str | None, typer.Option("--judge", help="offline | llm (default: the run's judge)")
]
MetricsOpt = Annotated[
    list[str] | None, typer.Option("--metrics", help="Only these metrics (comma list)")
]
