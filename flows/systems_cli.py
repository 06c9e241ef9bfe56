"""``evaflow systems list|show``: the systems catalogue (``tasks/systems/catalogue/*.yaml``).

Registered on the main Typer app by import (``flows.cli.main`` imports this module); also
the preflight check ``evaflow run`` makes before it starts Prefect.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
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


def check_systems(config: Any, network: bool | None = None) -> None:
    """Preflight of a parsed run config; exits with the one error naming what is missing
    (``network=False``: ``--no-preflight``, variables and builds only)."""
    from tasks.systems.preflight import preflight

    try:
        preflight(config.systems, systems_dirs=config.systems_dirs, network=network)
    except ConfigError as exc:
        fail(str(exc))


def check_rehearsal(config: Any, network: bool | None = None) -> None:
    """``evaflow run --rehearse --check``: preflight against the stand-ins."""
    from tasks.config_checks import load_checked
    from tasks.systems.rehearsal import rehearsal, rehearsal_preflight

    try:
        with rehearsal(config.systems, load_checked(config.scenarios)) as running:
            rehearsal_preflight(running.systems, config.systems_dirs, network=network)
    except ConfigError as exc:
        fail(str(exc))


def _rehearsed_calls(specs: list[SystemSpec], as_json: bool) -> None:
    """One short call per system against the stand-ins; per component, what worked."""
    from tasks.config import ScenarioSource
    from tasks.config_checks import load_checked
    from tasks.systems.rehearsal_check import short_calls

    try:
        scenario = load_checked(ScenarioSource(limit=1))[0]
        results = short_calls(specs, scenario)
    except ConfigError as exc:
        fail(str(exc))
    if as_json:
        emit_json([r.model_dump() for r in results])
    else:
        out.print(f"[bold yellow]REHEARSAL[/]: one call of {scenario.key} per system, stand-ins")
        for r in results:
            done = "completed the record" if r.completed else "did not complete the record"
            mark = "[green]ok[/]" if r.status == "ok" else f"[red]{escape(r.status)}[/]"
            out.print(
                f"{escape(r.system)}: {mark} ({escape(str(r.end_reason))}), "
                f"{r.tool_calls} tool calls, {done}" + (f": {escape(r.error)}" if r.error else ""),
                soft_wrap=True,
            )
            for c in r.components:
                seen = f"[green]{c.traffic} requests/sessions[/]" if c.traffic else "[red]none[/]"
                out.print(
                    f"  {escape(c.component)} -> {c.standin} stand-in: {seen}", soft_wrap=True
                )
    if any(r.status != "ok" or not all(c.traffic for c in r.components) for r in results):
        raise typer.Exit(2)


@systems_app.command("check")
def check_system(
    names: Annotated[list[str], typer.Argument(help="System name(s), as `evaflow systems list`")],
    dirs: DirsOpt = None,
    no_preflight: Annotated[
        bool, typer.Option("--no-preflight", help="Skip the network part (hosts, keys)")
    ] = False,
    rehearse: Annotated[
        bool,
        typer.Option(
            "--rehearse",
            help="One short call per system against local stand-ins of its providers "
            "(placeholder keys); prints what each component did",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Preflight of systems, every check shown: per component its variables, hosts, one
    authenticated request, and the Pipecat pipeline built without a call. Exit 2 if any
    check failed. ``--rehearse``: one short call per system against the stand-ins."""
    from tasks.systems.catalogue import to_system_spec
    from tasks.systems.preflight import run_checks

    catalogue = _catalogue(dirs)
    try:
        specs = [to_system_spec(catalogue.get(name)) for name in names]
    except KeyError as exc:
        fail(str(exc))
    if rehearse:
        _rehearsed_calls(specs, as_json)
        return
    checks = run_checks(specs, systems_dirs=dirs or [], network=not no_preflight)
    if as_json:
        emit_json([c.model_dump() for c in checks])
    else:
        table = Table(title="preflight")
        for col in ("system", "component", "check", "result"):
            table.add_column(col, overflow="fold")
        for c in checks:
            mark = "[green]ok[/]" if c.ok else "[red]FAILED[/]"
            table.add_row(c.system, c.component or "-", c.kind, f"{mark} {escape(c.detail)}")
        out.print(table)
    failed = [c for c in checks if not c.ok]
    if failed:
        raise typer.Exit(2)
