"""``evaflow analyze [robustness|key-entities|ci-vs-k|consistency|published|all]``.

Registers the command on the shared Typer ``app`` when imported (``flows.cli.main``
imports this module).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from flows.app import DEFAULT_STORE, app, check_out_dir, console, emit_json, fail, open_store, out
from flows.app import split_values as _split

WHICH_HELP = (
    "robustness | key-entities | ci-vs-k | consistency (with pareto, threshold-sensitivity, "
    "faithfulness-decoupling) | published | all, or any single analysis name"
)


def _resolve_runs(store: str, runs: list[str] | None, which: str) -> list[str]:
    """The runs to analyse; without --runs, the store's only run (published needs none)."""
    chosen = _split(runs) or []
    if not chosen and which == "published":
        return []
    known = open_store(store).run_ids()
    if not chosen:
        if len(known) != 1:
            fail(
                f"--runs is required: the store {store} holds {len(known)} runs "
                f"({', '.join(known) or 'none'})"
            )
        return known
    missing = [r for r in chosen if r not in known]
    if missing:
        fail(
            f"run(s) {', '.join(missing)} not in store {store}; runs: {', '.join(known) or 'none'}"
        )
    return chosen


def _check_stats(stats: Path) -> None:
    """``--stats`` is a readable JSON file (checked before the flow starts)."""
    import json

    if not stats.is_file():
        fail(f"--stats {stats}: file not found")
    try:
        json.loads(stats.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        fail(f"--stats {stats}: not a JSON file ({' '.join(str(exc).split())})")


def _execute(
    which: str,
    store: str,
    runs: list[str],
    out_dir: Path | None,
    stats: Path | None,
    systems: list[str] | None,
    use_flow: bool,
    verbose: bool,
) -> list[dict[str, Any]]:
    if use_flow:
        from flows.env import configure_prefect

        configure_prefect(store, verbose)
    from flows.analysis_flow import run_analysis

    fn = run_analysis if use_flow else run_analysis.fn
    return fn(
        store=store,
        runs=runs,
        which=which,
        out=str(out_dir) if out_dir else None,
        stats=str(stats) if stats else None,
        systems=systems,
    )


def print_results(results: list[dict[str, Any]]) -> None:
    for result in results:
        colour = {"ok": "green", "skipped": "yellow"}.get(result["status"], "red")
        out.print(
            f"[bold]{result['name']}[/]: [{colour}]{result['status']}[/]"
            + (f" ({result['message']})" if result.get("message") else ""),
            highlight=False,
            soft_wrap=True,
        )
        for claim in (result.get("summary") or {}).get("claims", []):
            mark = {True: "[green]holds[/]", False: "[red]does not hold[/]"}.get(
                claim["holds"], "[cyan]value[/]"
            )
            out.print(
                f"  {mark} {claim['statement']}: {claim['value']}", highlight=False, soft_wrap=True
            )
        pngs = [f for f in result.get("figures", []) if f.endswith(".png")]
        if pngs:
            out.print(
                f"  figures: {len(pngs)} (PNG + SVG) in {Path(pngs[0]).parent}",
                highlight=False,
                soft_wrap=True,
            )
        for name, path in (result.get("table_paths") or {}).items():
            out.print(f"  table {name}: {path}", highlight=False, soft_wrap=True)


@app.command()
def analyze(
    which: Annotated[str, typer.Argument(help=WHICH_HELP)] = "all",
    runs: Annotated[
        list[str] | None,
        typer.Option(
            "--runs",
            help="Run ids (comma separated or repeated); published: place these runs on the published fronts",
        ),
    ] = None,
    store: Annotated[
        str, typer.Option("--store", help="Store root: directory or fsspec URL")
    ] = DEFAULT_STORE,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Output directory (default <store>/analysis/<runs>)"),
    ] = None,
    stats: Annotated[
        Path | None, typer.Option("--stats", help="published: the published statistics JSON")
    ] = None,
    systems: Annotated[
        list[str] | None, typer.Option("--systems", help="published: only these system ids")
    ] = None,
    no_flow: Annotated[
        bool, typer.Option("--no-flow", help="Run directly, without a Prefect flow run")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON")] = False,
    verbose: Annotated[bool, typer.Option(help="Show Prefect logs")] = False,
) -> None:
    """Reproduce the paper's studies on stored runs, or check the published results."""
    from analysis.runner import choices

    if which not in choices():
        fail(f"unknown analysis {which!r}; choose one of: {', '.join(choices())}")
    if which == "published" and stats is None:
        fail("analyze published needs --stats FILE (the published leaderboard statistics JSON)")
    if stats is not None:
        _check_stats(stats)
    if systems and which != "published":
        fail(f"--systems {','.join(systems)}: only 'analyze published' takes --systems")
    check_out_dir("--out", out_dir)
    chosen = _resolve_runs(store, runs, which)
    try:
        results = _execute(
            which, store, chosen, out_dir, stats, _split(systems), not no_flow, verbose
        )
    except ValueError as exc:
        fail(str(exc))
    if as_json:
        emit_json(results)
        return
    print_results(results)
    if any(r["status"] == "error" for r in results):
        console.print("[red]some analyses failed; see the messages above[/]")
        raise typer.Exit(1)
