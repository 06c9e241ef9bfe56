"""Turn trial results into table rows and commit them to the store in batches."""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

from tasks.stage_checkpoint import drop_validated
from tasks.store import Store, new_batch_id, rows_to_tables
from tasks.tables import (
    ATTEMPT_TABLES,
    entity_rows,
    event_rows,
    metric_rows,
    tool_call_rows,
    trial_row,
    turn_rows,
)
from tasks.trial_spec import TrialResult


def audio_rows(result_record: Any, batch: str) -> list[dict[str, Any]]:
    rows = []
    for ref in result_record.audio:
        path = Path(ref.path)
        if not path.is_file():
            continue
        rows.append(
            {
                "run_id": result_record.run_id,
                "batch": batch,
                "attempt_id": result_record.attempt_id,
                "track": ref.track,
                "format": "wav",
                "sample_rate": ref.sample_rate,
                "duration_s": ref.duration_s,
                "data": path.read_bytes(),
            }
        )
    return rows


def trial_result_rows(
    result: TrialResult, batch: str, rehearsal: bool = False
) -> dict[str, list[dict[str, Any]]]:
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    last = len(result.attempts) - 1
    for i, attempt in enumerate(result.attempts):
        record = attempt.record
        rows["trials"].append(
            trial_row(
                record, batch, result.spec.trial_key, i == last, attempt.validation, rehearsal
            )
        )
        rows["turns"] += turn_rows(record, batch)
        rows["tool_calls"] += tool_call_rows(record, batch)
        rows["events"] += event_rows(record, batch)
        rows["entities"] += entity_rows(record, batch)
        rows["metrics"] += metric_rows(record, batch, attempt.scores)
        rows["audio"] += audio_rows(record, batch)
    return rows


class BatchWriter:
    """Buffers finished trials and commits them atomically every ``batch_size`` trials.

    Audio files referenced by the records are read into the ``audio`` table at commit
    and their scratch directories removed, so memory holds at most one batch of audio.
    """

    def __init__(self, store: Store, run_id: str, batch_size: int, rehearsal: bool = False) -> None:
        self.store = store
        self.rehearsal = rehearsal  # every row says whether the run was a rehearsal
        self.run_id = run_id
        self.batch_size = batch_size
        self._pending: list[TrialResult] = []
        self.committed_trials = 0
        self.committed_attempts = 0

    def add(self, result: TrialResult) -> None:
        self._pending.append(result)
        if len(self._pending) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        batch = new_batch_id()
        merged: dict[str, list[dict[str, Any]]] = {name: [] for name in ATTEMPT_TABLES}
        for result in self._pending:
            for name, rows in trial_result_rows(result, batch, self.rehearsal).items():
                merged[name].extend(rows)
        self.store.write_batch(self.run_id, batch, rows_to_tables(merged))
        for result in self._pending:
            drop_validated(result.spec)  # stored: a resume no longer needs it
            self.committed_attempts += len(result.attempts)
            for attempt in result.attempts:
                for ref in attempt.record.audio:
                    shutil.rmtree(Path(ref.path).parent, ignore_errors=True)
        self.committed_trials += len(self._pending)
        self._pending.clear()
