"""What a trial is: its spec (one cell of a run), its attempts' results, its seeds.

Pure data (no Prefect, no simulation): the trial loop (``tasks.trial``), the glue to the
simulator (``tasks.simulation``), scoring and the writer all import it from here, so
none of them imports the loop that calls them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tasks.config import CallerSpec, JudgeSpec, SystemSpec
from tasks.records import AttemptRecord, MetricScore


class TrialSpec(BaseModel):
    """One (system, scenario, condition, trial) cell of a run."""

    model_config = ConfigDict(frozen=True)
    run_id: str
    system: SystemSpec
    domain: str
    scenario_id: str
    condition: str
    trial: int = Field(ge=0)
    seed: int = Field(
        description="Derived from (seed, scenario, condition, trial): agent-independent"
    )
    mode: str
    clock: str
    caller: CallerSpec
    judge: JudgeSpec
    max_attempts: int
    max_duration_s: float
    metrics: list[str] | None = None
    audio_dir: str | None = Field(default=None, description="Where attempt audio is written")
    conditions_file: str | None = None
    score: bool = Field(default=True, description="Judge the kept attempt (run --no-score: no)")

    @property
    def scenario_key(self) -> str:
        return f"{self.domain}/{self.scenario_id}"

    @property
    def system_key(self) -> str:
        """The system's label and a digest of its agent and parameters, so that a trial of
        one configuration of a system is never taken for a trial of another on resume."""
        setup = self.system.model_dump(mode="json", exclude={"name"})
        encoded = json.dumps(setup, sort_keys=True, default=str).encode("utf-8")
        return f"{self.system.name}@{hashlib.sha256(encoded).hexdigest()[:8]}"

    @property
    def trial_key(self) -> str:
        return "/".join(
            [self.system_key, self.domain, self.scenario_id, self.condition, f"t{self.trial}"]
        )

    def attempt_id(self, attempt: int) -> str:
        return f"{self.run_id}/{self.trial_key}/a{attempt}"


class AttemptResult(BaseModel):
    record: AttemptRecord
    scores: list[MetricScore] = Field(default_factory=list)
    validation: dict[str, Any] = Field(default_factory=dict)


class TrialResult(BaseModel):
    spec: TrialSpec
    attempts: list[AttemptResult]

    @property
    def final(self) -> AttemptResult:
        return self.attempts[-1]


def stable_seed(*parts: object) -> int:
    """A 31-bit seed from the parts, stable across processes and platforms."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % (2**31)


def trial_seed(seed: int, scenario_key: str, condition: str, trial: int) -> int:
    """Same for every agent: the same trial hears the same caller audio for every system."""
    return stable_seed(seed, scenario_key, condition, trial)


def audio_dir_for(spec: TrialSpec, attempt: int) -> Path | None:
    if not spec.audio_dir:
        return None
    safe = spec.attempt_id(attempt).replace("/", "__")
    return Path(spec.audio_dir) / safe
