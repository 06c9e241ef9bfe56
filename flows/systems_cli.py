"""``evaflow systems list|show``: the systems catalogue (``tasks/systems/catalogue/*.yaml``).

Registered on the main Typer app by import (``flows.cli.main`` imports this module); also
the preflight check ``evaflow run`` makes before it starts Prefect.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from flows.app import app, emit_json, fail, out
from tasks.config import ConfigError, SystemSpec

systems_app = typer.Typer(
    help=(
        "The systems catalogue: every system `evaflow run --system NAME` can run. A system is "
        "one YAML file; add yours to a directory on $EVAFLOW_SYSTEMS_PATH (or a run config's "
        "systems_dirs). See tasks/systems/catalogue/README.md."
    ),
    no_args_is_help=True,
)
app.add_typer(systems_app, name="systems")

DirsOpt = Annotated[
    list[Path] | None,
    typer.Option("--systems-dir", help="Extra catalogue directory (repeatable)"),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON")]


def _catalogue(dirs: list[Path] | None) -> Any:
    from tasks.systems.catalogue import load_catalogue

    try:
        return load_catalogue(dirs or [])
    except ConfigError as exc:
        fail(str(exc))


def describe(entry: Any) -> dict[str, Any]:
    """One system as data: what it is, its components, which variables it needs and
    whether each is set (never their values), and what its agent's environment lacks."""
    from tasks.systems.preflight import environment_problems

    return {
        "name": entry.name,
        "title": entry.title,
        "architecture": entry.architecture,
        "description": entry.description,
        "agent": entry.agent,
        "components": {
            role: comp.model_dump(mode="json") for role, comp in entry.components.items()
        },
        "variables": {var: bool(os.environ.get(var)) for var in entry.required_env()},
        "environment": environment_problems(SystemSpec(name=entry.name, agent=entry.agent)),
        "paper_id": entry.paper_id,
        "source": entry.source,
    }


@systems_app.command("list")
def list_systems(dirs: DirsOpt = None, as_json: JsonOpt = False) -> None:
    """Every system: name, architecture, title, and whether it is ready to run here.

    Ready means its environment variables are set and its agent's environment exists
    (endpoints are checked when a run starts).
    """
    catalogue = _catalogue(dirs)
    rows = [describe(catalogue.get(name)) for name in catalogue]
    if as_json:
        emit_json(rows)
        return
    table = Table(title="systems (evaflow run --system NAME)")
    table.add_column("name", overflow="fold")
    for col in ("architecture", "title", "agent", "variables"):
        table.add_column(col)
    for row in rows:
        missing = [v for v, ok in row["variables"].items() if not ok]
        missing += ["make pipecat-env"] if row["environment"] else []
        status = "[green]ready[/]" if not missing else f"[yellow]needs {', '.join(missing)}[/]"
        table.add_row(row["name"], row["architecture"], row["title"], row["agent"], status)
    out.print(table)


@systems_app.command("show")
def show_system(
    name: Annotated[str, typer.Argument(help="System name, as `evaflow systems list` prints it")],
    dirs: DirsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """One system: components, required variables and whether each is set.

    Components are shown with provider, model and settings as the file writes them
    (``${VAR}`` unresolved); variable values are never printed.
    """
    catalogue = _catalogue(dirs)
    try:
        row = describe(catalogue.get(name))
    except KeyError as exc:
        fail(str(exc))
    if as_json:
        emit_json(row)
        return
    out.print(f"[bold]{row['name']}[/] - {row['title']} ({row['architecture']})", highlight=False)
    out.print(row["description"], highlight=False)
    out.print(f"agent: {row['agent']}    file: {row['source']}", highlight=False)
    table = Table(title="components")
    for col in ("role", "provider", "model", "params"):
        table.add_column(col)
    for role, comp in row["components"].items():
        params = ", ".join(f"{k}={v}" for k, v in comp["params"].items())
        table.add_row(role, comp["provider"], comp["model"] or "-", params or "-")
    out.print(table)
    if not row["variables"]:
        out.print("environment variables: none needed")
    for var, ok in row["variables"].items():
        out.print(f"  {var}: {'[green]set[/]' if ok else '[red]not set[/]'}")
    for problem in row["environment"]:
        out.print(f"[red]{problem}[/]", highlight=False)


def check_systems(config: Any) -> None:
    """Preflight of a parsed run config; exits with the one error naming what is missing."""
    from tasks.systems.preflight import preflight

    try:
        preflight(config.systems, systems_dirs=config.systems_dirs)
    except ConfigError as exc:
        fail(str(exc))
