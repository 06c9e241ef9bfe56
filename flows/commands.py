"""Subcommands besides ``run``: query, runs, scenarios, report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer
from rich.table import Table

from flows.app import (
    DEFAULT_STORE,
    app,
    check_choice,
    check_out_dir,
    console,
    emit_json,
    fail,
    open_store,
    out,
)
from flows.app import split_values as _split

runs_app = typer.Typer(help="List and inspect stored runs.", no_args_is_help=True)
scenarios_app = typer.Typer(
    help="Scenario sources: list, show, validate, replay, generate.", no_args_is_help=True
)
app.add_typer(runs_app, name="runs")
app.add_typer(scenarios_app, name="scenarios")

Store_ = Annotated[str, typer.Option("--store", help="Store root: directory or fsspec URL")]
FORMATS = ("table", "csv", "json")


def print_frame(frame: pd.DataFrame, fmt: str, title: str | None = None) -> None:
    if fmt == "csv":
        typer.echo(frame.to_csv(index=False), nl=False)
    elif fmt == "json":
        typer.echo(frame.to_json(orient="records", date_format="iso", default_handler=str))
    else:
        table = Table(title=title)
        for col in frame.columns:
            table.add_column(str(col))
        for row in frame.itertuples(index=False):
            table.add_row(*[_cell(v) for v in row])
        out.print(table)


def _cell(value: Any) -> str:
    # SQL NULL reaches pandas as None, NaN (float columns), NA or NaT; print it as DuckDB's
    # shell does. (A float NaN stored as such is indistinguishable here and prints NULL too.)
    if value is None or value is pd.NA or value is pd.NaT:
        return "NULL"
    if isinstance(value, float) and value != value:
        return "NULL"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "..."


@app.command()
def query(
    sql: Annotated[
        str,
        typer.Argument(
            help="SQL over the views: runs, trials, turns, tool_calls, metrics, entities, events, aggregates, audio, usage, prices, costs"
        ),
    ],
    store: Store_ = DEFAULT_STORE,
    run: Annotated[
        list[str] | None, typer.Option("--run", help="Restrict the views to these runs")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="table | csv | json")] = "table",
) -> None:
    """Query every stored table with DuckDB SQL."""
    from tasks.store import StoreError

    check_choice("--format", fmt, FORMATS)
    s = open_store(store)
    _check_runs(s, store, _split(run) or [])
    try:
        frame = s.query(sql, _split(run))
    except StoreError as exc:
        # DuckDB's first line says what is wrong (and names a corrupt file); the rest is
        # the SQL echoed with a caret under it.
        fail(str(exc).splitlines()[0])
    print_frame(frame, fmt)


def _check_runs(s: Any, store: str, runs: list[str]) -> None:
    known = s.run_ids()
    missing = [r for r in runs if r not in known]
    if missing:
        fail(
            f"no run {', '.join(map(repr, missing))} in {store}; runs: {', '.join(known) or '(none)'}"
        )


@runs_app.command("list")
def runs_list(
    store: Store_ = DEFAULT_STORE, fmt: Annotated[str, typer.Option("--format")] = "table"
) -> None:
    """One line per run: attempts, valid attempts, systems, conditions."""
    check_choice("--format", fmt, FORMATS)
    frame = open_store(store).query(
        "SELECT run_id, count(DISTINCT trial_key) AS trials, count(*) AS attempts, "
        "sum(CASE WHEN valid THEN 1 ELSE 0 END) AS valid, string_agg(DISTINCT system, ',') AS systems, "
        "string_agg(DISTINCT condition, ',') AS conditions FROM trials GROUP BY run_id ORDER BY run_id"
    )
    print_frame(frame, fmt, title=f"runs in {store}")


@runs_app.command("show")
def runs_show(run_id: str, store: Store_ = DEFAULT_STORE) -> None:
    """Status counts and the headline pass rates of one run."""
    s = open_store(store)
    _check_runs(s, store, [run_id])
    print_frame(
        s.query(
            "SELECT status, end_reason, count(*) AS n FROM trials GROUP BY ALL ORDER BY n DESC",
            [run_id],
        ),
        "table",
        title=f"attempts of {run_id}",
    )
    print_frame(
        s.query(
            "SELECT system, domain, condition, dimension, pass_at_1, pass_at_k, pass_pow_k, k, n "
            "FROM aggregates WHERE dimension IN ('EVA-A_pass','EVA-X_pass') ORDER BY ALL",
            [run_id],
        ),
        "table",
        title="pass rates",
    )


@scenarios_app.command("list")
def scenarios_list(
    eva_root: Annotated[
        Path | None, typer.Option(help="An EVA checkout; default: built-in pack")
    ] = None,
    pack: Annotated[Path | None, typer.Option(help="A scenario pack directory")] = None,
    domains: Annotated[list[str] | None, typer.Option(help="Domains")] = None,
) -> None:
    """List scenarios of a source."""
    rows = [
        {"domain": s.domain, "id": s.id, "goal": s.user_goal.get("high_level_user_goal", "")[:90]}
        for s in _load(eva_root, pack, domains)
    ]
    print_frame(pd.DataFrame(rows), "table", title=f"{len(rows)} scenarios")


@scenarios_app.command("show")
def scenarios_show(
    key: Annotated[str, typer.Argument(help="DOMAIN/ID, e.g. airline/1.1.2")],
    eva_root: Annotated[Path | None, typer.Option()] = None,
    pack: Annotated[Path | None, typer.Option()] = None,
) -> None:
    """Print one scenario as JSON."""
    domain, _, rid = key.partition("/")
    found = [s for s in _load(eva_root, pack, [domain]) if s.id == rid]
    if not found:
        fail(f"no scenario {key!r} (expected DOMAIN/ID)")
    typer.echo(found[0].model_dump_json(exclude={"initial_db", "expected_db"}, indent=2))


@scenarios_app.command("validate")
def scenarios_validate(
    eva_root: Annotated[Path | None, typer.Option()] = None,
    pack: Annotated[Path | None, typer.Option()] = None,
) -> None:
    """Check the data invariants (dates, placeholders, trace replays to the expected DB)."""
    from scenarios.checks import validate_scenarios

    issues = validate_scenarios(_load(eva_root, pack, None))
    for issue in issues:
        console.print(f"[red]{issue}[/]")
    out.print(f"{len(issues)} issue(s)")
    raise typer.Exit(1 if issues else 0)


@scenarios_app.command("replay")
def scenarios_replay(
    eva_root: Annotated[Path, typer.Option(help="An EVA checkout")],
    reference: Annotated[Path, typer.Option(help="Directory of golden <domain>.json replays")],
    domains: Annotated[list[str] | None, typer.Option()] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Replay golden tool calls and compare responses and final DB hashes."""
    from scenarios.engines import known_domains
    from scenarios.replay import replay_reference

    # A problem of one domain is a row of the report; a wrong path or name is the user's.
    if not (eva_root / "data").is_dir():
        fail(f"--eva-root {eva_root}: not an EVA checkout (no data/ directory)")
    if not reference.is_dir():
        fail(f"--reference {reference}: not a directory")
    unknown = [d for d in _split(domains) or [] if d not in known_domains()]
    if unknown:
        fail(
            f"--domains: unknown domain(s) {', '.join(unknown)}; valid: {', '.join(known_domains())}"
        )
    report = replay_reference(eva_root, reference, domains=_split(domains))
    data = report.model_dump()
    if as_json:
        emit_json(data)
        return
    table = Table(title="conformance replay")
    for col in ("domain", "records", "hash match", "calls", "response match", "failures"):
        table.add_column(col)
    for domain, d in data["domains"].items():
        table.add_row(
            domain,
            str(d.get("records")),
            str(d.get("hash_match")),
            str(d.get("calls")),
            str(d.get("response_match")),
            str(len(d.get("failures") or [])),
        )
    out.print(table)


