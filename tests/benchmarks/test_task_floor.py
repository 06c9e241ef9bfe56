"""Where the orchestration floor's CPU goes: the run's processes by role."""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.task_floor import _role, cpu_spent


@dataclass
class _Process:
    pid: int
    command: list[str]
    parent: int = 10

    def ppid(self) -> int:
        return self.parent

    def cmdline(self) -> list[str]:
        return self.command


def test_each_process_of_a_run_is_named_by_its_part() -> None:
    python = "/venv/bin/python"
    assert _role(_Process(10, [python, "-m", "flows", "run"]), flow_pid=10) == "flow"
    server = [python, "-m", "uvicorn", "--factory", "prefect.server.api.server:create_app"]
    assert _role(_Process(11, server), flow_pid=10) == "server"
    forkserver = [python, "-c", "from multiprocessing.forkserver import main; main(3, 4)"]
    assert _role(_Process(12, forkserver), flow_pid=10) == "other"
    # Forked workers keep their forkserver's command line; they are its children.
    assert _role(_Process(13, forkserver, parent=12), flow_pid=10) == "workers"
    assert _role(_Process(14, [python, "-m", "flows", "run"]), flow_pid=10) == "workers"


def test_cpu_spent_counts_processes_started_in_between_from_zero() -> None:
    before = {1: ("flow", 2.0), 2: ("server", 5.0)}
    after = {1: ("flow", 2.5), 2: ("server", 6.0), 3: ("workers", 1.25), 4: ("workers", 0.5)}
    assert cpu_spent(before, after) == {"flow": 0.5, "server": 1.0, "workers": 1.75}
