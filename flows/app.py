"""The shared Typer ``app`` and its output helpers.

Every command module (``cli``, ``commands``, ``analysis_cli``, ``serve_cli``,
``systems_cli``) imports these from here, so none of them imports another command module
to get them and ``flows.cli.main`` can import the command modules without a circle.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console

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
    console.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def split_values(values: list[str] | None) -> list[str] | None:
    """Repeatable, comma-separated options (``--domains a,b --domains c``) as one list."""
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]
