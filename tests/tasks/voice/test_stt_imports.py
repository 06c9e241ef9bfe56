"""The recogniser and its engine backends import a shared base, not each other (issue 17)."""

from __future__ import annotations

from tests.flows.test_import_graph import imports_of, project_modules, strongly_connected


def test_no_import_circle_through_the_stt_modules() -> None:
    modules = project_modules()
    graph = {name: imports_of(name, path, set(modules)) for name, path in modules.items()}
    stt = {name for name in modules if name.startswith("tasks.voice.stt")}
    assert {"tasks.voice.stt", "tasks.voice.stt_base", "tasks.voice.stt_engines"} <= stt
    assert "tasks.voice.stt" not in graph["tasks.voice.stt_engines"]
    assert [c for c in strongly_connected(graph) if c & stt] == []
