"""Fixtures shared by the tasks tests: the trial-loop tests' text trial
(tests/tasks/test_trial*.py) and the re-scoring tests' stored audio run
(tests/tasks/test_rescore*.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from scenarios.models import Scenario
from tasks.config import BenchmarkConfig, SystemSpec
from tasks.sources import load_source
from tasks.store import Store
from tasks.trial import expand_trials
from tasks.trial_spec import TrialSpec

AUDIO_RUN = "rescore"
"""The run id of the stored audio run (:func:`audio_run`)."""


@pytest.fixture(scope="module")
def text_trial() -> tuple[TrialSpec, Scenario]:
    """The embedded pack's first text-mode trial, up to three attempts."""
    config = BenchmarkConfig(
        run_id="text-trial",
        systems=[SystemSpec(name="text", agent="text")],
        mode="text",
        conditions=["clean"],
        trials=1,
        max_attempts=3,
    )
    scenarios = {s.key: s for s in load_source(config.scenarios)}
    spec = expand_trials(config, list(scenarios.values()), None)[0]
    return spec, scenarios[spec.scenario_key]


def simulate_audio_run(root: Path) -> Store:
    """A quick-sized offline audio run stored under ``root/data``: one airline scenario,
    clean and noise, the reference agent, the offline judges, up to two attempts."""
    from flows.benchmark import _write_run_row
    from tasks.summary import summarize_run
    from tasks.trial import run_trial
    from tasks.writer import BatchWriter

    config = BenchmarkConfig.model_validate(
        {
            "run_id": AUDIO_RUN,
            "store": str(root / "data"),
            "systems": [SystemSpec(name="reference", agent="reference")],
            "scenarios": {"domains": ["airline"], "limit": 1},
            "conditions": ["clean", "noise"],
            "trials": 1,
            "max_attempts": 2,
        }
    )
    scenarios = {s.key: s for s in load_source(config.scenarios)}
    store = Store(config.store)
    _write_run_row(store, config)
    writer = BatchWriter(store, AUDIO_RUN, batch_size=1)
    for spec in expand_trials(config, list(scenarios.values()), str(root / "scratch")):
        writer.add(run_trial(spec, scenarios[spec.scenario_key]))
    writer.flush()
    summarize_run(store, AUDIO_RUN)
    return store


@pytest.fixture(scope="session")
def stored_audio_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The audio run, simulated once per session (~30 s): the template every
    :func:`audio_run` copies. Never re-score or write to it."""
    return Path(simulate_audio_run(tmp_path_factory.mktemp("audio-run")).root)


@pytest.fixture
def audio_run(stored_audio_run: Path, tmp_path: Path) -> Store:
    """A test's own copy of the stored audio run: its re-scorings write new parts, and no
    test sees another's."""
    copy = tmp_path / "audio-run"
    shutil.copytree(stored_audio_run, copy)
    return Store(str(copy))
