"""``evaflow compare RUN_A [RUN_B] --systems X,Y``: is the difference between two systems real?

Thin: the statistics are ``analysis.noise_floor``; this prints its one line per dimension.
Registers the command on the shared Typer ``app`` when imported (``flows.cli.main``).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from flows.app import DEFAULT_STORE, app, emit_json, fail, open_store, out
from flows.app import split_values as _split


@app.command()
def compare(
    run_a: Annotated[str, typer.Argument(help="Run id")],
    run_b: Annotated[
        str | None, typer.Argument(help="A second run on the same scenarios (Y is taken from it)")
    ] = None,
    systems: Annotated[
        list[str] | None,
        typer.Option(
            "--systems",
            help="X,Y: the systems to compare (X - Y); with two runs X from RUN_A, Y from RUN_B",
        ),
    ] = None,
    conditions: Annotated[
        list[str] | None, typer.Option("--condition", help="Only these conditions (default all)")
    ] = None,
    store: Annotated[
        str, typer.Option("--store", help="Store root: directory or fsspec URL")
    ] = DEFAULT_STORE,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and sign-flip draws")] = 42,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON")] = False,
) -> None:
    """Paired difference, its CI and the minimum detectable difference, per dimension."""
    from analysis.data import load_run_data
    from analysis.noise_floor import NoiseFloorConfig, noise_floor_tables, records, resolve_arms
    from analysis.runner import json_safe

    runs = [run_a] if run_b is None or run_b == run_a else [run_a, run_b]
    s = open_store(store)
    try:
        values = load_run_data(s, runs).values
        arms = resolve_arms(values, runs, _split(systems))
        config = NoiseFloorConfig(seed=seed, conditions=_split(conditions))
        known = sorted(values["condition"].dropna().unique())
        unknown = [c for c in config.conditions or [] if c not in known]
        if unknown:
            raise ValueError(
                f"condition(s) {', '.join(unknown)} not in the run(s): {', '.join(known)}"
            )
        tables = noise_floor_tables(values, config, arms)
    except ValueError as exc:
        fail(str(exc).splitlines()[0])
    if not tables:
        fail(f"no scenario scored by both {' and '.join(s for _, s in arms)} in {', '.join(runs)}")
    rows = records(tables["noise_floor"])
    if as_json:
        emit_json(json_safe(rows))
        return
    _print(rows, config.alpha, config.power)


def _print(rows: list[dict[str, Any]], alpha: float, power: float) -> None:
    from analysis.noise_floor import describe

    heading = None
    for row in rows:
        group = (row["arm_a"], row["arm_b"], row["condition"])
        if group != heading:
            heading = group
            out.print(
                f"{row['arm_a']} - {row['arm_b']} ({row['condition']}): paired by scenario, "
                f"95% scenario-bootstrap CI, MDD at alpha {alpha} / power {power}",
                highlight=False,
                soft_wrap=True,
            )
        out.print(describe(row), highlight=False, soft_wrap=True)
