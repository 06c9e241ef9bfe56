"""The report's front page (``index.html``) and its list of trials (``trials.html``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.base import AnalysisResult
from analysis.cost_vs_eva import COST_ANALYSIS
from analysis.data import KEY_ENTITY_METRIC, RunData
from analysis.report_costs import cost_figure, costs_section
from analysis.report_html import (
    esc,
    figure_html,
    fmt,
    frame_table,
    num_cell,
    page,
    pill,
    pretty_json,
    records,
    table,
    with_ci,
)
from tasks.store import Store
from tasks.summary import system_architectures

HEADLINE = ("EVA-A_pass", "EVA-X_pass", "EVA-overall_pass")
TRIAL_METRICS = ("EVA-A_pass", "EVA-X_pass", "task_completion", "turn_taking")
WORST_N = 15


def _run_row(store: Store, run_id: str) -> dict[str, Any]:
    runs = store.read("runs", run_id)
    return {str(k): v for k, v in runs.iloc[-1].to_dict().items()} if len(runs) else {}


REHEARSAL_NOTE = (
    "REHEARSAL: every provider of this run was a local stand-in (evaflow run --rehearse) "
    "answering with the reference policy, with placeholder keys. These results show the "
    "systems' configurations run end to end; they do not measure the providers."
)


def is_rehearsal(run: Mapping[str, Any]) -> bool:
    """The run was stored as a rehearsal (older runs have no value: not one)."""
    value = run.get("rehearsal")
    return isinstance(value, bool | np.bool_) and bool(value)


def rehearsal_banner(run: Mapping[str, Any]) -> str:
    return f"<p class=note><strong>{esc(REHEARSAL_NOTE)}</strong></p>" if is_rehearsal(run) else ""


SHARED_NOTE = (
    "SCENARIO SHARED: the agent of {systems} was served the whole resolved scenario "
    "(GET /scenario, share_scenario: true), expected database included. Its scores are not "
    "those of an agent under test."
)


def shared_systems(trials: pd.DataFrame) -> list[str]:
    """Systems with an attempt whose agent could read the scenario (older runs: none)."""
    if not len(trials) or "scenario_shared" not in trials:
        return []
    flagged = trials["scenario_shared"].fillna(False).astype(bool)
    return sorted({str(s) for s in trials.loc[flagged, "system"]})


def shared_banner(trials: pd.DataFrame) -> str:
    systems = shared_systems(trials)
    if not systems:
        return ""
    return (
        f"<p class=note><strong>{esc(SHARED_NOTE.format(systems=', '.join(systems)))}</strong></p>"
    )


def _labelled(systems: Iterable[str], architectures: Mapping[str, str | None]) -> str:
    return ", ".join(f"{s} ({architectures.get(s) or 'architecture unknown'})" for s in systems)


def summary_section(
    run: dict[str, Any], trials: pd.DataFrame, architectures: Mapping[str, str | None] | None = None
) -> str:
    final = trials[trials["final"]] if len(trials) else trials
    systems = sorted(trials["system"].unique()) if len(trials) else []
    rows = [
        ["run id", esc(run.get("run_id"))],
        ["created", esc(run.get("created_at"))],
        ["evaflow version", esc(run.get("evaflow_version"))],
        ["systems", esc(_labelled(systems, architectures or {}))],
        ["conditions", esc(", ".join(sorted(trials["condition"].unique())) if len(trials) else "")],
        ["domains", esc(", ".join(sorted(trials["domain"].unique())) if len(trials) else "")],
        ["trials", fmt(int(trials["trial_key"].nunique()) if len(trials) else 0)],
        ["attempts", fmt(len(trials))],
        ["trials kept (final attempt valid)", fmt(int(final["valid"].sum()) if len(final) else 0)],
        ["scenario shared with the agent", esc(", ".join(shared_systems(trials)) or "no")],
    ]
    statuses = (
        trials.groupby(["status", "end_reason"], dropna=False).size().reset_index(name="attempts")
        if len(trials)
        else pd.DataFrame()
    )
    config = ""
    if run.get("config_json"):
        config = f"<details><summary>run configuration</summary>{pretty_json(run['config_json'])}"
        config += f"{pretty_json(run.get('specs_json'))}</details>"
    return (
        rehearsal_banner(run)
        + shared_banner(trials)
        + "<h2 id=summary>Run summary</h2>"
        + table(None, rows)
        + config
        + (
            "<h3>Attempts by status and end reason</h3>" + frame_table(statuses)
            if len(statuses)
            else ""
        )
    )


def headline_section(
    aggregates: pd.DataFrame, architectures: Mapping[str, str | None] | None = None
) -> str:
    agg = aggregates[(aggregates["domain"] == "all") & aggregates["dimension"].isin(HEADLINE)]
    if agg.empty:
        return "<h2 id=headline>Headline</h2><p class=note>No aggregates stored for this run.</p>"
    headers = ["system", "architecture", "condition", "n", "k"]
    for dim in HEADLINE:
        headers += [f"{dim} pass@1 [95% CI]", f"{dim} pass@k", f"{dim} pass^k [95% CI]"]
    rows = []
    for (system, condition), group in agg.groupby(["system", "condition"], sort=True):
        by_dim = group.set_index("dimension")
        first = by_dim.iloc[0]
        cells = [
            esc(system),
            esc((architectures or {}).get(str(system)) or "–"),
            esc(condition),
            num_cell(first.get("n"), 0),
            num_cell(first.get("k"), 0),
        ]
        for dim in HEADLINE:
            if dim not in by_dim.index:
                cells += ["–"] * 3
                continue
            r = by_dim.loc[dim]
            cells += [
                with_ci(r["pass_at_1"], r["pass_at_1_ci_lower"], r["pass_at_1_ci_upper"]),
                fmt(r["pass_at_k"]),
                with_ci(r["pass_pow_k"], r["pass_pow_k_ci_lower"], r["pass_pow_k_ci_upper"]),
            ]
        rows.append(cells)
    note = (
        "<p class=muted>pass@1 = mean per-scenario pass rate; pass@k = chance at least one "
        "of k trials passes; pass^k = chance all k pass. CIs: scenario bootstrap.</p>"
    )
    return "<h2 id=headline>Headline (all domains)</h2>" + note + table(headers, rows)


def domain_section(aggregates: pd.DataFrame) -> str:
    agg = aggregates[(aggregates["domain"] != "all") & aggregates["dimension"].isin(HEADLINE)]
    if agg.empty:
        return ""
    wide = agg.pivot_table(
        index=["system", "condition", "domain"], columns="dimension", values="pass_at_1"
    ).reset_index()
    wide.columns.name = None
    return "<h2 id=domains>Per domain (pass@1)</h2>" + frame_table(wide, colour=HEADLINE)


def condition_section(data: RunData, results: list[AnalysisResult]) -> str:
    values = data.values.dropna(subset=["value"])
    if values.empty:
        return ""
    means = values.pivot_table(
        index=["system", "condition"], columns="metric", values="value", aggfunc="mean"
    ).reset_index()
    means.columns.name = None
    out = "<h2 id=conditions>Per condition (mean over kept attempts)</h2>" + frame_table(
        means, colour=[c for c in means.columns if c not in ("system", "condition")]
    )
    robust = next((r for r in results if r.name == "robustness" and r.status == "ok"), None)
    if robust is not None:
        table = robust.tables["robustness_pooled"]
        # Which axis a condition perturbs (acoustic / behavior / both); results stored
        # before robustness emitted it have no such column.
        axis = ["axis"] if "axis" in table.columns else []
        pooled = table[
            [
                "system",
                "condition",
                *axis,
                "metric",
                "n",
                "observed_mean_delta",
                "ci_lower",
                "ci_upper",
                "raw_p",
                "corrected_p",
                "stars",
            ]
        ]
        out += "<h3>Robustness: delta vs clean (pooled)</h3>" + frame_table(pooled)
    keyent = next((r for r in results if r.name == "key-entities" and r.status == "ok"), None)
    if keyent is not None:
        out += "<h3>Key-entity accuracy vs task completion</h3>" + frame_table(
            keyent.tables["key_entity_correlation"]
        )
    return out


def figures_section(results: list[AnalysisResult], root: Path) -> str:
    parts = ["<h2 id=figures>Figures</h2>"]
    # The cost figure is drawn in the Costs section, beside its table.
    for result in (r for r in results if r.name != COST_ANALYSIS):
        if result.status != "ok":
            parts.append(
                f"<p>{pill(result.name, 'info')} <span class=note>"
                f"{esc(result.status)}: {esc(result.message)}</span></p>"
            )
            continue
        parts += [figure_html(png, root, result.name) for png in result.figure_pngs()]
    return "".join(parts)


def worst_section(data: RunData, trials: pd.DataFrame, hrefs: dict[str, str]) -> str:
    keep = data.values[data.values["metric"].isin(["EVA-A_pass", "EVA-X_pass"])]
    if keep.empty:
        return ""
    unit = ["system", "domain", "condition", "scenario_id"]
    score = keep.groupby(unit)["value"].mean().rename("pass_rate")
    final = trials[trials["final"]]
    invalid = final.assign(bad=~final["valid"].astype(bool)).groupby(unit)["bad"].sum()
    first = final.sort_values("trial").groupby(unit)["attempt_id"].first()
    worst = pd.concat([score, invalid.rename("invalid_trials"), first], axis=1).reset_index()
    worst = worst.sort_values(
        ["pass_rate", "invalid_trials"], ascending=[True, False], na_position="first"
    ).head(WORST_N)
    rows = [
        [
            esc(r["system"]),
            esc(r["domain"]),
            esc(r["scenario_id"]),
            esc(r["condition"]),
            num_cell(r["pass_rate"], 3, colour=True),
            num_cell(r["invalid_trials"], 0),
            f'<a href="{esc(hrefs.get(r["attempt_id"], "#"))}">first trial</a>',
        ]
        for r in worst.to_dict("records")
    ]
    return (
        "<h2 id=worst>Worst scenarios</h2><p class=muted>Lowest mean of EVA-A and EVA-X "
        "pass over kept trials.</p>"
        + table(
            ["system", "domain", "scenario", "condition", "mean pass", "invalid trials", ""], rows
        )
    )


def _aggregates(store: Store, run_id: str, data: RunData) -> pd.DataFrame:
    stored = store.read("aggregates", run_id)
    if len(stored) or data.values.empty:
        return stored
    from tasks.aggregate import aggregate

    rows = data.values.rename(columns={"metric": "dimension"})
    rows = rows[rows["dimension"].isin(HEADLINE)]
    if rows.empty:
        return stored
    both = pd.concat([rows, rows.assign(domain="all")], ignore_index=True)
    table_ = aggregate(
        both[["system", "domain", "condition", "scenario_id", "trial", "dimension", "value"]],
        by=["system", "domain", "condition"],
    )
    return table_.rename(columns={"n_scenarios": "n"})


def index_page(
    store: Store,
    run_id: str,
    trials: pd.DataFrame,
    data: RunData,
    results: list[AnalysisResult],
    hrefs: dict[str, str],
    root: Path,
) -> str:
    """The report's front page; ``root`` is the report directory (figure links are relative)."""
    run = _run_row(store, run_id)
    aggregates = _aggregates(store, run_id, data)
    architectures = system_architectures(store, run_id)
    toc = (
        '<nav class=toc><a href="#summary">summary</a><a href="#headline">headline</a>'
        '<a href="#costs">costs</a>'
        '<a href="#figures">figures</a><a href="#domains">domains</a>'
        '<a href="#conditions">conditions</a><a href="#worst">worst scenarios</a>'
        '<a href="trials.html">all trials</a></nav>'
    )
    body = "".join(
        [
            toc,
            summary_section(run, trials, architectures),
            headline_section(aggregates, architectures),
            costs_section(data, run_id, cost_figure(results, root)),
            figures_section(results, root),
            domain_section(aggregates),
            condition_section(data, results),
            worst_section(data, trials, hrefs),
            '<h2>Trials</h2><p><a href="trials.html">Every trial and attempt, with drill-down '
            "pages →</a></p>",
        ]
    )
    return page(
        ("REHEARSAL · " if is_rehearsal(run) else "") + f"evaflow report · {run_id}",
        body,
        "report.css",
        f"{esc(store.root)} · {len(trials)} attempts",
    )


