"""The analysis contract: a registry of analyses and the result each returns.

An analysis is one function registered on ``ANALYSES``::

    @ANALYSES.register("robustness")
    def analyze_robustness(data: RunData, out_dir: Path, params: dict) -> AnalysisResult: ...

It computes DataFrames from the stored tables (``RunData``), draws its figures into
``out_dir`` (PNG and SVG) and returns both; ``finish`` writes the tables as Parquet.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from analysis.data import RunData
from evaflow_core.registry import Registry

AnalysisStatus = Literal["ok", "skipped", "error"]


class AnalysisResult(BaseModel):
    """Tables, figures and headline numbers of one analysis (failures are data too)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    name: str = Field(description="Registered analysis name")
    status: AnalysisStatus = Field(default="ok", description="ok, skipped (no data) or error")
    message: str | None = Field(default=None, description="Why it was skipped or failed")
    tables: dict[str, pd.DataFrame] = Field(
        default_factory=dict, exclude=True, description="Result tables by name"
    )
    table_paths: dict[str, str] = Field(default_factory=dict, description="Parquet file per table")
    figures: list[str] = Field(default_factory=list, description="PNG and SVG files written")
    summary: dict[str, Any] = Field(default_factory=dict, description="Headline numbers")

    def figure_pngs(self) -> list[str]:
        return [f for f in self.figures if f.endswith(".png")]


AnalysisFn = Callable[[RunData, Path, dict[str, Any]], AnalysisResult]
ANALYSES = Registry[AnalysisFn]("analysis")

GROUPS: dict[str, tuple[str, ...]] = {
    "consistency": ("consistency", "pareto", "threshold-sensitivity", "faithfulness-decoupling"),
}
"""CLI selections that run several analyses (the issue groups these four as one study)."""


def skipped(name: str, message: str) -> AnalysisResult:
    return AnalysisResult(name=name, status="skipped", message=message)


def finish(result: AnalysisResult, out_dir: Path) -> AnalysisResult:
    """Write every table as ``<out_dir>/<table>.parquet`` and record the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for table_name, frame in result.tables.items():
        path = out_dir / f"{table_name}.parquet"
        frame.reset_index(drop=True).to_parquet(path, index=False)
        paths[table_name] = str(path)
    return result.model_copy(update={"table_paths": paths})


def present(data: RunData, metrics: list[str] | tuple[str, ...]) -> list[str]:
    """The requested metrics that have at least one value in the data, in the given order."""
    have = set(data.values.dropna(subset=["value"])["metric"].unique())
    return [m for m in metrics if m in have]
