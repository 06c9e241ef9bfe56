"""A trial's validated attempts survive a kill while it is judged (tasks.stage_checkpoint):
a second ``run_trial`` of the same spec judges them without simulating, to the values an
uninterrupted trial gets; a torn file or another spec's is ignored; the writer removes
the checkpoint when the trial is committed; no scratch directory, no checkpoint."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

import tasks.simulation as simulation_mod
from scenarios.models import Scenario
from tasks.config import BenchmarkConfig, SystemSpec
from tasks.records import MetricScore
from tasks.sources import load_source
from tasks.stage_checkpoint import checkpoint_path, load_validated, save_validated
from tasks.store import Store
from tasks.trial import attempt_loop, expand_trials, run_trial
from tasks.trial_spec import TrialSpec
from tasks.writer import BatchWriter


def _trial(scratch: Path | None, run_id: str = "ckpt") -> tuple[TrialSpec, Scenario]:
    config = BenchmarkConfig(
        run_id=run_id,
        systems=[SystemSpec(name="text", agent="text")],
        mode="text",
        conditions=["clean"],
        trials=1,
        scenarios={"domains": ["airline"], "limit": 1},
    )
    scenario = load_source(config.scenarios)[0]
    spec = expand_trials(config, [scenario], str(scratch) if scratch else None)[0]
    return spec, scenario


def _values(result: Any) -> list[tuple[str, float | None, str | None]]:
    return [(s.name, s.score, s.error) for s in result.final.scores]


def _no_simulation(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any) -> None:
        raise AssertionError("simulated again")

    monkeypatch.setattr(simulation_mod, "simulate_attempt", refuse)


def test_a_trial_killed_while_judging_is_judged_from_its_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, scenario = _trial(tmp_path)
    whole = run_trial(spec, scenario)  # checkpoints, then judges (nothing commits it here)
    path = checkpoint_path(spec)
    assert path is not None and path.is_file()
    assert len(whole.final.scores) > len(load_validated(spec).final.scores)  # type: ignore[union-attr]
    _no_simulation(monkeypatch)
    resumed = run_trial(spec, scenario)
    assert _values(resumed) == _values(whole)
    assert resumed.final.validation == whole.final.validation
    assert [a.record.attempt_id for a in resumed.attempts] == [
        a.record.attempt_id for a in whole.attempts
    ]


def test_checkpoint_round_trip_keeps_nan_and_rejects_torn_or_foreign_files(
    tmp_path: Path,
) -> None:
    spec, scenario = _trial(tmp_path)
    result = attempt_loop(spec, scenario)
    result.final.scores.append(MetricScore(name="odd", score=math.nan, details={"x": math.inf}))
    save_validated(result)
    loaded = load_validated(spec)
    assert loaded is not None
    odd = loaded.final.scores[-1]
    assert odd.score is not None and math.isnan(odd.score) and odd.details == {"x": math.inf}
    assert loaded.final.record == result.final.record
    other, _ = _trial(tmp_path, run_id="another")
    path, elsewhere = checkpoint_path(spec), checkpoint_path(other)
    assert path is not None and elsewhere is not None
    elsewhere.write_bytes(path.read_bytes())  # a file that names another spec
    assert load_validated(other) is None
    path.write_bytes(path.read_bytes()[:-40])  # torn
    assert load_validated(spec) is None


def test_commit_removes_the_checkpoint_and_no_scratch_means_none(tmp_path: Path) -> None:
    spec, scenario = _trial(tmp_path / "scratch")
    writer = BatchWriter(Store(str(tmp_path / "store")), spec.run_id, batch_size=1)
    writer.add(run_trial(spec, scenario))
    path = checkpoint_path(spec)
    assert path is not None and not path.exists()
    assert writer.committed_trials == 1
    bare, scenario = _trial(None)
    assert checkpoint_path(bare) is None
    run_trial(bare, scenario)  # no scratch directory: nothing written anywhere
    assert not list(tmp_path.rglob("*.json"))
