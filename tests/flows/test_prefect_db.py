"""A new Prefect home starts from the migrated template (flows.prefect_db), and works."""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flows.prefect_db import DATABASE_FILE, build_template, seed_database, template_path
from tests.conftest import REPO_ROOT


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A template built once for the module, in a cache of its own."""
    root = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EVAFLOW_CACHE_DIR", str(root))
        build_template()
    return root


@pytest.fixture
def own_cache(cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EVAFLOW_CACHE_DIR", str(cache))
    for name in ("PREFECT_API_URL", "PREFECT_API_DATABASE_CONNECTION_URL"):
        monkeypatch.delenv(name, raising=False)
    return template_path()


def test_the_template_lives_in_the_users_cache_unless_evaflow_cache_dir_names_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from importlib.metadata import version

    name = f"prefect-{version('prefect')}.db"
    monkeypatch.delenv("EVAFLOW_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert template_path() == tmp_path / "home" / ".cache" / "evaflow" / name
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert template_path() == tmp_path / "xdg" / "evaflow" / name
    monkeypatch.setenv("EVAFLOW_CACHE_DIR", str(tmp_path / "mine"))
    assert template_path() == tmp_path / "mine" / name


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_the_template_is_migrated_to_prefects_head(own_cache: Path) -> None:
    from alembic.script import ScriptDirectory
    from prefect.server.database import provide_database_interface
    from prefect.server.database.alembic_commands import alembic_config

    script = ScriptDirectory.from_config(alembic_config())
    script.version_locations = [str(provide_database_interface().orm.versions_dir)]  # SQLite's
    head = script.get_current_head()
    assert head
    assert rows(own_cache, "SELECT version_num FROM alembic_version") == [(head,)]
    tables = {r[0] for r in rows(own_cache, "SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"flow", "flow_run", "task_run", "task_run_state"} <= tables
    assert not list(own_cache.parent.glob(".build-*"))  # the build directory is gone


def test_only_a_home_without_a_database_gets_a_copy(
    own_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "new" / ".prefect"  # not created yet
    assert seed_database(home)
    assert (home / DATABASE_FILE).read_bytes() == own_cache.read_bytes()
    (home / DATABASE_FILE).write_bytes(b"a user's database")
    assert not seed_database(home)
    assert (home / DATABASE_FILE).read_bytes() == b"a user's database"
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")
    elsewhere = tmp_path / "remote" / ".prefect"
    assert not seed_database(elsewhere) and not elsewhere.exists()


def test_a_template_that_cannot_be_built_leaves_the_database_to_prefect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")
    monkeypatch.setenv("EVAFLOW_CACHE_DIR", str(blocked))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with caplog.at_level(logging.WARNING, logger="flows.prefect_db"):
        assert not seed_database(tmp_path / "home")
    assert not (tmp_path / "home" / DATABASE_FILE).exists()
    assert "not used" in caplog.text and str(blocked) in caplog.text


FLOW = textwrap.dedent(
    """
    from flows.env import configure_prefect
    configure_prefect("unused")
    from prefect import flow, task

    @task
    def double(x):
        return 2 * x

    @flow
    def tiny():
        return double(21)

    assert tiny() == 42
    """
)


def test_a_seeded_home_serves_a_flow_run(
    own_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy is a working database: a flow runs against a temporary server on it. The
    template gets a marker row first, so the home's database is known to be its copy."""
    marked = tmp_path / "marked-cache"
    marked.mkdir()
    monkeypatch.setenv("EVAFLOW_CACHE_DIR", str(marked))
    template_path().write_bytes(own_cache.read_bytes())
    con = sqlite3.connect(template_path())
    with con:
        con.execute(
            "INSERT INTO configuration (id, key, value) VALUES (?, ?, ?)",
            ("00000000-0000-0000-0000-00000000e7a1", "evaflow-test-marker", "{}"),
        )
    con.close()
    home = tmp_path / ".prefect"
    env = {**os.environ, "PREFECT_HOME": str(home), "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", FLOW], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    db = home / DATABASE_FILE
    assert rows(db, "SELECT key FROM configuration WHERE key = 'evaflow-test-marker'")
    assert rows(db, "SELECT state_type FROM flow_run") == [("COMPLETED",)]
