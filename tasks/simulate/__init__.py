"""Conversation simulation: a caller and the agent under test, text or real audio.

Public API:

* :func:`simulate` - one attempt, dispatching on ``config.mode``; never raises;
* :func:`simulate_text`, :func:`simulate_audio` - the two modes;
* :class:`SimulationConfig`;
* registries ``AGENTS`` (:mod:`tasks.simulate.agents`) and ``CALLERS``
  (:mod:`tasks.simulate.callers`);
* :mod:`tasks.simulate.protocol` - the wire protocol (Twilio Media Streams JSON).
"""

from __future__ import annotations

from scenarios.models import Scenario
from tasks.records import AttemptRecord
from tasks.simulate.agents import AGENTS
from tasks.simulate.callers import CALLERS
from tasks.simulate.config import SimulationConfig
from tasks.simulate.record import harness_failure
from tasks.simulate.text_mode import simulate_text


def simulate(scenario: Scenario, config: SimulationConfig) -> AttemptRecord:
    """One attempt; a harness exception becomes status ``infra_error``/``harness_error``."""
    try:
        if config.mode == "audio":
            from tasks.simulate.audio_mode import simulate_audio

            return simulate_audio(scenario, config)
        return simulate_text(scenario, config)
    except Exception as exc:  # noqa: BLE001 - failures are data, never raised out of a sweep
        return harness_failure(scenario, config, exc)


__all__ = ["AGENTS", "CALLERS", "SimulationConfig", "simulate", "simulate_text"]
