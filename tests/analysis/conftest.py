"""Session fixtures: one synthetic store, its data, one report and one published redraw.

Everything heavy (figures) is produced once per session and shared by the tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.data import RunData, load_run_data
from tasks.store import Store
from tests.analysis.synthetic import RUN, TEXT_RUN, build_store


@pytest.fixture(scope="session")
def synth_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return build_store(str(tmp_path_factory.mktemp("store")))


@pytest.fixture(scope="session")
def synth_data(synth_store: Store) -> RunData:
    return load_run_data(synth_store, [RUN])


@pytest.fixture(scope="session")
def report_index(synth_store: Store, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from analysis.report import write_report

    return write_report(synth_store, RUN, tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="session")
def text_report_index(synth_store: Store) -> Path:
    from analysis.report import write_report

    # Analyses do not read audio or segments, so they are left out here (they cost figures);
    # the pages are what differs in text mode. Default location: <store>/reports/<run>.
    return write_report(synth_store, TEXT_RUN, analyses=False)


@pytest.fixture(scope="session")
def stats_file(eva_root: Path) -> Path:
    path = eva_root / "published" / "leaderboardStats.json"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return path
