"""Prefect-native operations of a benchmark run: the judge providers' concurrency limits,
set at flow start, and the artifacts the flow run's page shows at its end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tasks.config import DEFAULT_JUDGE_CONCURRENCY, BenchmarkConfig
from tasks.stage_providers import judge_limit_name, judge_provider

HEADLINE_KEY = "evaflow-headline"
REPORT_KEY = "evaflow-report"
HEADLINE_DOMAIN = "all"  # the pooled rows of tasks.summary.summarize_run
HEADLINE_DIMENSIONS = {"EVA-A_pass": "EVA-A pass@1", "EVA-X_pass": "EVA-X pass@1"}


def ensure_judge_limits(config: BenchmarkConfig) -> dict[str, int]:
    """The Prefect global concurrency limit of the run's judge provider, created when the
    server has none (with ``judge_concurrency``, else the default) and set to
    ``judge_concurrency`` when the run states it; returns {limit name: slots}. Offline
    judges call nobody: no limit, no API call."""
    provider = judge_provider(config.judge)
    if provider is None:
        return {}
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate
    from prefect.exceptions import ObjectNotFound

    name = judge_limit_name(provider)
    with get_client(sync_client=True) as client:
        if config.judge_concurrency is not None:
            client.upsert_global_concurrency_limit_by_name(name, config.judge_concurrency)
            return {name: config.judge_concurrency}
        try:
            return {name: client.read_global_concurrency_limit_by_name(name).limit}
        except ObjectNotFound:
            client.create_global_concurrency_limit(
                GlobalConcurrencyLimitCreate(name=name, limit=DEFAULT_JUDGE_CONCURRENCY)
            )
            return {name: DEFAULT_JUDGE_CONCURRENCY}


def headline_rows(aggregates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per system and condition, the pooled EVA-A / EVA-X pass@1 of the run's aggregates
    (the rows :func:`tasks.summary.summarize_run` stored), in their order."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for agg in aggregates:
        column = HEADLINE_DIMENSIONS.get(str(agg.get("dimension")))
        if column is None or agg.get("domain") != HEADLINE_DOMAIN:
            continue
        key = (str(agg["system"]), str(agg["condition"]))
        row = rows.setdefault(key, {"system": key[0], "condition": key[1], "n": agg.get("n")})
        row[column] = agg.get("pass_at_1")
    return list(rows.values())


def publish_artifacts(run_id: str, aggregates: list[dict[str, Any]], report: str | None) -> None:
    """The headline table (or why there is none) and the report's location, attached to
    the running flow run."""
    from prefect.artifacts import (
        create_link_artifact,
        create_markdown_artifact,
        create_table_artifact,
    )

    rows = headline_rows(aggregates)
    if rows:
        create_table_artifact(
            table=rows,
            key=HEADLINE_KEY,
            description=f"Run {run_id}: EVA-A / EVA-X pass@1 per system and condition "
            f"(domain '{HEADLINE_DOMAIN}')",
        )
    else:
        create_markdown_artifact(
            markdown=f"Run {run_id} has no judged attempts yet (`evaflow score {run_id}`).",
            key=HEADLINE_KEY,
        )
    if report:
        where = report if "://" in report else Path(report).resolve().as_uri()
        create_link_artifact(
            link=where, link_text=f"report of {run_id}", key=REPORT_KEY, description=report
        )
