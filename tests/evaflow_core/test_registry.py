"""evaflow_core.registry: lookups, lazy discovery of a package's modules and of entry
points, and the errors a user sees."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaflow_core.registry import PluginLoadError, Registry, UnknownNameError

PARTS: Registry[str] = Registry("part", package="h3_demo_parts", entry_point_group="h3demo.parts")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def dist_info(root: Path, group: str, points: dict[str, str]) -> None:
    info = root / "h3_demo-0.1.dist-info"
    write(info / "METADATA", "Metadata-Version: 2.1\nName: h3-demo\nVersion: 0.1\n")
    lines = [f"[{group}]", *(f"{k} = {v}" for k, v in points.items()), ""]
    write(info / "entry_points.txt", "\n".join(lines))


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith(("h3_demo", "h3_other"))]:
        del sys.modules[name]


def test_unknown_names_list_the_valid_ones() -> None:
    colours: Registry[int] = Registry("colour")
    colours.add("red", 1)
    with pytest.raises(UnknownNameError, match=r"unknown colour 'bleu'; valid names: red"):
        colours.get("bleu")
    with pytest.raises(ValueError, match="colour 'red' is already registered"):
        colours.add("red", 2)


def test_discovery_imports_every_module_of_the_package_then_the_entry_points(
    on_path: Path,
) -> None:
    reg = "from tests.evaflow_core.test_registry import PARTS\n"
    write(on_path / "h3_demo_parts" / "__init__.py", "")
    write(on_path / "h3_demo_parts" / "alpha.py", reg + 'PARTS.add("alpha", "a")\n')
    write(on_path / "h3_demo_parts" / "_private.py", reg + 'PARTS.add("private", "p")\n')
    write(on_path / "h3_other" / "__init__.py", reg + 'PARTS.add("beta", "b")\n')
    dist_info(on_path, "h3demo.parts", {"beta": "h3_other"})
    assert "h3_demo_parts.alpha" not in sys.modules  # nothing before the first lookup
    assert PARTS.names() == ["alpha", "beta"]
    assert PARTS.get("beta") == "b"
    for name in ("alpha", "beta"):
        PARTS.remove(name)


def test_a_broken_entry_point_names_group_and_value(on_path: Path) -> None:
    broken: Registry[str] = Registry("widget", entry_point_group="h3demo.widgets")
    dist_info(on_path, "h3demo.widgets", {"bad": "h3_demo_missing.module"})
    with pytest.raises(PluginLoadError, match=r"'bad' \(entry point group 'h3demo.widgets'"):
        broken.names()
    with pytest.raises(PluginLoadError):  # not marked done: the next lookup fails the same
        broken.get("bad")


def test_tolerant_discovery_records_a_module_that_fails_to_import(on_path: Path) -> None:
    write(on_path / "h3_demo_tolerant" / "__init__.py", "")
    write(on_path / "h3_demo_tolerant" / "bad.py", "raise RuntimeError('exploded')\n")
    tolerant: Registry[str] = Registry(
        "gadget", package="h3_demo_tolerant", tolerate_import_errors=True
    )
    with pytest.warns(UserWarning, match="h3_demo_tolerant.bad failed to import"):
        assert tolerant.names() == []
    assert tolerant.import_errors == {"bad": "RuntimeError: exploded"}
