"""The real-time benchmark spreads its calls over at most one loop per core."""

from __future__ import annotations

import pytest

import benchmarks.simulate as bench


def test_calls_are_spread_over_loops_of_bounded_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench.os, "cpu_count", lambda: 2)
    assert [bench.loops_for(n) for n in (1, 8, 32, 33, 64, 200)] == [1, 1, 1, 2, 2, 2]
    monkeypatch.setattr(bench.os, "cpu_count", lambda: 8)
    assert bench.loops_for(64) == 64 // bench.CALLS_PER_LOOP
