"""The report's work shared between its own process and its helper (:mod:`analysis.report_helper`):
the helper writes the attempt pages, then both run the analyses, each claimed once."""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.base import AnalysisResult
from analysis.data import RunData, load_run_data
from analysis.report_attempts import write_pages
from analysis.report_helper import claim, helper_for_report
from analysis.runner import result_json, run_one
from tasks.store import Store

PAGES = "attempt-pages"  # the pages' claim: one unit, like an analysis
PAGES_DONE = "pages.done"
# Claimed longest first, so the two processes end close together: seconds per analysis on
# a 12-attempt audio run, and per attempt page (its audio included), measured 2026-12-07.
COST_S = {
    "ci-vs-k": 0.53,
    "cost-vs-eva": 0.44,
    "consistency": 0.40,
    "pareto": 0.31,
    "threshold-sensitivity": 0.31,
    "robustness": 0.20,
    "key-entities": 0.16,
    "faithfulness-decoupling": 0.11,
}
PAGE_COST_S = 0.027


def claim_order(names: Sequence[str], attempts: int | None, helper: bool) -> list[str]:
    """The analyses ``names`` longest first (one without a measured cost last, in order)
    and, with ``attempts`` pages to write, the pages: in the helper's order by their cost,
    in the report's process's order last (it writes them only should its helper be gone;
    it is the slower of the two at them)."""
    costs = {name: COST_S.get(name, 0.0) for name in names}
    order = sorted(costs, key=lambda unit: -costs[unit])
    if attempts is None:
        return order
    if not helper:
        return [*order, PAGES]
    costs[PAGES] = attempts * PAGE_COST_S
    return sorted(costs, key=lambda unit: -costs[unit])


def work_through(
    order: Sequence[str],
    claims: Path,
    pages: dict[str, Any] | None,
    data: Callable[[], RunData],
    out: Path,
) -> Iterator[AnalysisResult]:
    """Do every unit of ``order`` this process manages to claim; yields each analysis."""
    for unit in order:
        if not claim(claims, unit):
            continue
        if unit == PAGES and pages:
            write_pages(**pages)
            (claims / PAGES_DONE).touch()
            continue
        yield run_one(unit, data(), out)


def serve(job: dict[str, Any]) -> None:
    """Helper side: every unit nobody has claimed yet; each result is left as JSON."""
    os.chdir(job["cwd"])  # a prestarted helper may have been started elsewhere
    claims = Path(job["claims"])
    loaded: list[RunData] = []

    def data() -> RunData:
        if not loaded:
            loaded.append(load_run_data(Store(job["store"]), [job["run_id"]]))
        return loaded[0]

    for result in work_through(job["order"], claims, job["pages"], data, Path(job["out"])):
        partial = claims / f"{result.name}.json.part"
        partial.write_text(json.dumps(result_json(result)), encoding="utf-8")
        partial.rename(claims / f"{result.name}.json")


def helper_result(claims: Path, name: str) -> AnalysisResult | None:
    """A result the helper wrote, its tables read back from their Parquet; None if absent."""
    path = claims / f"{name}.json"
    if not path.exists():
        return None
    result = AnalysisResult.model_validate(json.loads(path.read_text(encoding="utf-8")))
    result.tables = {k: pd.read_parquet(v) for k, v in result.table_paths.items()}
    return result


class SharedReportWork:
    """The pages and analyses of one report, begun in a helper as soon as this is built
    (the helper claims units while this process still does other things) and finished
    by :meth:`finish` in this process, sharing what is left."""

    def __init__(
        self,
        store: Store,
        run_id: str,
        out: Path,
        pages: dict[str, Any] | None,
        names: Sequence[str],
        attempts: int,
        parallel: bool = True,
    ) -> None:
        self.out, self.pages, self.names = out, pages, list(names)
        self.claims = Path(tempfile.mkdtemp(prefix="evaflow-report-claims-"))
        self.order = claim_order(names, attempts if pages else None, helper=False)
        helper = helper_for_report() if parallel else None
        job = {
            "cwd": os.getcwd(),
            "claims": str(self.claims),
            "pages": pages,
            "store": store.root,
            "run_id": run_id,
            "out": str(out),
            "order": claim_order(names, attempts if pages else None, helper=True),
        }
        self.helper = helper if helper is not None and helper.send(job) else None

    def finish(
        self, data: RunData, meanwhile: Callable[[], object] | None = None
    ) -> list[AnalysisResult]:
        """Do the units still unclaimed, then ``meanwhile`` (this process's own work, done
        while the helper may still be busy), then whatever the helper did not finish; the
        results in the order of ``names``."""
        try:
            work = work_through(self.order, self.claims, self.pages, lambda: data, self.out)
            mine = {r.name: r for r in work}
            if meanwhile is not None:
                meanwhile()
            self.close()
            if self.pages and not (self.claims / PAGES_DONE).exists():
                write_pages(**self.pages)
            return [
                mine.get(n) or helper_result(self.claims, n) or run_one(n, data, self.out)
                for n in self.names
            ]
        finally:
            shutil.rmtree(self.claims, ignore_errors=True)

    def abandon(self) -> None:
        """Stop the helper and forget the work (nothing if finished)."""
        if self.helper is not None:
            self.helper.stop()
            self.helper = None
        shutil.rmtree(self.claims, ignore_errors=True)

    def close(self) -> None:
        """Wait for the helper (a report that is not finished still lets it end its units)."""
        failure = self.helper.wait() if self.helper is not None else None
        self.helper = None
        if failure:
            logging.getLogger(__name__).warning(
                "report: the helper process failed (%s); finishing its part here", failure
            )
