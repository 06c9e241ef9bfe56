"""Scorings of a run: the run's own metric rows and every re-scoring stored next to them.

A re-scoring (``evaflow score``) never overwrites: its rows carry their ``scoring`` name
and ``scored_at`` time. What a reader sees per (attempt, metric) is the latest scoring
that has that metric, sub-metrics following their parent; or, for one named scoring, the
latest as of it (that scoring and the ones before it). Rows of the run's own scoring have
``scored_at`` null (and, in stores older than re-scoring, ``scoring`` null too): they are
the earliest. One home for the rule: :func:`latest_metrics_sql` (the DuckDB views) and
:func:`latest_metrics` (pandas, for the aggregates) implement the same ordering.
"""

from __future__ import annotations

import pandas as pd

from tasks.tables import RUN_SCORING


def _quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def latest_metrics_sql(rows: str, scoring: str | None = None) -> str:
    """SQL over the metric ``rows`` (a SELECT) keeping each metric's latest scoring."""
    order = "coalesce(scored_at, '')"
    source = f"SELECT * FROM ({rows})"
    if scoring is not None:
        named = f"coalesce(scoring, {_quoted(RUN_SCORING)}) = {_quoted(scoring)}"
        source += f" WHERE {order} <= (SELECT max({order}) FROM ({rows}) WHERE {named})"
    return (
        "SELECT * EXCLUDE (_layer) FROM (SELECT *, dense_rank() OVER (PARTITION BY run_id, "
        f"attempt_id, split_part(metric, '.', 1) ORDER BY {order} DESC) AS _layer "
        f"FROM ({source})) WHERE _layer = 1"
    )


def latest_metrics(metrics: pd.DataFrame, scoring: str | None = None) -> pd.DataFrame:
    """The rows :func:`latest_metrics_sql` keeps, from a DataFrame of metric rows."""
    if metrics.empty:
        return metrics
    order = metrics["scored_at"].fillna("")
    keep = pd.Series(True, index=metrics.index)
    if scoring is not None:
        names = metrics["scoring"].fillna(RUN_SCORING)
        keep = order <= order[names == scoring].max()
    root = metrics["metric"].str.split(".", n=1).str[0]
    key = [metrics["run_id"], metrics["attempt_id"], root]
    latest = order.where(keep).groupby(key).transform("max")
    return metrics[keep & (order == latest)]


def scoring_names(metrics: pd.DataFrame) -> list[str]:
    """The run's scorings, earliest first (the run's own is ``run``)."""
    if metrics.empty:
        return []
    frame = pd.DataFrame(
        {
            "name": metrics["scoring"].fillna(RUN_SCORING),
            "at": metrics["scored_at"].fillna(""),
        }
    ).drop_duplicates()
    return list(frame.sort_values("at", kind="stable")["name"].drop_duplicates())
