"""Helpers of the reliability suite: the flow's loop without Prefect, crash injection, and
the store checks every kill-and-resume test makes (the fake trial is in ``fakes``).

``drive_run`` calls the same pure functions in the same order as
``flows.benchmark.run_benchmark`` (recover -> expand -> skip stored trial keys -> run each
pending trial -> ``BatchWriter`` -> ``summarize_run``), so a crash injected here exercises
the store, the writer and resume exactly as in the flow, at a fraction of Prefect's cost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

from scenarios.models import Scenario
from tasks.config import BenchmarkConfig
from tasks.store import Store
from tasks.tables import ATTEMPT_TABLES
from tasks.trial import TrialResult, TrialSpec, expand_trials
from tasks.writer import BatchWriter
from tests.reliability.fakes import fake_trial, tiny_scenarios

TrialFn = Callable[[TrialSpec, Scenario], TrialResult]


class SimulatedCrash(RuntimeError):
    """Stands for the process dying at this point."""


def drive_run(config: BenchmarkConfig, scenarios: list[Scenario], trial_fn: TrialFn) -> int:
    """Run or resume ``config`` like the flow does; returns how many trials it ran."""
    from tasks.summary import summarize_run

    assert config.run_id, "give the run an id so it can be resumed"
    run_id = config.run_id
    store = Store(config.store)
    store.recover(run_id)
    scratch = str(Path(config.store).resolve() / "_scratch" / run_id)
    by_key = {s.key: s for s in scenarios}
    specs = expand_trials(config, scenarios, scratch)
    done = store.completed_trial_keys(run_id)
    pending = [s for s in specs if s.trial_key not in done]
    writer = BatchWriter(store, run_id, config.batch_size)
    for spec in pending:
        writer.add(trial_fn(spec, by_key[spec.scenario_key]))
    writer.flush()
    summarize_run(store, run_id)
    return len(pending)


# --------------------------------------------------------------------------- crashes


CRASH_TARGETS = ("part", "torn", "rename", "flush", "committed", "trial", "aggregate")


def _hooks() -> dict[str, tuple[Any, str, bool]]:
    """target -> (owner, attribute, crash before the call?) for the patchable targets."""
    import fsspec.implementations.local as local

    import tasks.summary

    return {
        "part": (Store, "_write_atomic", True),
        "rename": (local.LocalFileSystem, "mv", True),
        "flush": (BatchWriter, "flush", True),
        "committed": (Store, "write_batch", False),
        "aggregate": (tasks.summary, "summarize_run", True),
    }


@contextmanager
def crash_at(target: str, nth: int) -> Iterator[dict[str, int]]:
    """Make the ``nth`` call of ``target`` die (raise ``SimulatedCrash``); 0 only counts.

    Targets: ``part`` (before a Parquet part is written), ``torn`` (half of a part's bytes
    written to its temporary file), ``rename`` (temporary file complete, not renamed),
    ``flush`` (a batch about to be committed), ``committed`` (right after a batch's commit,
    before the writer's bookkeeping), ``aggregate`` (all trials stored, aggregates not).
    ``trial`` (dying while simulating) is :func:`crashing_trials`.
    """
    calls = {"n": 0}

    def tick() -> bool:
        calls["n"] += 1
        return calls["n"] == nth

    with pytest.MonkeyPatch.context() as mp:
        if target == "torn":
            mp.setattr(Store, "_write_atomic", _torn_writer(Store._write_atomic, tick, nth))
        elif target in _hooks():
            owner, attr, before = _hooks()[target]
            mp.setattr(owner, attr, _dying(getattr(owner, attr), tick, before, f"{target} #{nth}"))
        elif target != "trial":
            raise ValueError(f"unknown crash target {target!r}; valid: {CRASH_TARGETS}")
        yield calls


def _dying(original: Any, tick: Callable[[], bool], before: bool, label: str) -> Any:
    def patched(*args: Any, **kwargs: Any) -> Any:
        if before and tick():
            raise SimulatedCrash(label)
        result = original(*args, **kwargs)
        if not before and tick():
            raise SimulatedCrash(label)
        return result

    return patched


def _torn_writer(original: Any, tick: Callable[[], bool], nth: int) -> Any:
    def torn(self: Store, path: str, table: Any) -> None:
        if not tick():
            return original(self, path, table)
        write_half(self, path, table)
        raise SimulatedCrash(f"torn #{nth}")

    return torn


def write_half(store: Store, path: str, table: Any) -> None:
    """What a writer killed mid-write leaves: the first half of a part's temporary file."""
    import io

    from tasks.store import PART_SUFFIX, TMP_SUFFIX

    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    data = buf.getvalue()
    store.fs.makedirs(str(Path(path).parent), exist_ok=True)
    with store.fs.open(path[: -len(PART_SUFFIX)] + ".torn" + TMP_SUFFIX, "wb") as fh:
        fh.write(data[: max(1, len(data) // 2)])


def count_calls(config: BenchmarkConfig, scenarios: list[Scenario]) -> dict[str, int]:
    """How often each crash target is reached in one uninterrupted run (into ``config``)."""
    counters: dict[str, dict[str, int]] = {}
    with pytest.MonkeyPatch.context() as mp:
        for target, (owner, attr, _before) in _hooks().items():
            counters[target] = {"n": 0}
            mp.setattr(owner, attr, _counting(getattr(owner, attr), counters[target]))
        trials = {"n": 0}
        drive_run(config, scenarios, _counting(fake_trial, trials))
    counts = {t: c["n"] for t, c in counters.items()}
    return {**counts, "torn": counts["part"], "trial": trials["n"]}


def _counting(original: Any, counter: dict[str, int]) -> Any:
    def counted(*args: Any, **kwargs: Any) -> Any:
        counter["n"] += 1
        return original(*args, **kwargs)

    return counted


def crashing_trials(nth: int, trial_fn: TrialFn = fake_trial) -> TrialFn:
    """A trial function whose ``nth`` call dies before returning."""
    count = {"n": 0}

    def run(spec: TrialSpec, scenario: Scenario) -> TrialResult:
        count["n"] += 1
        if count["n"] == nth:
            raise SimulatedCrash(f"trial #{nth}")
        return trial_fn(spec, scenario)

    return run


# --------------------------------------------------------------------------- checks


def parquet_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.parquet") if "_quarantine" not in p.parts)


def assert_store_sound(root: Path, run_id: str, expected_keys: set[str]) -> None:
    """Every trial stored exactly once, ids unique, no debris, every file fully readable."""
    for path in parquet_files(root):
        pq.read_table(path)  # raises on any unreadable file
    leftovers = [p for p in root.rglob("*.tmp") if "_quarantine" not in p.parts]
    assert not leftovers, f"temporary files left behind: {leftovers}"
    store = Store(str(root))
    trials = store.read("trials", run_id)
    assert set(trials["trial_key"]) == expected_keys
    assert trials["attempt_id"].is_unique, "an attempt was stored twice"
    batches = trials.groupby("trial_key")["batch"].nunique()
    assert (batches == 1).all(), f"trials stored in several batches: {batches[batches > 1]}"
    finals = trials.groupby("trial_key")["final"].sum()
    assert (finals == 1).all(), "every trial must have exactly one final attempt"
    committed = set(trials["batch"])
    for table in ATTEMPT_TABLES:
        for part in store.parts(table, run_id):
            assert Path(part).stem in committed, f"uncommitted part left visible: {part}"


def table_contents(root: Path, run_id: str) -> dict[str, pd.DataFrame]:
    """Every table of a run without batch ids, rows in a canonical order."""
    store = Store(str(root))
    out = {}
    for table in (*ATTEMPT_TABLES, "aggregates"):
        frame = store.read(table, run_id).drop(columns=["batch"])
        keys = [repr(tuple(row)) for row in frame.itertuples(index=False)]
        order = sorted(range(len(keys)), key=keys.__getitem__)
        out[table] = frame.iloc[order].reset_index(drop=True)
    return out


def assert_same_contents(got: dict[str, pd.DataFrame], want: dict[str, pd.DataFrame]) -> None:
    for table, frame in want.items():
        pd.testing.assert_frame_equal(got[table], frame, check_dtype=False, obj=table)


# --------------------------------------------------------------------------- configs, children


def base_config(store: Path, run_id: str = "kill-run", batch_size: int = 3) -> BenchmarkConfig:
    """16 trials (4 scenarios x 2 conditions x 2 trials) committed 3 at a time."""
    return BenchmarkConfig(
        run_id=run_id,
        store=str(store),
        conditions=["clean", "noise"],
        trials=2,
        max_attempts=3,
        batch_size=batch_size,
        report=False,
    )


def child_main(store: str, mode: str, nth: int) -> None:
    """Body of a child process the parent SIGKILLs (``python -c`` entry point).

    ``mid_write``: the ``nth`` part write leaves half a temporary file, then the child
    announces ``CRASH-POINT`` and waits to be killed. ``anytime``: trials take a little
    time each and the parent kills the child whenever its seeded delay runs out.
    """
    import sys
    import time

    config = base_config(Path(store))
    trial_fn: TrialFn = fake_trial
    if mode == "mid_write":
        calls = {"n": 0}
        original = Store._write_atomic

        def write(self: Store, path: str, table: Any) -> None:
            calls["n"] += 1
            if calls["n"] != nth:
                return original(self, path, table)
            write_half(self, path, table)
            print("CRASH-POINT", flush=True)
            time.sleep(120)

        Store._write_atomic = write  # type: ignore[method-assign]
    else:

        def trial_fn(spec: TrialSpec, scenario: Scenario) -> TrialResult:
            time.sleep(0.03)
            return fake_trial(spec, scenario)

    print("STARTED", flush=True)
    drive_run(config, tiny_scenarios(), trial_fn)
    print("FINISHED", flush=True)
    sys.stdout.flush()
