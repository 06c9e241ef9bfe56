"""The llm caller under a behaviour persona: the persona's text is who the model plays."""

from __future__ import annotations

from functools import cache

from perturbations.behavior import ELDERLY_SLOW
from scenarios.loader import load_scenario_dir
from scenarios.models import Scenario
from tasks.simulate.callers import build_caller
from tasks.simulate.callers.llm import LLMCaller
from tasks.simulate.config import SimulationConfig
from tasks.simulate.llm_prompts import caller_system_prompt
from tasks.sources import BUILTIN_PACK


@cache
def scenario() -> Scenario:
    return load_scenario_dir(BUILTIN_PACK)[0]


def built(condition: str) -> LLMCaller:
    params = {"base_url": "http://127.0.0.1:9/v1", "model": "fake-caller"}
    config = SimulationConfig(caller="llm", caller_params=params, condition=condition)
    caller = build_caller("llm", scenario(), config)
    assert isinstance(caller, LLMCaller)
    return caller


def test_persona_text_replaces_the_record_persona() -> None:
    record_persona = str(scenario().user_config.get("user_persona") or "").strip()
    assert record_persona
    prompt = caller_system_prompt(scenario(), ELDERLY_SLOW.persona_text)
    assert f"# Your personality\n{ELDERLY_SLOW.persona_text}" in prompt
    assert record_persona not in prompt
    assert record_persona in caller_system_prompt(scenario())


def test_llm_caller_plays_the_condition_persona() -> None:
    assert ELDERLY_SLOW.persona_text in built("elderly_slow+noise").system_prompt
    assert built("noise").system_prompt == caller_system_prompt(scenario())
