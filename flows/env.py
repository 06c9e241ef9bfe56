"""Prefect settings for quiet, offline runs. Must run before ``prefect`` is imported."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from flows.prefect_db import seed_database

# A temporary API server (one per run) starts only its "ephemeral" services: the task-run
# recorder (task runs and their states; stays on), the event persister (every task state
# change written to SQLite as an event: most of the server's CPU in a py-spy profile of a
# text run, competing with the trials on 2 cores) and automations (triggers, actions). One
# offline run reads neither events nor automations. The recorder writes task runs in
# batches (Prefect's default is one SQLite transaction, and one compiled INSERT, per state
# event: three per trial); what it has not written yet it writes within 5 s, or when the
# server stops. Only the server reads these settings; a user's own setting wins.
_ONE_RUN_SERVER = {
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE": "100",
    "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_READ_BATCH_SIZE": "100",
}


def configure_prefect(store: str, verbose: bool = False) -> None:
    """Offline, quiet Prefect with its home under the data directory (unless already set)."""
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    os.environ.setdefault("PREFECT_UI_ENABLED", "false")
    os.environ.setdefault("PREFECT_RESULTS_PERSIST_BY_DEFAULT", "false")
    for name, value in _ONE_RUN_SERVER.items():
        os.environ.setdefault(name, value)
    if not verbose:
        os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
        os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")
        os.environ.setdefault("PREFECT_LOGGING_LOG_PRINTS", "false")
    if "PREFECT_HOME" not in os.environ:
        base = Path(store) if "://" not in store else Path("./evaflow-data")
        home = (base / ".prefect").resolve()
        home.mkdir(parents=True, exist_ok=True)
        os.environ["PREFECT_HOME"] = str(home)
    seed_database(Path(os.environ["PREFECT_HOME"]).expanduser())


@contextmanager
def workers_report_here() -> Iterator[str]:
    """Task runs in other processes (Dask workers) report to the API this flow reports to.

    Without a configured ``PREFECT_API_URL`` the flow runs against a temporary server, and a
    worker process that knows no URL would start a temporary server of its own (about
    230 MB each, all writing one SQLite database). Inside this block the URL is a setting:
    Prefect serialises the settings with every task it submits, so workers (local or
    remote) use the flow's server. Yields the URL, for local clusters' worker environment.
    """
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    url = PREFECT_API_URL.value() or str(get_client(sync_client=True).api_url).rstrip("/")
    with temporary_settings(updates={PREFECT_API_URL: url}):
        yield url
