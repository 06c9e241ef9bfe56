"""Lookups from several threads while a registry discovers its package see every part
(seen in the real-time benchmark: concurrent calls' first lookup found no caller)."""

from __future__ import annotations

import sys
import textwrap
import threading
from pathlib import Path

import pytest

from evaflow_core.registry import Registry

SLOW_REGISTRY = Registry[object]("part", package="slow_parts")


def test_concurrent_first_lookups_wait_for_discovery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "slow_parts"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "one.py").write_text(
        textwrap.dedent(
            """
            import time
            from tests.evaflow_core.test_registry_threads import SLOW_REGISTRY
            time.sleep(0.3)  # a heavy import: the other threads arrive meanwhile
            SLOW_REGISTRY.add("one", object())
            SLOW_REGISTRY.get("one")  # a nested lookup from the discovering thread
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    results: list[object] = []

    def look() -> None:
        try:
            results.append(SLOW_REGISTRY.get("one"))
        except Exception as exc:  # noqa: BLE001 - collected, asserted below
            results.append(exc)

    threads = [threading.Thread(target=look) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    sys.modules.pop("slow_parts.one", None)
    sys.modules.pop("slow_parts", None)
    assert len(results) == 4 and not [r for r in results if isinstance(r, Exception)]
