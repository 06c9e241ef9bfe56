"""The caller's voice: persona defaults and what a configured voice keeps of them."""

from __future__ import annotations

from perturbations.audio import VoiceSpec
from scenarios.loader import load_scenario_dir
from tasks.simulate.config import SimulationConfig
from tasks.simulate.voices import CallerStyle, caller_voice
from tasks.sources import BUILTIN_PACK

SLOW = CallerStyle(rate_wpm=120)


def test_a_configured_voice_without_a_rate_keeps_the_personas_rate() -> None:
    scenario = load_scenario_dir(BUILTIN_PACK)[0]
    # As a run config's caller params give it: a dict naming the voice only.
    config = SimulationConfig(caller_voice={"voice": "en-gb", "pitch": 30})
    voice = caller_voice(scenario, SLOW, config.caller_voice)
    assert (voice.voice, voice.pitch, voice.rate_wpm) == ("en-gb", 30, 120)
    assert caller_voice(scenario, SLOW, VoiceSpec(voice="en-gb", rate_wpm=200)).rate_wpm == 200
    assert caller_voice(scenario, SLOW, None).rate_wpm == 120
