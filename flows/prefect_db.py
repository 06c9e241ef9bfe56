"""A new Prefect home's database, copied from a migrated template rather than migrated anew.

Prefect creates its SQLite database by running every one of its Alembic migrations, in
order: about 13 s of the first run in a new store on the 2-core CI machine, against about
6 s for the whole server start once the database exists. The migrated schema depends only
on the Prefect version, so it is built once per version in the user's cache
(``$XDG_CACHE_HOME/evaflow``, or ``EVAFLOW_CACHE_DIR``; ``make install`` builds it) and
copied into each new home. The copy is what the migrations would have produced: Prefect
still checks it against its head revision when its server starts.

``python -m flows.prefect_db`` builds the template (unless it exists) and prints its path.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

DATABASE_FILE = "prefect.db"  # Prefect's default: sqlite+aiosqlite:///$PREFECT_HOME/prefect.db
# Any of these means the database is not Prefect's default file in PREFECT_HOME.
_ELSEWHERE = (
    "PREFECT_API_URL",
    "PREFECT_API_DATABASE_CONNECTION_URL",
    "PREFECT_SERVER_DATABASE_CONNECTION_URL",
    "PREFECT_API_DATABASE_DRIVER",
    "PREFECT_SERVER_DATABASE_DRIVER",
)
# What Prefect's server runs on start (its migrations need the database interface's loop).
_MIGRATE = (
    "import asyncio; from prefect.server.database import provide_database_interface; "
    "asyncio.run(provide_database_interface().create_db())"
)


def template_path() -> Path:
    """Where this Prefect version's migrated, empty database is kept."""
    if explicit := os.environ.get("EVAFLOW_CACHE_DIR"):
        root = Path(explicit)
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "evaflow"
    return root / f"prefect-{version('prefect')}.db"


def build_template(path: Path | None = None) -> Path:
    """Migrate an empty database to Prefect's head revision and keep it at ``path``.

    In a child process: Prefect reads its database URL once per process. Written to a
    temporary file and renamed, so concurrent builders never expose a partial file."""
    path = path or template_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".build-") as tmp:
        migrated = Path(tmp) / DATABASE_FILE
        env = {**os.environ, "PREFECT_HOME": tmp}
        env["PREFECT_API_DATABASE_CONNECTION_URL"] = f"sqlite+aiosqlite:///{migrated}"
        subprocess.run(
            [sys.executable, "-c", _MIGRATE], env=env, check=True, capture_output=True, timeout=600
        )
        single = Path(tmp) / "template.db"
        _copy_database(migrated, single)
        os.replace(single, path)
    return path


def _copy_database(source: Path, target: Path) -> None:
    """One self-contained file (SQLite's backup folds in the write-ahead log)."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def ensure_template() -> Path:
    """This Prefect version's template, built if missing."""
    template = template_path()
    return template if template.is_file() else build_template(template)


def seed_database(home: Path) -> bool:
    """Give a Prefect ``home`` without a database a copy of the template; True if copied.

    Nothing happens when the database lives elsewhere (an API URL or a database URL is
    set) or already exists. A template that cannot be built is logged, not raised: Prefect
    then migrates a new database itself, as it would without this module."""
    target = home / DATABASE_FILE
    if target.exists() or any(os.environ.get(name) for name in _ELSEWHERE):
        return False
    template = template_path()
    try:
        ensure_template()
        home.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{DATABASE_FILE}.{os.getpid()}")
        shutil.copyfile(template, partial)
        os.replace(partial, target)
    except (OSError, subprocess.SubprocessError) as exc:
        logging.getLogger(__name__).warning(
            "Prefect database template %s not used (%s): Prefect will create %s itself",
            template,
            exc,
            target,
        )
        return False
    return True


if __name__ == "__main__":
    print(ensure_template())
