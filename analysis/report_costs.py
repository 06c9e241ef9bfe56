"""The report's cost section: per system, dollars per trial and per successful task (a trial
whose final valid attempt passes EVA-A) beside its EVA-A pass rate, and the split.

Figures come from the ``costs`` view (:mod:`tasks.costs`): every attempt counts, regenerated
ones included; NULL (shown "unknown") when a used model is unpriced or a paid component
reported no usage, with what is missing named in the last column. After the table, the
``cost-vs-eva`` analysis's figure (:mod:`analysis.cost_vs_eva`): dollars per trial against
EVA-A and EVA-X pass@1.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from analysis.base import AnalysisResult
from analysis.cost_vs_eva import COST_ANALYSIS
from analysis.data import RunData
from analysis.report_html import esc, figure_html, fmt, table
from tasks.costs.summary import SystemCost, dollars

HEADERS = [
    "system",
    "trials",
    "attempts",
    "EVA-A passes",
    "$ per trial",
    "$ per EVA-A success",
    "total $",
    "agent $",
    "simulator $",
    "judge $",
    "unpriced (cost unknown)",
]


def _money(value: float | None) -> str:
    return esc(dollars(value)) if value is not None else "<span class=muted>unknown</span>"


def _row(cost: SystemCost) -> list[str]:
    rate = cost.successes / cost.trials if cost.trials else None
    per_success = (
        _money(cost.per_success)
        if cost.per_success is not None or cost.total is None
        else "<span class=muted>no pass</span>"
    )
    return [
        esc(cost.system),
        esc(cost.trials),
        esc(cost.attempts),
        f"{cost.successes}/{cost.trials} ({fmt(rate, 2)})",
        _money(cost.per_trial),
        per_success,
        _money(cost.total),
        _money(cost.agent),
        _money(cost.simulator),
        _money(cost.judge),
        esc(cost.unpriced or "–"),
    ]


def cost_figure(results: Sequence[AnalysisResult], root: Path) -> str:
    """The cost-vs-EVA figure of the report's analyses, or a note on why there is none."""
    result = next((r for r in results if r.name == COST_ANALYSIS), None)
    if result is None:
        return ""
    if result.status != "ok":
        return f"<p class=note>Cost against EVA-A / EVA-X: {esc(result.message)}</p>"
    return "".join(figure_html(png, root, result.name) for png in result.figure_pngs())


def costs_section(data: RunData, run_id: str, figure: str = "") -> str:
    """The Costs section: per-system table, then ``figure`` (HTML, e.g. ``cost_figure``)."""
    try:
        costs = data.costs(run_id)
    except Exception as exc:  # noqa: BLE001 - the report is written either way
        return f"<h2 id=costs>Costs</h2><p class=note>Not available: {esc(exc)}</p>"
    if not costs:
        return ""
    note = (
        "<p class=muted>USD at the price table "
        f"<code>{esc(costs[0].price_table or 'unknown')}</code> (tasks/costs/prices.yaml, "
        "stored with the run); every attempt counted, regenerated ones included; offline "
        'components cost 0. Per row: <code>evaflow query "SELECT * FROM costs"</code>.</p>'
    )
    return "<h2 id=costs>Costs</h2>" + note + table(HEADERS, [_row(c) for c in costs]) + figure
