"""Conversation simulation: a caller and the agent under test, text or real audio.

Public API:

* :func:`simulate` - one attempt, dispatching on ``config.mode``; never raises;
* :func:`simulate_text`, :func:`simulate_audio` - the two modes;
* :class:`SimulationConfig`;
* registries ``AGENTS`` (:mod:`tasks.simulate.agents`) and ``CALLERS``
  (:mod:`tasks.simulate.callers`);
* :mod:`tasks.simulate.wire.protocol` - the wire protocol (Twilio Media Streams JSON).

Layout, one subpackage per part of the conversation: ``wire`` (the agent protocol and its
servers), ``clocks`` (running one call in time, and its record), ``tools`` (the tool
bridge), ``reference`` (the reference agent), ``caller`` (the scripted caller's
behaviour), ``dialogue`` (what both sides read from what they heard), ``faults`` (fault
agents); the registries ``agents`` and ``callers``. Modules that serve several parts stay
here: ``config`` (:class:`SimulationConfig`), ``channel`` (the caller's perturbed line),
``meter`` (the compute an in-process agent charges to the virtual clock), ``voices`` (how
both parties sound and listen: voices, persona style, both sides' recognisers) and
``llm_prompts`` (the ``llm`` agent's and caller's prompts).
"""

from __future__ import annotations

from scenarios.models import Scenario
from tasks.records import AttemptRecord
from tasks.simulate.agents import AGENTS
from tasks.simulate.callers import CALLERS
from tasks.simulate.clocks.record import harness_failure
from tasks.simulate.clocks.text_mode import simulate_text
from tasks.simulate.config import SimulationConfig


def simulate(scenario: Scenario, config: SimulationConfig) -> AttemptRecord:
    """One attempt; a harness exception becomes status ``infra_error``/``harness_error``."""
    try:
        if config.mode == "audio":
            from tasks.simulate.clocks.audio_mode import simulate_audio

            return simulate_audio(scenario, config)
        return simulate_text(scenario, config)
    except Exception as exc:  # noqa: BLE001 - failures are data, never raised out of a sweep
        return harness_failure(scenario, config, exc)


__all__ = ["AGENTS", "CALLERS", "SimulationConfig", "simulate", "simulate_text"]