TRIAL_HEADERS = ["system", "domain", "scenario", "condition", "trial", "attempt", "", "verdict",
                 "status", "end reason", *TRIAL_METRICS, "key-entity acc.", ""]  # fmt: skip


def _trial_row(t: dict[str, Any], values: pd.DataFrame, key: pd.Series, href: str) -> list[str]:
    aid = t["attempt_id"]
    metric_cells = [
        num_cell(values.at[aid, m] if aid in values.index and m in values.columns else None, 2,
                 colour=True)
        for m in TRIAL_METRICS
    ]  # fmt: skip
    return [
        esc(t["system"]), esc(t["domain"]), esc(t["scenario_id"]), esc(t["condition"]),
        num_cell(t["trial"], 0), num_cell(t["attempt"], 0),
        pill("final", "info") if t["final"] else "",
        pill("valid", "ok") if t["valid"] else pill("invalid", "fail"),
        esc(t["status"]), esc(t["end_reason"]), *metric_cells,
        num_cell(key.get(aid), 2, colour=True), f'<a href="{esc(href)}">open</a>',
    ]  # fmt: skip


def trials_page(
    run_id: str, trials: pd.DataFrame, metrics: pd.DataFrame, data: RunData, hrefs: dict[str, str]
) -> str:
    """Every attempt of the run with its verdict, headline metrics and a link to its page."""
    top = metrics[metrics["parent"].isna() & metrics["metric"].isin(TRIAL_METRICS)]
    values = top.assign(v=top["normalized_score"].fillna(top["score"])).pivot_table(
        index="attempt_id", columns="metric", values="v", aggfunc="first"
    )
    key = data.values[data.values["metric"] == KEY_ENTITY_METRIC].set_index("attempt_id")["value"]
    order = ["system", "domain", "scenario_id", "condition", "trial", "attempt"]
    rows = [_trial_row(t, values, key, hrefs[t["attempt_id"]])
            for t in records(trials.sort_values(order))]  # fmt: skip
    body = '<p><a href="index.html">← back to the report</a></p>' + table(TRIAL_HEADERS, rows)
    return page(
        f"evaflow report · {run_id} · trials", body, "report.css", f"{len(trials)} attempts"
    )