def _load(eva_root: Path | None, pack: Path | None, domains: list[str] | None) -> list[Any]:
    from tasks.config import ScenarioSource, parse_config
    from tasks.sources import load_source

    try:
        fields: dict[str, Any] = {"eva_root": eva_root, "pack": pack}
        if _split(domains):
            fields["domains"] = _split(domains)
        # Through the run config's parser: its message is one line per field, not pydantic's.
        source: ScenarioSource = parse_config({"scenarios": fields}, "command line").scenarios
        return load_source(source)
    except ValueError as exc:  # ConfigError and ScenarioError are ValueErrors
        fail(str(exc))
    return []


@app.command()
def report(
    run_id: str,
    store: Store_ = DEFAULT_STORE,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Output directory")] = None,
) -> None:
    """Write the static HTML report of a run."""
    from analysis.report import write_report

    check_out_dir("--out", out_dir)
    s = open_store(store)
    _check_runs(s, store, [run_id])
    out.print(str(write_report(s, run_id, out_dir)))


@scenarios_app.command("generate")
def scenarios_generate(
    out_dir: Annotated[Path, typer.Option("--out", help="Output pack directory")],
    domain: Annotated[str | None, typer.Option(help="One domain; all three if unset")] = None,
    n: Annotated[int, typer.Option("--n", help="Records to generate (with --domain)")] = 12,
    seed: Annotated[int, typer.Option(help="Generator seed: same seed, same files")] = 7,
) -> None:
    """Generate a new scenario pack (people, bookings, traces, expected DBs) from a seed."""
    from scenarios.generate import GenerationError, build_builtin_pack, generate_pack
    from scenarios.generate.pack import MAX_RECORDS

    check_out_dir("--out", out_dir)
    if not 1 <= n <= MAX_RECORDS:
        fail(f"--n must be between 1 and {MAX_RECORDS} (got {n})")
    try:
        if domain:
            ids = {domain: generate_pack(domain, n, seed, out_dir)}
        else:
            ids = build_builtin_pack(out_dir, seed=seed)
    except (GenerationError, ValueError, KeyError) as exc:
        fail(str(exc))
        return
    for name, records in ids.items():
        out.print(f"{name}: {len(records)} records -> {out_dir}")
