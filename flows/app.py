"""The shared Typer ``app`` and its output helpers.

Every command module (``cli``, ``commands``, ``analysis_cli``, ``judges_cli``,
``serve_cli``, ``systems_cli``) imports these from here, so none of them imports another
command module to get them and ``flows.cli.main`` can import the command modules without a
circle.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from tasks.store import Store

app = typer.Typer(
    help="evaflow: end-to-end benchmark for voice agents over real audio.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(stderr=True)
out = Console()

StoreOpt = Annotated[str, typer.Option("--store", help="Store root: directory or fsspec URL")]
DEFAULT_STORE = "./evaflow-data"


def emit_json(data: object) -> None:
    """Machine-readable output: plain JSON on stdout, never wrapped or coloured."""
    typer.echo(json.dumps(data, indent=2, default=str))


def fail(message: str, code: int = 2) -> None:
    # Never wrapped (one problem stays one line in a log) and never read as markup.
    console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def split_values(values: list[str] | None) -> list[str] | None:
    """Repeatable, comma-separated options (``--domains a,b --domains c``) as one list."""
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def open_store(root: str, must_exist: bool = True) -> Store:
    """The store at ``--store``, refused in one line when it is a file or (for reading)
    not there: a mistyped path would otherwise answer as an empty store."""
    from tasks.config_checks import store_problem
    from tasks.store import Store

    problem = store_problem(root, must_exist)
    if problem:
        fail(f"--store {problem}")
    return Store(root)


def check_choice(option: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        fail(f"{option} must be one of {', '.join(choices)} (got {value!r})")


def check_out_dir(option: str, path: Path | None) -> None:
    """An output directory option: absent (it is created) or a directory, never a file."""
    if path is not None and path.exists() and not path.is_dir():
        fail(f"{option} {path}: a file, not a directory")
