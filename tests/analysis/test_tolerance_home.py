"""The pass tolerance has one home (``tasks.metrics.base.TOLERANCE``, spec 5.1): the
CI-vs-k study and the store-scale benchmark's SQL both read it, none spells its own."""

from __future__ import annotations

import pandas as pd
import pytest

import analysis.ci_vs_k as ci_vs_k
from benchmarks.store_scale import PASS_AT_K_SQL
from tasks.metrics.base import TOLERANCE


def test_trial_matrix_passes_within_the_shared_tolerance(monkeypatch: pytest.MonkeyPatch) -> None:
    values = pd.DataFrame(
        {"scenario_id": ["a", "a", "b", "b"], "trial": [0, 1, 0, 1], "value": [1.0, 0.95, 0.0, 1.0]}
    )
    assert ci_vs_k.trial_matrix(values).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    monkeypatch.setattr(ci_vs_k, "TOLERANCE", 0.1)  # the module reads the shared name
    assert ci_vs_k.trial_matrix(values).tolist() == [[1.0, 1.0], [0.0, 1.0]]


def test_store_scale_sql_uses_the_shared_tolerance() -> None:
    assert f"1.0 - {TOLERANCE!r}" in PASS_AT_K_SQL
    assert "1e-9" not in PASS_AT_K_SQL
