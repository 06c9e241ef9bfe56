"""The static HTML report of a run: opens from disk, no server, no JavaScript.

Layout under the output directory::

    index.html      summary, config, headline table with CIs, figures, breakdowns, worst
    trials.html     every trial with its verdict and headline metrics
    trials/*.html   one drill-down page per attempt; trials/audio/*.wav its audio
    analysis/       the analyses' figures (PNG + SVG) and tables (Parquet)
    report.css
"""

from __future__ import annotations

from pathlib import Path

from analysis.base import ANALYSES, AnalysisResult
from analysis.data import RunData, load_run_data
from analysis.report_attempts import PAGES_DIR, attempt_hrefs, start_attempt_pages
from analysis.report_html import CSS
from analysis.report_index import index_page, trials_page
from analysis.runner import run_one, write_summary
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
) -> Path:
    """Write the report of ``run_id`` and return the path of its ``index.html``."""
    if run_id not in store.run_ids():
        raise ValueError(
            f"no run {run_id!r} in store {store.root}; runs: "
            f"{', '.join(store.run_ids()) or '(none)'}"
        )
    out = Path(out_dir) if out_dir else default_report_dir(store, run_id)
    (out / PAGES_DIR).mkdir(parents=True, exist_ok=True)
    (out / "report.css").write_text(CSS, encoding="utf-8")
    trials = store.read("trials", run_id)
    # Attempt pages and audio (a page per attempt: half a 1,000-attempt report) are written
    # in another process while this one runs the analyses (mostly figures).
    pages = start_attempt_pages(store, run_id, out / PAGES_DIR, include_audio, parallel)
    data = load_run_data(store, [run_id])
    results = _run_analyses(data, out / "analysis") if analyses and not trials.empty else []
    hrefs = attempt_hrefs(trials["attempt_id"])
    pages.wait()
    (out / "trials.html").write_text(
        trials_page(run_id, trials, store.read("metrics", run_id), data, hrefs), encoding="utf-8"
    )
    index = out / "index.html"
    index.write_text(index_page(store, run_id, trials, data, results, hrefs, out), encoding="utf-8")
    return index


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


def _run_analyses(data: RunData, out: Path) -> list[AnalysisResult]:
    names = [n for n in REPORT_ORDER if n in ANALYSES]
    names += [n for n in ANALYSES.names() if n not in names]
    results = [run_one(name, data, out) for name in names]
    write_summary(results, out)
    return results
