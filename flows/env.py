"""Prefect settings for quiet, offline runs. Must run before ``prefect`` is imported."""

from __future__ import annotations

import os
from pathlib import Path


def configure_prefect(store: str, verbose: bool = False) -> None:
    """Offline, quiet Prefect with its home under the data directory (unless already set)."""
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    os.environ.setdefault("PREFECT_UI_ENABLED", "false")
    os.environ.setdefault("PREFECT_RESULTS_PERSIST_BY_DEFAULT", "false")
    if not verbose:
        os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
        os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")
        os.environ.setdefault("PREFECT_LOGGING_LOG_PRINTS", "false")
    if "PREFECT_HOME" not in os.environ:
        base = Path(store) if "://" not in store else Path("./evaflow-data")
        home = (base / ".prefect").resolve()
        home.mkdir(parents=True, exist_ok=True)
        os.environ["PREFECT_HOME"] = str(home)
