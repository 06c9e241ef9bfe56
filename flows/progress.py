"""Terminal output: a progress bar over trials and the end-of-run summary table."""

from __future__ import annotations

import sys
import time
from typing import IO, Any

from rich.console import Console
from rich.measure import Measurement
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table


def log_stream() -> IO[str] | None:
    """stdout when it is not a terminal (``evaflow run > run.log``): there the bar is
    invisible, so each finished trial is written as a line instead."""
    return None if sys.stdout.isatty() else sys.stdout


def trial_line(done: int, total: int, result: Any, elapsed_s: float) -> str:
    """``[  12.3 s] trial 3/6 SYSTEM/DOMAIN/ID/COND/tN: status/end_reason (2 attempts, 41.2 s)``."""
    head = f"[{elapsed_s:7.1f} s] trial {done}/{total}"
    if result is None:
        return f"{head}: failed in its worker (see the error at the end of the run)"
    final = result.final.record
    wall = sum(a.record.wall_s for a in result.attempts)
    attempts = len(result.attempts)
    return (
        f"{head} {result.spec.trial_key}: {final.status}/{final.end_reason} "
        f"({attempts} attempt{'s' if attempts != 1 else ''}, {wall:.1f} s)"
    )


class TrialProgress:
    """Context manager fed by the flow's progress hook: a bar on the console and, with
    ``lines`` (see :func:`log_stream`), one flushed line per finished trial."""

    def __init__(
        self, console: Console, enabled: bool = True, lines: IO[str] | None = None
    ) -> None:
        self.enabled = enabled
        self.lines = lines if enabled else None
        self._started = time.perf_counter()
        self._progress = Progress(
            TextColumn("[bold]trials"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[last]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            disable=not enabled,
        )
        self._task: Any = None

    def __enter__(self) -> TrialProgress:
        self._progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._progress.__exit__(*exc)

    def update(self, done: int, total: int, result: Any) -> None:
        if self.lines is not None and done > 0:
            elapsed = time.perf_counter() - self._started
            self.lines.write(trial_line(done, total, result, elapsed) + "\n")
            self.lines.flush()
        if self._task is None:
            self._task = self._progress.add_task("trials", total=total, last="")
        last = ""
        if result is not None:
            final = result.final.record
            last = f"{result.spec.scenario_key} {result.spec.condition}: {final.status}/{final.end_reason}"
        self._progress.update(self._task, completed=done, total=total, last=last)


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}"


def print_whole(console: Console, table: Table) -> None:
    """Print ``table`` at the width it needs, so names are never cut ("referen…"); on a
    narrow terminal its lines wrap instead."""
    needed = Measurement.get(console, console.options.update_width(10_000), table).maximum
    width = console.width
    console.width = max(width, needed)
    try:
        console.print(table)
    finally:
        console.width = width


SHARED_MARK = " [scenario shared]"


def summary_table(summary: Any) -> Table:
    shared = set(getattr(summary, "scenario_shared", None) or [])
    table = Table(title=f"EVA pass rates — run {summary.run_id}")
    if shared:
        table.caption = (
            f"{SHARED_MARK.strip()}: the agent was served the whole scenario, expected "
            "database included (share_scenario); not an agent under test"
        )
    for col in (
        "system",
        "architecture",
        "domain",
        "condition",
        "dimension",
        "pass@1",
        "pass@k",
        "pass^k",
        "k",
        "n",
    ):
        table.add_column(
            col, justify="right" if col in ("pass@1", "pass@k", "pass^k", "k", "n") else "left"
        )
    for row in summary.aggregates:
        if row.get("dimension") not in ("EVA-A_pass", "EVA-X_pass"):
            continue
        system = str(row.get("system"))
        table.add_row(
            system + (SHARED_MARK if system in shared else ""),
            str(row.get("architecture") or "-"),
            str(row.get("domain")),
            str(row.get("condition")),
            str(row.get("dimension")).replace("_pass", ""),
            _fmt(row.get("pass_at_1")),
            _fmt(row.get("pass_at_k")),
            _fmt(row.get("pass_pow_k")),
            str(row.get("k")),
            str(row.get("n")),
        )
    return table
