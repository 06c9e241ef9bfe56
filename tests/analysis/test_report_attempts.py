"""Attempt pages written by the helper interpreter are the pages the report's own process
writes; a helper that fails costs time, never pages."""

from __future__ import annotations

import filecmp
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from analysis import report_attempts
from analysis.report_attempts import attempt_hrefs, start_attempt_pages
from tasks.store import Store
from tests.analysis.synthetic import RUN


def _files(folder: Path) -> dict[str, Path]:
    return {str(p.relative_to(folder)): p for p in folder.rglob("*") if p.is_file()}


def test_helper_pages_equal_in_process_pages(synth_store: Store, tmp_path: Path) -> None:
    start_attempt_pages(synth_store, RUN, tmp_path / "helper", True, parallel=True).wait()
    start_attempt_pages(synth_store, RUN, tmp_path / "here", True, parallel=False).wait()
    helper, here = _files(tmp_path / "helper"), _files(tmp_path / "here")
    assert helper.keys() == here.keys()
    assert any(name.endswith(".wav") for name in here)
    assert all(filecmp.cmp(helper[n], here[n], shallow=False) for n in here)
    attempts = synth_store.read("trials", RUN)["attempt_id"]
    pages = {f"trials/{name}" for name in here if name.endswith(".html")}
    assert set(attempt_hrefs(attempts).values()) == pages


def test_a_failed_helper_falls_back_to_this_process(
    synth_store: Store,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    real_popen = subprocess.Popen

    def broken_helper(command: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
        crash = [sys.executable, "-c", "import sys; sys.exit('no pages from me')"]
        return real_popen(crash, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(report_attempts.subprocess, "Popen", broken_helper)
    with caplog.at_level(logging.WARNING, logger="analysis.report_attempts"):
        start_attempt_pages(synth_store, RUN, tmp_path / "pages", False, parallel=True).wait()
    assert "no pages from me" in caplog.text
    attempts = synth_store.read("trials", RUN)["attempt_id"]
    written = {p.name for p in (tmp_path / "pages").glob("*.html")}
    assert written == {href.removeprefix("trials/") for href in attempt_hrefs(attempts).values()}
    assert not (tmp_path / "pages" / "audio").exists()  # include_audio=False was kept
