"""The static HTML report of a run: opens from disk, no server, no JavaScript.

Layout under the output directory::

    index.html      summary, config, headline table with CIs, figures, breakdowns, worst
    trials.html     every trial with its verdict and headline metrics
    trials/*.html   one drill-down page per attempt; trials/audio/*.wav its audio
    analysis/       the analyses' figures (PNG + SVG) and tables (Parquet)
    report.css
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from analysis.base import ANALYSES
from analysis.data import RunData, load_run_data
from analysis.report_attempts import PAGES_DIR, attempt_hrefs
from analysis.report_html import CSS
from analysis.report_index import index_page, trials_page
from analysis.report_share import SharedReportWork
from analysis.runner import write_summary
from tasks.store import Store


def default_report_dir(store: Store, run_id: str) -> Path:
    """``<store>/reports/<run_id>`` for a local store, else ``./evaflow-reports/<run_id>``."""
    return (
        (Path(store.root) / "reports" / run_id)
        if store.local
        else (Path("evaflow-reports") / run_id)
    )


def write_report(
    store: Store,
    run_id: str,
    out_dir: Path | None = None,
    *,
    include_audio: bool = True,
    analyses: bool = True,
    parallel: bool = True,
    begun: SharedReportWork | None = None,
) -> Path:
    """Write the report of ``run_id`` and return the path of its ``index.html``; ``begun``
    is its pages' and analyses' work if already begun (:func:`begin_report`)."""
    if run_id not in store.run_ids():
        raise ValueError(
            f"no run {run_id!r} in store {store.root}; runs: "
            f"{', '.join(store.run_ids()) or '(none)'}"
        )
    out = Path(out_dir) if out_dir else default_report_dir(store, run_id)
    (out / PAGES_DIR).mkdir(parents=True, exist_ok=True)
    (out / "report.css").write_text(CSS, encoding="utf-8")
    trials = store.read("trials", run_id)
    # The attempt pages and audio, then a share of the analyses, are written by a second
    # interpreter while this one runs analyses (analysis.report_share).
    names = _analyses_for(len(trials), analyses)
    if begun is not None and begun.out != out / "analysis":
        raise ValueError(f"the report's work was begun for {begun.out.parent}, not {out}")
    work = begun or _shared_work(store, run_id, out, len(trials), names, include_audio, parallel)
    data = load_run_data(store, [run_id])
    # Then the costs the index shows (their view's registration costs a connection 0.2 s),
    # while the helper may still be busy. A failure is the costs section's to report.
    results = work.finish(data, meanwhile=lambda: _read_costs(data, run_id))
    if names:
        write_summary(results, out / "analysis")
    hrefs = attempt_hrefs(trials["attempt_id"])
    (out / "trials.html").write_text(
        trials_page(run_id, trials, store.read("metrics", run_id), data, hrefs), encoding="utf-8"
    )
    index = out / "index.html"
    index.write_text(index_page(store, run_id, trials, data, results, hrefs, out), encoding="utf-8")
    return index


def page_job(store: Store, run_id: str, out: Path, include_audio: bool) -> dict[str, Any]:
    """``write_pages`` keywords for the report in ``out``."""
    return {
        "store_root": store.root,
        "run_id": run_id,
        "out": str(out / PAGES_DIR),
        "audio": include_audio,
    }


def begin_report(store: Store, run_id: str) -> SharedReportWork:
    """Begin the default report of a stored run: its helper starts on the pages and
    analyses (they read the attempts, never the aggregates) while the caller goes on,
    e.g. aggregating; pass it to :func:`write_report` as ``begun``."""
    attempts = len(store.read("trials", run_id))
    out = default_report_dir(store, run_id)
    return _shared_work(store, run_id, out, attempts, _analyses_for(attempts))


def _shared_work(
    store: Store,
    run_id: str,
    out: Path,
    attempts: int,
    names: list[str],
    include_audio: bool = True,
    parallel: bool = True,
) -> SharedReportWork:
    """The report's pages and ``names`` analyses, started on the helper interpreter."""
    job = page_job(store, run_id, out, include_audio)
    return SharedReportWork(store, run_id, out / "analysis", job, names, attempts, parallel)


def _read_costs(data: RunData, run_id: str) -> None:
    with contextlib.suppress(Exception):
        data.costs(run_id)


REPORT_ORDER = (
    "consistency",
    "pareto",
    "robustness",
    "key-entities",
    "ci-vs-k",
    "threshold-sensitivity",
    "faithfulness-decoupling",
)
"""Figures appear in this order; analyses registered later follow alphabetically."""


def _analyses_for(attempts: int, wanted: bool = True) -> list[str]:
    """The analyses a report runs: none for a run with no attempt."""
    return report_analyses() if wanted and attempts else []


def report_analyses() -> list[str]:
    """Every registered analysis, in :data:`REPORT_ORDER` first."""
    names = [n for n in REPORT_ORDER if n in ANALYSES]
    return names + [n for n in ANALYSES.names() if n not in names]
