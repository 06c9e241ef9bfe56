"""The report's per-attempt part: one drill-down page per attempt and its audio files.

Written by a separate interpreter (``python -m analysis.report_attempts``) while the
report's own process runs the analyses: in a 1,000-attempt text run the pages were over
half of the report's time and the figures most of the rest, each held to one core by the
GIL. A fresh interpreter, not a multiprocessing child, so that it imports only this
module, not the caller's ``__main__`` (the evaflow CLI, Prefect). It reads the committed
rows from the store itself. If it cannot start or fails, the pages are written in the
caller's process instead: the report never depends on the second process.
"""

from __future__ import annotations

import argparse
import logging
import posixpath
import subprocess
import sys
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


class AttemptPages:
    """The pages being written by ``helper`` (or, without one, on :meth:`wait`)."""

    def __init__(self, job: dict[str, Any], helper: subprocess.Popen[bytes] | None) -> None:
        self._job = job
        self._helper = helper

    def wait(self) -> None:
        """Return once every page is written."""
        if self._helper is not None:
            _, err = self._helper.communicate()
            if self._helper.returncode == 0:
                return
            logging.getLogger(__name__).warning(
                "attempt pages: the helper process failed (exit %s: %s); writing them here",
                self._helper.returncode,
                (err.decode(errors="replace").strip().splitlines() or ["no output"])[-1],
            )
        write_pages(**self._job)


def start_attempt_pages(
    store: Store, run_id: str, out: Path, include_audio: bool, parallel: bool = True
) -> AttemptPages:
    """Start writing the attempt pages of ``run_id`` under ``out``; see :class:`AttemptPages`."""
    job = {"store_root": store.root, "run_id": run_id, "out": str(out), "audio": include_audio}
    if not parallel:
        return AttemptPages(job, None)
    command = [sys.executable, "-m", __name__, store.root, run_id, str(out)]
    try:
        helper = subprocess.Popen(
            [*command, *([] if include_audio else ["--no-audio"])],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
    except OSError:
        helper = None
    return AttemptPages(job, helper)


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write a run's attempt pages and audio.")
    parser.add_argument("store")
    parser.add_argument("run_id")
    parser.add_argument("out", help="the report's trials/ folder")
    parser.add_argument("--no-audio", action="store_true")
    args = parser.parse_args(argv)
    write_pages(args.store, args.run_id, args.out, not args.no_audio)


if __name__ == "__main__":
    main()
