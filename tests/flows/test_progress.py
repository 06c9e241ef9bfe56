"""What a user sees in a log: one line per finished trial when stdout is not a terminal,
and a summary table whose names are never cut."""

from __future__ import annotations

import io
import re
from pathlib import Path
from types import SimpleNamespace

from rich.console import Console

from flows.progress import TrialProgress, print_whole, summary_table, trial_line
from tests.flows.test_cli import evaflow

LONG = "reference-cascade-with-telephone-band-pronunciations"


def fake_result(status: str = "ok", end: str = "goodbye") -> SimpleNamespace:
    attempt = SimpleNamespace(record=SimpleNamespace(status=status, end_reason=end, wall_s=2.5))
    return SimpleNamespace(
        spec=SimpleNamespace(
            trial_key="ref@1/airline/air-001/clean/t0",
            scenario_key="airline/air-001",
            condition="clean",
        ),
        attempts=[attempt, attempt],
        final=attempt,
    )


def test_each_finished_trial_is_one_flushed_line() -> None:
    lines = io.StringIO()
    progress = TrialProgress(Console(file=io.StringIO()), enabled=True, lines=lines)
    with progress:
        progress.update(0, 2, None)  # the start: no line
        progress.update(1, 2, fake_result())
        progress.update(2, 2, None)  # a worker that raised
    printed = lines.getvalue().splitlines()
    assert len(printed) == 2
    assert re.fullmatch(
        r"\[ +\d+\.\d s\] trial 1/2 ref@1/airline/air-001/clean/t0: ok/goodbye "
        r"\(2 attempts, 5\.0 s\)",
        printed[0],
    )
    assert "trial 2/2: failed in its worker" in printed[1]
    assert trial_line(3, 3, fake_result("agent_error", "agent_timeout"), 1.0).endswith(
        "agent_error/agent_timeout (2 attempts, 5.0 s)"
    )


def test_no_lines_when_progress_is_off() -> None:
    lines = io.StringIO()
    progress = TrialProgress(Console(file=io.StringIO()), enabled=False, lines=lines)
    progress.update(1, 1, fake_result())
    assert lines.getvalue() == ""


def test_the_summary_table_keeps_names_whole_at_80_columns() -> None:
    row = {
        "system": LONG,
        "architecture": "cascade",
        "domain": "medical_hr",
        "condition": "accent+noise",
        "dimension": "EVA-A_pass",
        "pass_at_1": 0.5,
        "pass_at_k": 1.0,
        "pass_pow_k": 0.25,
        "k": 3,
        "n": 12,
    }
    summary = SimpleNamespace(run_id="r", aggregates=[row])
    console = Console(file=io.StringIO(), width=80)
    print_whole(console, summary_table(summary))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert LONG in text and "medical_hr" in text and "accent+noise" in text
    assert "…" not in text
    assert console.width == 80  # restored


def test_a_run_with_stdout_to_a_file_logs_every_trial(tmp_path: Path) -> None:
    done = evaflow(
        *("run", "--quick", "--mode", "text", "--no-report", "--runner", "threads"),
        *("--domains", "airline", "--store", str(tmp_path / "d"), "--run-id", "logged"),
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if "] trial " in line]
    assert len(lines) == 2, done.stdout  # --quick: 1 record x clean, noise
    pattern = r"\[ *\d+\.\d s\] trial [12]/2 (\S+): \w+/\w+ \(\d attempts?, [\d.]+ s\)"
    keys = [re.fullmatch(pattern, line) for line in lines]
    assert all(keys), lines
    assert {k.group(1).split("/")[3] for k in keys if k} == {"clean", "noise"}
