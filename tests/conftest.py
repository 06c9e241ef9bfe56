"""Shared fixtures. The EVA reference data is read from ../shared/eva (never copied here)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

REPO_ROOT = Path(__file__).resolve().parents[1]

# Prefect must be quiet, offline and isolated in tests; set before anything imports it.
# Each pytest-xdist worker gets its own home (its own database and ephemeral server), as
# two processes that share one would see each other's flow runs.
_TEST_PREFECT_HOME = Path(tempfile.gettempdir()) / "evaflow-test-prefect"
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER and os.environ.get("PREFECT_HOME") in (None, str(_TEST_PREFECT_HOME)):
    os.environ["PREFECT_HOME"] = f"{_TEST_PREFECT_HOME}-{_WORKER}"
os.environ.setdefault("PREFECT_HOME", str(_TEST_PREFECT_HOME))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("PREFECT_UI_ENABLED", "false")


# Property tests are derandomised by default, so a green CI run stays green: the examples
# depend only on the code and the test. `--hypothesis-profile=explore` (or
# HYPOTHESIS_PROFILE=explore) draws fresh random examples, for hunting new counterexamples;
# `--hypothesis-seed=N` replays one exploration.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# The longest test modules (serial seconds, measured 2026-12-07 over a whole run), started
# first when `make test` shares the suite between workers (--dist loadscope
# --no-loadscope-reorder): a long module left for last keeps one worker busy while the
# other idles (measured: the 71 s Pipecat cascade ran last, 67 s alone). Only an order: a
# module missing here runs after these, in collection order.
LONG_MODULES = (
    "tests/tasks/systems/test_pipecat_cascade.py",  # 71
    "tests/tasks/systems/test_provider_faults.py",  # 60
    "tests/tasks/simulate/clocks/test_interaction.py",  # 60
    "tests/flows/test_cli.py",  # 59
    "tests/flows/test_external_runners.py",  # 50
    "tests/tasks/simulate/clocks/test_audio_mode.py",  # 40
    "tests/tasks/test_rescore.py",  # 37
    "tests/tasks/voice/test_provider_tts.py",  # 32
    "tests/flows/test_sweep_deployment.py",  # 31
    "tests/tasks/simulate/callers/test_realtime_caller_call.py",  # 28
    "tests/tasks/judges/test_offline_agent_speech_injected.py",  # 26
    "tests/analysis/test_report_share.py",  # 24
    "tests/flows/test_determinism.py",  # 23
    "tests/reliability/test_cli_kill.py",  # 22
    "tests/tasks/simulate/clocks/test_provider_failures.py",  # 22
    "tests/flows/test_benchmark.py",  # 22
    "tests/tasks/simulate/wire/test_external.py",  # 21
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {module: i for i, module in enumerate(LONG_MODULES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


def find_eva_root() -> Path | None:
    env = os.environ.get("EVAFLOW_EVA_ROOT")
    candidates = [Path(env)] if env else []
    candidates.append(REPO_ROOT.parent / "shared" / "eva")
    return next((p for p in candidates if (p / "data").is_dir()), None)


@pytest.fixture(scope="session")
def eva_root() -> Path:
    root = find_eva_root()
    if root is None:
        pytest.skip("EVA reference data not found (set EVAFLOW_EVA_ROOT)")
    return root


@pytest.fixture(autouse=True)
def _no_prefect_traffic_under_property_tests(request: pytest.FixtureRequest) -> None:
    """Stop Prefect's background events and log services before a property test.

    After a flow, Prefect's events client keeps its websocket open in a background thread,
    and the websocket's keepalive pings draw from the global ``random`` module. Hypothesis
    watches that state while it generates data: a ping during a draw is reported as a
    strategy using ``random`` (a deprecation warning today, an error under ``-W error``),
    so a property test's outcome would depend on the test that ran before it. The services
    restart by themselves at the next flow run, as Prefect's own test harness relies on.
    """
    if not getattr(request.function, "is_hypothesis_test", False) or "prefect" not in sys.modules:
        return
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    for service in (EventsWorker, APILogWorker):
        service.drain_all(timeout=10)
