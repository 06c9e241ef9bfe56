"""The report's helper interpreter writes the pages and shares the analyses: what it writes
is what the report's own process writes, each analysis runs once, a prestarted helper is
the one the next report uses, and a helper that fails costs time, never output."""

from __future__ import annotations

import filecmp
import json
import logging
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analysis import report_helper, report_share
from analysis.base import AnalysisResult
from analysis.data import load_run_data
from analysis.report import begin_report, report_analyses, write_report
from analysis.report_attempts import attempt_hrefs
from analysis.report_helper import ReportHelper, helper_for_report, prestart
from analysis.report_share import SharedReportWork
from tasks.store import Store
from tests.analysis.synthetic import RUN


def _files(folder: Path) -> dict[str, Path]:
    return {str(p.relative_to(folder)): p for p in folder.rglob("*") if p.is_file()}


FEW = ["consistency", "robustness", "key-entities", "ci-vs-k"]


def _work(
    store: Store, out: Path, parallel: bool, audio: bool = True, names: list[str] | None = None
) -> list[AnalysisResult]:
    pages = {"store_root": store.root, "run_id": RUN, "out": str(out / "trials"), "audio": audio}
    data = load_run_data(store, [RUN])
    attempts = len(data.attempts)
    work = SharedReportWork(
        store, RUN, out / "analysis", pages, names or report_analyses(), attempts, parallel
    )
    return work.finish(data)


def test_a_report_written_with_the_helper_is_the_report_written_alone(
    synth_store: Store, tmp_path: Path
) -> None:
    shared = write_report(synth_store, RUN, tmp_path / "shared").parent
    alone = write_report(synth_store, RUN, tmp_path / "alone", parallel=False).parent
    helper, here = _files(shared), _files(alone)
    assert helper.keys() == here.keys()
    for kind in (".wav", ".svg", ".png", ".parquet"):
        assert any(name.endswith(kind) for name in here), kind
    attempts = synth_store.read("trials", RUN)["attempt_id"]
    written = {name for name in here if name.startswith("trials/") and name.endswith(".html")}
    assert set(attempt_hrefs(attempts).values()) == written
    # Byte for byte, but for the summary's paths (each names its own report folder).
    same = [n for n in here if n != "analysis/summary.json"]
    assert [n for n in same if not filecmp.cmp(helper[n], here[n], shallow=False)] == []


def test_a_prestarted_helper_takes_a_share_of_the_analyses(
    synth_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prestart()
    warm = report_helper._warm[-1]
    ran_here: list[str] = []
    real_run_one = report_share.run_one

    def slow_run_one(name: str, *args: object) -> object:
        ran_here.append(name)
        time.sleep(0.5)  # the helper claims the next ones meanwhile
        return real_run_one(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(report_share, "run_one", slow_run_one)
    taken: list[ReportHelper | None] = []
    real_for_report = report_share.helper_for_report

    def spy() -> ReportHelper | None:
        taken.append(real_for_report())
        return taken[-1]

    monkeypatch.setattr(report_share, "helper_for_report", spy)
    results = _work(synth_store, tmp_path / "report", parallel=True, audio=False, names=FEW)
    assert taken == [warm] and warm not in report_helper._warm
    assert [r.name for r in results] == FEW
    assert 0 < len(ran_here) < len(results), ran_here  # each ran once, in one of the two
    from_helper = [r for r in results if r.name not in ran_here]
    assert any(r.status == "ok" and r.figures for r in from_helper)
    assert all(Path(f).exists() for r in results for f in r.figures)


def test_a_failed_helper_falls_back_to_this_process(
    synth_store: Store,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken_helper() -> ReportHelper:
        crash = [sys.executable, "-c", "import sys; sys.stdin.read(); sys.exit('no pages from me')"]
        return ReportHelper(subprocess.Popen(crash, stdin=subprocess.PIPE, stderr=subprocess.PIPE))

    monkeypatch.setattr(report_share, "helper_for_report", broken_helper)
    with caplog.at_level(logging.WARNING, logger="analysis.report_share"):
        results = _work(synth_store, tmp_path / "report", parallel=True, audio=False, names=FEW)
    assert "no pages from me" in caplog.text
    attempts = synth_store.read("trials", RUN)["attempt_id"]
    written = {p.name for p in (tmp_path / "report" / "trials").glob("*.html")}
    assert written == {href.removeprefix("trials/") for href in attempt_hrefs(attempts).values()}
    assert not (tmp_path / "report" / "trials" / "audio").exists()  # audio=False was kept
    assert [r.name for r in results] == FEW
    assert any(r.status == "ok" for r in results)


def test_an_unused_prestarted_helper_goes_when_let_go() -> None:
    prestart()
    helper = helper_for_report()
    assert helper is not None
    started = time.perf_counter()
    helper.close()
    assert time.perf_counter() - started < 30
    assert helper._process.returncode == 0  # it saw its stdin close and left, job-less


def test_a_begun_report_is_finished_by_write_report(synth_store: Store) -> None:
    """The flow's way: the helper begins while the caller aggregates, write_report finishes
    (every analysis and page, nothing left behind); a begun report for another folder is
    refused."""
    begun = begin_report(synth_store, RUN)
    index = write_report(synth_store, RUN, begun=begun)
    assert not begun.claims.exists() and begun.helper is None
    summary = json.loads((index.parent / "analysis" / "summary.json").read_text())
    assert [r["name"] for r in summary] == report_analyses()
    assert all(Path(f).exists() for r in summary for f in r["figures"])
    assert len(list((index.parent / "trials").glob("*.html"))) == len(
        synth_store.read("trials", RUN)
    )
    other = begin_report(synth_store, RUN)
    try:
        with pytest.raises(ValueError, match="begun for"):
            write_report(synth_store, RUN, index.parent.with_name("elsewhere"), begun=other)
    finally:
        other.abandon()
    assert not other.claims.exists()
