"""The suite's schedule hint names modules that exist (tests/conftest.py LONG_MODULES)."""

from __future__ import annotations

from tests.conftest import LONG_MODULES, REPO_ROOT


def test_every_long_module_exists() -> None:
    assert len(set(LONG_MODULES)) == len(LONG_MODULES)
    missing = [m for m in LONG_MODULES if not (REPO_ROOT / m).is_file()]
    assert not missing, f"renamed or removed: update tests/conftest.py LONG_MODULES: {missing}"
