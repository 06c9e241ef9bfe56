"""Terminal output: a progress bar over trials and the end-of-run summary table."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table


class TrialProgress:
    """Context manager fed by the flow's progress hook."""

    def __init__(self, console: Console, enabled: bool = True) -> None:
        self.enabled = enabled
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
        if self._task is None:
            self._task = self._progress.add_task("trials", total=total, last="")
        last = ""
        if result is not None:
            final = result.final.record
            last = f"{result.spec.scenario_key} {result.spec.condition}: {final.status}/{final.end_reason}"
        self._progress.update(self._task, completed=done, total=total, last=last)


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}"


def summary_table(summary: Any) -> Table:
    table = Table(title=f"EVA pass rates — run {summary.run_id}")
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
        table.add_row(
            str(row.get("system")),
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
