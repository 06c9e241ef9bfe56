"""The static HTML report of a run: opens from disk, no server, no JavaScript.

Layout under the output directory::

    index.html      summary, config, headline table with CIs, figures, breakdowns, worst
    trials.html     every trial with its verdict and headline metrics
    trials/*.html   one drill-down page per attempt; trials/audio/*.wav its audio
    analysis/       the analyses' figures (PNG + SVG) and tables (Parquet)
    report.css
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from analysis.base import ANALYSES, AnalysisResult
from analysis.data import RunData, load_run_data
from analysis.report_html import CSS, records, slug
from analysis.report_index import index_page, trials_page
from analysis.report_pages import AttemptView, attempt_page
from analysis.runner import run_one, write_summary
from tasks.store import Store

DETAIL_TABLES = ("turns", "tool_calls", "metrics", "entities", "events")


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
) -> Path:
    """Write the report of ``run_id`` and return the path of its ``index.html``."""
    if run_id not in store.run_ids():
        raise ValueError(
            f"no run {run_id!r} in store {store.root}; runs: "
            f"{', '.join(store.run_ids()) or '(none)'}"
        )
    out = Path(out_dir) if out_dir else default_report_dir(store, run_id)
    (out / "trials").mkdir(parents=True, exist_ok=True)
    (out / "report.css").write_text(CSS, encoding="utf-8")
    trials = store.read("trials", run_id)
    data = load_run_data(store, [run_id])
    results = _run_analyses(data, out / "analysis") if analyses and not trials.empty else []
    audio = _extract_audio(store, run_id, out / "trials" / "audio") if include_audio else {}
    hrefs = _write_attempt_pages(store, run_id, trials, audio, out / "trials")
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


AUDIO_COLUMNS = ["attempt_id", "track", "format", "data"]


def _audio_batches(store: Store, run_id: str) -> Iterator[list[dict[str, Any]]]:
    """Rows of the committed audio parts, a few at a time, read straight from Parquet.

    Reading part by part (not through a DuckDB view) keeps memory to one small record batch
    of WAV blobs, whatever the size of the run.
    """
    committed = store.committed_batches(run_id)
    for path in store.parts("audio", run_id):
        if posixpath.basename(path).removesuffix(".parquet") not in committed:
            continue
        with store.fs.open(path, "rb") as fh:
            for batch in pq.ParquetFile(fh).iter_batches(batch_size=8, columns=AUDIO_COLUMNS):
                yield batch.to_pylist()


def _extract_audio(store: Store, run_id: str, out: Path) -> dict[str, dict[str, str]]:
    """Write every stored track as a WAV file; attempt id -> track -> path relative to trials/."""
    found: dict[str, dict[str, str]] = {}
    for rows in _audio_batches(store, run_id):
        for row in rows:
            if not row["data"]:
                continue
            out.mkdir(parents=True, exist_ok=True)
            ext = "wav" if (row["format"] or "wav") == "wav" else "bin"
            name = f"{slug(row['attempt_id'])}_{slug(row['track'])}.{ext}"
            (out / name).write_bytes(row["data"])
            found.setdefault(row["attempt_id"], {})[row["track"]] = f"audio/{name}"
    return found


def _write_attempt_pages(
    store: Store, run_id: str, trials: pd.DataFrame, audio: dict[str, dict[str, str]], out: Path
) -> dict[str, str]:
    """One page per attempt; returns attempt id -> href relative to the report root."""
    details = {name: _rows_by_attempt(store, run_id, name) for name in DETAIL_TABLES}
    hrefs = {a: f"trials/{slug(a)}.html" for a in trials["attempt_id"]}
    by_trial: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in records(trials):
        by_trial[row["trial_key"]].append(row)
    for rows in by_trial.values():
        rows.sort(key=lambda r: r.get("attempt") or 0)
        siblings = [(r["attempt_id"], f"{slug(r['attempt_id'])}.html", r) for r in rows]
        for row in rows:
            aid = row["attempt_id"]
            view = AttemptView(
                trial=row,
                audio=audio.get(aid, {}),
                **{name: details[name].get(aid, []) for name in DETAIL_TABLES},
            )
            (out / f"{slug(aid)}.html").write_text(
                attempt_page(view, siblings, run_id), encoding="utf-8"
            )
    return hrefs


def _rows_by_attempt(store: Store, run_id: str, name: str) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in records(store.read(name, run_id)):
        grouped[row["attempt_id"]].append(row)
    return grouped
