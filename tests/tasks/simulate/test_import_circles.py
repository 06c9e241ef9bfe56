"""No import circle runs through the clocks or the eSpeak helper (issue 17), lazy imports
included (the graph and circle finder are those of ``tests/flows/test_import_graph.py``)."""

from __future__ import annotations

from tests.flows.test_import_graph import imports_of, project_modules, strongly_connected

GUARDED = {
    "tasks.simulate.clocks.audio_mode",
    "tasks.simulate.clocks.realtime",
    "tasks.simulate.clocks.call_result",
    "tasks.voice.espeak",
    "tasks.voice.espeak_zygote",
    "tasks.voice.espeak_frames",
}


def test_no_import_circle_through_the_clocks_or_espeak() -> None:
    modules = project_modules()
    known = set(modules)
    graph = {name: imports_of(name, path, known) for name, path in modules.items()}
    assert "tasks.simulate.clocks.call_result" in graph["tasks.simulate.clocks.realtime"]
    circles = [sorted(c) for c in strongly_connected(graph) if c & GUARDED]
    assert circles == []
