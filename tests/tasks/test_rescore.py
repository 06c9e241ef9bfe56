"""Re-scoring a stored audio run (issue 30): the same judge reproduces the stored metric
values exactly, a subset adds a scoring of its own, the aggregates are recomputed, and
none of it simulates. The run is a real offline one: the reference agent over audio
(``audio_run`` in tests/tasks/conftest.py, simulated once per session; each test re-scores
its own copy)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import tasks.simulation as simulation_mod
from flows.cli import main
from tasks.config import BenchmarkConfig, SystemSpec
from tasks.rescore import ScoringRequest, rescore_run
from tasks.sources import load_source
from tasks.store import Store
from tasks.trial import expand_trials, run_trial
from tasks.writer import BatchWriter
from tests.tasks.conftest import AUDIO_RUN as RUN

COMPARED = [
    "score",
    "normalized_score",
    "passed",
    "threshold",
    "skipped",
    "error",
    "version",
    "judge",
    "prompt_hash",
    "details_json",
]


@pytest.fixture
def no_simulation(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any) -> None:
        raise AssertionError("a re-scoring simulated")

    monkeypatch.setattr(simulation_mod, "simulate_attempt", refuse)


def _rows(store: Store, scoring: str | None) -> pd.DataFrame:
    metrics = store.read("metrics", RUN)
    names = metrics["scoring"].fillna("run")
    return metrics[names == (scoring or "run")].set_index(["attempt_id", "metric"]).sort_index()


def test_the_same_judge_reproduces_every_stored_value(
    audio_run: Store, no_simulation: None
) -> None:
    store = audio_run
    trials = store.read("trials", RUN)
    assert (trials["mode"] == "audio").all() and store.read("audio", RUN)["data"].map(len).min()
    started = time.perf_counter()
    report = rescore_run(store, ScoringRequest(run_id=RUN, judge="offline"))
    seconds = time.perf_counter() - started
    print(f"re-scored {report.attempts} attempts, {report.rows} rows in {seconds:.2f} s")
    assert report.name == "offline-1" and report.attempts == len(trials)
    run, again = _rows(store, None), _rows(store, report.name)
    assert list(again.index) == list(run.index)
    pd.testing.assert_frame_equal(again[COMPARED], run[COMPARED])
    assert set(run["scoring"]) == {"run"} and run["scored_at"].isna().all()
    assert again["scored_at"].notna().all()


def test_a_run_stored_without_its_dbs_gets_them_back(audio_run: Store, no_simulation: None) -> None:
    """A store from before the trials rows carried the DBs: the initial DB comes from the
    scenario, the final one from replaying the stored tool calls (hashes checked)."""
    import pyarrow.parquet as pq

    old = audio_run  # this test's own copy: its trials parts are rewritten in place
    for part in old.parts("trials", RUN):
        table = pq.read_table(part)
        pq.write_table(table.drop_columns(["initial_db_json", "final_db_json"]), part)
    assert old.read("trials", RUN)["final_db_json"].isna().all()
    assert (old.read("trials", RUN)["n_tool_calls"] > 0).all()
    report = rescore_run(old, ScoringRequest(run_id=RUN, name="again"))
    run, again = _rows(old, None), _rows(old, report.name)
    pd.testing.assert_frame_equal(again[COMPARED], run[COMPARED])


def test_a_subset_is_a_scoring_of_its_own_and_views_layer_it(
    audio_run: Store, no_simulation: None
) -> None:
    store = audio_run
    report = rescore_run(store, ScoringRequest(run_id=RUN, metrics=["turn_taking"], name="tt-only"))
    rows = _rows(store, "tt-only")
    roots = {m.split(".")[0] for m in rows.index.get_level_values("metric")}
    # Only that metric, and the composites it moves (turn-taking is an EVA-X component).
    assert roots - {"EVA-A_pass", "EVA-X_pass", "EVA-overall_pass"} - {
        "EVA-A_mean",
        "EVA-X_mean",
        "EVA-overall_mean",
    } == {"turn_taking"}
    kept = store.read("trials", RUN).query("final and valid")["attempt_id"]
    assert report.attempts == len(kept)
    # The default view shows each metric's latest scoring; a named one, the view as of it.
    latest = store.query("SELECT metric, scoring FROM metrics", [RUN])
    assert set(latest.loc[latest["metric"] == "turn_taking", "scoring"]) == {"tt-only"}
    assert set(latest.loc[latest["metric"] == "faithfulness", "scoring"]) != {"tt-only"}
    con = store.connect([RUN], scoring="run")
    as_run = con.execute("SELECT DISTINCT coalesce(scoring, 'run') FROM metrics").fetchall()
    con.close()
    assert as_run == [("run",)]


def test_aggregate_recomputes_only_the_aggregates(audio_run: Store, no_simulation: None) -> None:
    store = audio_run
    before = store.read("aggregates", RUN)
    parts = {t: len(store.parts(t, RUN)) for t in ("trials", "metrics")}
    assert main(["aggregate", RUN, "--store", store.root]) == 0
    after = store.read("aggregates", RUN)
    pd.testing.assert_frame_equal(after, before)  # same judge, same values
    assert {t: len(store.parts(t, RUN)) for t in parts} == parts


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["score", "nope"], "no run 'nope'"),
        (["score", RUN, "--metrics", "turn_taking,nonsense"], "nonsense"),
        (["score", RUN, "--judge", "oracle"], "oracle"),
        (["score", RUN, "--name", "run"], "exists"),
        (["aggregate", "nope"], "no run 'nope'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    audio_run: Store, argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    parts = len(audio_run.parts("metrics", RUN))
    assert main([*argv, "--store", audio_run.root]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and says in err, err
    assert len(audio_run.parts("metrics", RUN)) == parts


def test_failed_only_judges_the_attempts_with_an_errored_metric(
    audio_run: Store, no_simulation: None, capsys: pytest.CaptureFixture[str]
) -> None:
    from tasks.scorings import latest_metrics

    latest = latest_metrics(audio_run.read("metrics", RUN))
    errored = latest[latest["parent"].isna() & latest["error"].notna()]["attempt_id"].nunique()
    argv = ["score", RUN, "--store", audio_run.root, "--failed-only", "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["attempts"] == errored


def _text_run(root: Path, run_id: str, score: bool) -> Store:
    config = BenchmarkConfig.model_validate(
        {
            "run_id": run_id,
            "store": str(root),
            "systems": [SystemSpec(name="text", agent="text")],
            "mode": "text",
            "scenarios": {"limit": 1},
            "conditions": ["clean"],
            "trials": 2,
            "score": score,
        }
    )
    from flows.benchmark import _write_run_row

    store = Store(config.store)
    _write_run_row(store, config)
    scenarios = {s.key: s for s in load_source(config.scenarios)}
    writer = BatchWriter(store, run_id, batch_size=4)
    for spec in expand_trials(config, list(scenarios.values()), None):
        writer.add(run_trial(spec, scenarios[spec.scenario_key]))
    writer.flush()
    return store


def test_no_score_leaves_the_judging_to_evaflow_score(tmp_path: Path) -> None:
    """run --no-score stores validation rows only; score then gives the scored run's values."""
    from tasks.metrics.base import VALIDATION_METRICS

    store = _text_run(tmp_path, "unscored", score=False)
    _text_run(tmp_path, "scored", score=True)
    stored = store.read("metrics", "unscored")
    assert set(stored.loc[stored["parent"].isna(), "metric"]) == set(VALIDATION_METRICS)
    assert main(["score", "unscored", "--store", str(tmp_path), "--name", "later"]) == 0

    def values(run_id: str, scoring: str) -> pd.DataFrame:
        frame = store.read("metrics", run_id)
        frame = frame[frame["scoring"].fillna("run") == scoring]
        frame = frame.assign(attempt_id=frame["attempt_id"].str.split("/", n=1).str[1])
        return frame.set_index(["attempt_id", "metric"]).sort_index()[COMPARED]

    later, scored = values("unscored", "later"), values("scored", "run")
    pd.testing.assert_frame_equal(later, scored)
    assert store.read("aggregates", "unscored")["pass_at_1"].notna().any()
