"""Fixtures of the reliability suite: the environment of ``evaflow`` children."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.reliability.cli import CliRunner


@pytest.fixture(scope="session")
def cli_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One Prefect home for the session (its database is created once), quiet, offline."""
    home = tmp_path_factory.mktemp("prefect-home")
    env = dict(os.environ)
    env.update(
        PREFECT_HOME=str(home),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture
def cli(cli_env: dict[str, str]) -> Iterator[CliRunner]:
    runner = CliRunner(cli_env)
    yield runner
    runner.stop_all()
