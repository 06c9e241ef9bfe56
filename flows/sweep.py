"""The scheduled perturbation sweep: every system under every condition, then robustness."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prefect import flow
from pydantic import BaseModel, ConfigDict, Field

from flows.benchmark import RunSummary, run_benchmark
from tasks.config import BenchmarkConfig, load_config


class SweepConfig(BaseModel):
    """A nightly sweep: a base config plus the systems x conditions grid to run."""

    model_config = ConfigDict(extra="forbid")  # a misspelt key in prefect.yaml fails loudly

    base_config: Path | None = Field(default=None, description="YAML run config to start from")
    conditions: list[str] = Field(
        default_factory=lambda: ["clean", "accent", "noise", "accent+noise", "connection"],
        description="Perturbation conditions (clean is the baseline for robustness deltas)",
    )
    systems: list[str | dict[str, Any]] | None = Field(
        default=None,
        description="Systems to compare: catalogue names (`evaflow systems list`) or specs",
    )
    trials: int = Field(default=3, ge=1)
    run_prefix: str = Field(default="sweep", description="Run id prefix; the date is appended")
    store: str = Field(default="./evaflow-data")
    analyze: bool = Field(default=True, description="Run the robustness analysis afterwards")


def sweep_benchmark_config(sweep: SweepConfig) -> BenchmarkConfig:
    """The one benchmark run a sweep is (catalogue names in ``systems`` become specs)."""
    base = load_config(sweep.base_config) if sweep.base_config else BenchmarkConfig()
    update: dict[str, Any] = {
        "conditions": sweep.conditions,
        "trials": sweep.trials,
        "store": sweep.store,
        "run_id": f"{sweep.run_prefix}-{datetime.now(UTC):%Y%m%d}",
    }
    if sweep.systems:
        update["systems"] = sweep.systems
    return BenchmarkConfig.model_validate({**base.model_dump(), **update})


@flow(name="evaflow-perturbation-sweep", log_prints=False)
def run_sweep(sweep: SweepConfig | None = None) -> RunSummary:
    """Run the sweep as one benchmark run (resumable by its dated run id)."""
    sweep = sweep or SweepConfig()
    config = sweep_benchmark_config(sweep)
    summary = run_benchmark(config)
    if sweep.analyze:
        _analyze(config)
    return summary


def _analyze(config: BenchmarkConfig) -> None:
    try:
        from flows.analysis_flow import run_analysis
    except ImportError:
        return
    run_analysis(store=config.store, runs=[config.run_id or ""], which="robustness")
