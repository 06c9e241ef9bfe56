"""Per-system cost figures of a run: dollars per trial and per successful task (EVA-A pass).

Every attempt counts, regenerated ones included (what the run really cost); a trial is a
``trial_key``; a success is a trial whose final attempt is valid and passes EVA-A. A
figure is None (NULL) when any attempt's cost is unknown, and ``unpriced`` says why.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from tasks.store import Store

EVA_A = "EVA-A_pass"

SYSTEM_COSTS_SQL = """
WITH c AS (SELECT * FROM costs WHERE run_id = $run),
passes AS (
    SELECT t.system, count(DISTINCT t.trial_key) AS n
    FROM trials t JOIN metrics m ON m.run_id = t.run_id AND m.attempt_id = t.attempt_id
    WHERE t.run_id = $run AND t.final AND t.valid AND m.parent IS NULL
        AND m.metric = $eva_a AND coalesce(m.normalized_score, m.score) >= 1
    GROUP BY t.system
),
unknown AS (
    SELECT system, string_agg(DISTINCT u.what, '; ' ORDER BY u.what) AS unpriced
    FROM (SELECT system, unnest(string_split(unpriced, '; ')) AS what FROM c) u
    GROUP BY system
)
SELECT c.system,
    count(*) AS attempts,
    count(DISTINCT c.trial_key) AS trials,
    coalesce(any_value(p.n), 0) AS successes,
    CASE WHEN bool_or(c.total_cost IS NULL) THEN NULL ELSE sum(c.total_cost) END AS total,
    CASE WHEN bool_or(c.agent_cost IS NULL) THEN NULL ELSE sum(c.agent_cost) END AS agent,
    CASE WHEN bool_or(c.simulator_cost IS NULL) THEN NULL ELSE sum(c.simulator_cost) END
        AS simulator,
    CASE WHEN bool_or(c.judge_cost IS NULL) THEN NULL ELSE sum(c.judge_cost) END AS judge,
    any_value(k.unpriced) AS unpriced,
    any_value(c.price_table) AS price_table
FROM c LEFT JOIN passes p ON p.system = c.system LEFT JOIN unknown k ON k.system = c.system
GROUP BY c.system ORDER BY c.system
"""


class SystemCost(BaseModel):
    """One system's cost over a run (USD; None = unknown, see ``unpriced``)."""

    system: str
    attempts: int = Field(description="Attempts, regenerated ones included")
    trials: int
    successes: int = Field(description="Trials whose final valid attempt passes EVA-A")
    total: float | None
    agent: float | None
    simulator: float | None
    judge: float | None
    per_trial: float | None
    per_success: float | None = Field(description="None when unknown or no success")
    unpriced: str | None = Field(description="What left a figure NULL (model unit, or why)")
    price_table: str | None = Field(description="Version of the price table used")


def system_costs(store: Store, run_id: str) -> list[SystemCost]:
    con = store.connect([run_id])
    try:
        frame = con.execute(SYSTEM_COSTS_SQL, {"run": run_id, "eva_a": EVA_A}).df()
    finally:
        con.close()
    out = []
    for row in frame.to_dict("records"):
        values = {str(k): _none(v) for k, v in row.items()}
        total, trials, successes = values["total"], values["trials"], values["successes"]
        out.append(
            SystemCost(
                **values,
                per_trial=total / trials if total is not None and trials else None,
                per_success=total / successes if total is not None and successes else None,
            )
        )
    return out


def dollars(value: float | None) -> str:
    """``$0.0123`` (4 decimals under a dollar, else 2); ``NULL`` for unknown."""
    if value is None:
        return "NULL"
    return f"${value:.4f}" if abs(value) < 1 else f"${value:,.2f}"


def cost_line(cost: SystemCost) -> str:
    """One line per system for the CLI summary."""
    per_success = (
        dollars(cost.per_success)
        if cost.per_success is not None or cost.total is None
        else "n/a (no EVA-A pass)"
    )
    line = (
        f"{cost.system}: {dollars(cost.per_trial)} per trial, {per_success} per EVA-A "
        f"success ({cost.successes}/{cost.trials}); total {dollars(cost.total)} over "
        f"{cost.attempts} attempts (agent {dollars(cost.agent)}, simulator "
        f"{dollars(cost.simulator)}, judge {dollars(cost.judge)})"
    )
    return f"{line}; unpriced: {cost.unpriced}" if cost.unpriced else line


def _none(value: Any) -> Any:
    try:
        return None if value != value else value  # NaN / NA -> None
    except (TypeError, ValueError):
        return None if value is None else value


def cost_lines(store: Store, run_id: str) -> list[str]:
    """The CLI summary's cost lines; one line saying why when they cannot be computed (the
    run's summary is printed either way)."""
    try:
        costs = system_costs(store, run_id)
    except Exception as exc:  # noqa: BLE001 - a cost problem must not hide the run's results
        return [f"costs: not available ({type(exc).__name__}: {exc})"]
    if not costs:
        return []
    table = costs[0].price_table or "unknown"
    return [f"costs (USD, price table {table}; every attempt counted):"] + [
        f"  {cost_line(c)}" for c in costs
    ]
