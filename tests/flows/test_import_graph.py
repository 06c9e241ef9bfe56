"""No import circle runs through the orchestration modules (issue 17).

The graph is read from the source (every ``import``, function-level ones included, since
a lazy import only hides a circle), over the project's own packages.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("flows", "tasks", "scenarios", "perturbations", "analysis")
# The modules this test guards: the orchestration layer and the trial pipeline's glue.
GUARDED_PREFIXES = ("flows.",)
GUARDED = {
    "tasks.steps",
    "tasks.trial",
    "tasks.trial_spec",
    "tasks.scoring",
    "tasks.simulation",
    "tasks.writer",
    "tasks.store",
    "tasks.tables",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    return {
        module_name(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")
    }


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Project modules ``name`` imports (``from a import b`` is ``a.b`` when that is one)."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [f"{base}.{alias.name}" for alias in node.names]
            targets = [t if t in known else base for t in targets]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's components with more than one module (each one is an import circle)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in graph.get(node, ()):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(graph) == [{"a", "b", "c"}]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_relative_and_from_imports_resolve_to_modules(tmp_path: Path) -> None:
    known = {"flows", "flows.app", "flows.cli", "tasks.trial_spec"}
    source = ROOT / "flows" / "cli.py"
    found = imports_of("flows.cli", source, known | {"tasks", "tasks.config"})
    assert "flows.app" in found and "flows.cli" not in found


def test_no_import_circle_runs_through_the_orchestration_modules() -> None:
    modules = project_modules()
    known = set(modules)
    graph = {name: imports_of(name, path, known) for name, path in modules.items()}
    circles = [
        sorted(c)
        for c in strongly_connected(graph)
        if any(m in GUARDED or m.startswith(GUARDED_PREFIXES) for m in c)
    ]
    assert circles == []
