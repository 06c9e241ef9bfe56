"""The report's per-attempt part: one drill-down page per attempt and its audio files.

Written by the report's helper interpreter (:mod:`analysis.report_helper`) while the
report's own process runs analyses; it reads the committed rows from the store itself.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from analysis.report_html import records, slug
from analysis.report_pages import AttemptView, attempt_page
from tasks.store import Store

DETAIL_TABLES = ("turns", "tool_calls", "metrics", "entities", "events")
AUDIO_COLUMNS = ["attempt_id", "track", "format", "data"]


PAGES_DIR = "trials"


def page_name(attempt_id: str) -> str:
    """The file name of an attempt's page, inside :data:`PAGES_DIR`."""
    return f"{slug(attempt_id)}.html"


def attempt_hrefs(attempt_ids: Any) -> dict[str, str]:
    """Attempt id -> its page, relative to the report root."""
    return {a: f"{PAGES_DIR}/{page_name(a)}" for a in attempt_ids}


def write_pages(store_root: str, run_id: str, out: str, audio: bool) -> None:
    """The run's audio files, then one page per attempt, under ``out``."""
    store = Store(store_root)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    tracks = _extract_audio(store, run_id, folder / "audio") if audio else {}
    _write_attempt_pages(store, run_id, store.read("trials", run_id), tracks, folder)


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
) -> None:
    """One page per attempt (its href: :func:`attempt_hrefs`)."""
    details = {name: _rows_by_attempt(store, run_id, name) for name in DETAIL_TABLES}
    by_trial: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in records(trials):
        by_trial[row["trial_key"]].append(row)
    for rows in by_trial.values():
        rows.sort(key=lambda r: r.get("attempt") or 0)
        siblings = [(r["attempt_id"], page_name(r["attempt_id"]), r) for r in rows]
        for row in rows:
            aid = row["attempt_id"]
            view = AttemptView(
                trial=row,
                audio=audio.get(aid, {}),
                **{name: details[name].get(aid, []) for name in DETAIL_TABLES},
            )
            (out / page_name(aid)).write_text(
                attempt_page(view, siblings, run_id), encoding="utf-8"
            )


def _rows_by_attempt(store: Store, run_id: str, name: str) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in records(store.read(name, run_id)):
        grouped[row["attempt_id"]].append(row)
    return grouped
