"""A trial spec with defaults, for the tests that need one trial's settings and vary a few."""

from __future__ import annotations

from typing import Any

from tasks.config import CallerSpec, JudgeSpec, SystemSpec
from tasks.trial import TrialSpec


def trial_spec(system: SystemSpec | None = None, **fields: Any) -> TrialSpec:
    """An audio trial of the reference agent on the virtual clock; ``fields`` override."""
    base: dict[str, Any] = {
        "run_id": "r",
        "system": system or SystemSpec(name="s", agent="reference"),
        "domain": "airline",
        "scenario_id": "1.1.1",
        "condition": "clean",
        "trial": 0,
        "seed": 3,
        "mode": "audio",
        "clock": "virtual",
        "caller": CallerSpec(),
        "judge": JudgeSpec(),
        "max_attempts": 1,
        "max_duration_s": 60.0,
    }
    return TrialSpec(**{**base, **fields})
