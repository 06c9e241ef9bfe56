"""No import circle through the judge framework (issue 17): ``tasks.judges.base`` knows no
back-end; ``JUDGES`` and ``OFFLINE_RULES`` find them by discovery."""

from __future__ import annotations

from tests.flows.test_import_graph import imports_of, project_modules, strongly_connected


def test_no_import_circle_runs_through_the_judges() -> None:
    modules = project_modules()
    known = set(modules)
    graph = {name: imports_of(name, path, known) for name, path in modules.items()}
    circles = [sorted(c) for c in strongly_connected(graph) if any("judges" in m for m in c)]
    assert circles == []
    assert not {m for m in graph["tasks.judges.base"] if m.startswith("tasks.judges")}
