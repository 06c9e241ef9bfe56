"""A trial's validated attempts, kept on disk until its batch is committed, so a run killed
while judging resumes by judging them instead of simulating the trial again.

A trial is stored only when its ``run-trial`` task has returned and its batch committed
(:class:`tasks.writer.BatchWriter`); everything the stages before judging produced lived
in the worker's memory. Simulation is the dear stage (a real-time call, paid providers),
judging the cheaper and often the slower one (LLM judges, rate limits): so the attempt
loop's result is written here before the kept attempt is judged, next to the audio files
its records point to (the run's scratch directory, which only a local store has), and
removed when the trial is committed.

A checkpoint is used only when it is whole and belongs to the same trial spec; anything
else (a file torn by a kill, another configuration) is ignored and the trial simulated
again, as before. Written with NaN and infinities kept (``inf_nan_mode='constants'``), so
the judged values of a resumed trial are those of an uninterrupted run.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pydantic_core
from pydantic import ValidationError

from tasks.trial_spec import TrialResult, TrialSpec

CHECKPOINT_DIR = "validated"
PARTIAL_SUFFIX = ".partial"


def checkpoint_path(spec: TrialSpec) -> Path | None:
    """Where ``spec``'s validated attempts are kept; None without a scratch directory."""
    if not spec.audio_dir:
        return None
    return Path(spec.audio_dir) / CHECKPOINT_DIR / (spec.trial_key.replace("/", "__") + ".json")


def save_validated(result: TrialResult) -> None:
    """Write the trial's validated attempts atomically (a kill leaves the old file or none)."""
    path = checkpoint_path(result.spec)
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + PARTIAL_SUFFIX)
    # A model serialises by its own config (NaN as null): dump to Python values first.
    data = result.model_dump(mode="python", round_trip=True)
    partial.write_bytes(pydantic_core.to_json(data, inf_nan_mode="constants"))
    os.replace(partial, path)


def load_validated(spec: TrialSpec) -> TrialResult | None:
    """The validated attempts a killed run left for ``spec``, or None."""
    path = checkpoint_path(spec)
    if path is None or not path.is_file():
        return None
    try:
        result = TrialResult.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError):
        return None
    return result if result.spec == spec and result.attempts else None


def drop_validated(spec: TrialSpec) -> None:
    """Forget the checkpoint of a committed trial."""
    path = checkpoint_path(spec)
    if path is not None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
