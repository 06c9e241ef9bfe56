"""The re-scoring benchmark's check against the run's own values counts real differences
only (missing values on both sides are equal)."""

from __future__ import annotations

import math

import pandas as pd

from benchmarks.rescore import differing_rows


class _Store:
    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame

    def read(self, table: str, run_id: str) -> pd.DataFrame:
        assert (table, run_id) == ("metrics", "r")
        return self.frame


def _rows(scoring: str | None, scores: list[float], errors: list[str | None]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "scoring": [scoring] * len(scores),
            "attempt_id": [f"a{i}" for i in range(len(scores))],
            "metric": ["m"] * len(scores),
            "score": scores,
            "normalized_score": scores,
            "passed": [None] * len(scores),
            "skipped": [False] * len(scores),
            "error": errors,
        }
    )


def test_differing_rows_counts_changed_values_and_not_missing_ones() -> None:
    run = _rows(None, [1.0, math.nan, 0.5], [None, "boom", None])
    same = _rows("again", [1.0, math.nan, 0.5], [None, "boom", None])
    assert differing_rows(_Store(pd.concat([run, same])), "r", "again") == (0, 3)
    moved = _rows("moved", [1.0, 0.0, 0.5], [None, None, "new"])
    assert differing_rows(_Store(pd.concat([run, moved])), "r", "moved") == (2, 3)
