"""Build a ``SimulationConfig`` from a trial spec and run one attempt."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from scenarios.models import Scenario
from tasks.records import AttemptRecord
from tasks.trial_spec import TrialSpec, audio_dir_for, stable_seed

# Agent params with their own SimulationConfig fields; everything else goes to agent_params.
_AGENT_FIELDS = {
    "stt": "agent_stt",
    "voice": "agent_voice",
    "timeout_s": "agent_timeout_s",
    "virtual_timing": "virtual_timing",
}
_CALLER_FIELDS = {"stt": "caller_stt", "voice": "caller_voice", "tts": "caller_tts"}


def cache_dir() -> Path:
    return Path(os.environ.get("EVAFLOW_CACHE", Path.home() / ".cache" / "evaflow"))


def attempt_seed(spec: TrialSpec, attempt: int) -> int:
    """Attempt 1 uses the trial seed (agent-independent); regenerations draw fresh ones."""
    if attempt == 1:
        return spec.seed
    return stable_seed(spec.seed, "attempt", attempt)


def _split(params: dict[str, Any], fields: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    own = {fields[k]: v for k, v in params.items() if k in fields}
    rest = {k: v for k, v in params.items() if k not in fields}
    return own, rest


def _condition(spec: TrialSpec) -> Any:
    if not spec.conditions_file:
        return spec.condition
    from perturbations import load_conditions_yaml

    custom = {c.name: c for c in load_conditions_yaml(Path(spec.conditions_file))}
    return custom.get(spec.condition, spec.condition)


def simulation_config(spec: TrialSpec, attempt: int) -> Any:
    from tasks.simulate.config import SimulationConfig

    agent_own, agent_rest = _split(dict(spec.system.params), _AGENT_FIELDS)
    caller_own, caller_rest = _split(dict(spec.caller.params), _CALLER_FIELDS)
    audio_dir = audio_dir_for(spec, attempt) if spec.mode == "audio" else None
    return SimulationConfig(
        run_id=spec.run_id,
        system=spec.system.name,
        agent=spec.system.agent,
        agent_params=agent_rest,
        caller=spec.caller.name,
        caller_params=caller_rest,
        mode=spec.mode,  # type: ignore[arg-type]
        clock=spec.clock,  # type: ignore[arg-type]
        condition=_condition(spec),
        trial=spec.trial,
        attempt=attempt,
        seed=attempt_seed(spec, attempt),
        max_duration_s=spec.max_duration_s,
        audio_dir=audio_dir,
        cache_dir=cache_dir(),
        **agent_own,
        **caller_own,
    )


def simulate_attempt(spec: TrialSpec, scenario: Scenario, attempt: int) -> AttemptRecord:
    from tasks.simulate import simulate

    record = simulate(scenario, simulation_config(spec, attempt))
    # The store keys rows by the trial's ids, whatever the simulator called them.
    record.attempt_id = spec.attempt_id(attempt)
    record.run_id = spec.run_id
    record.system = spec.system.name
    record.condition = spec.condition
    record.trial = spec.trial
    record.attempt = attempt
    return record
