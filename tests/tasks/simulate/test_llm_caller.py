"""The ``llm`` caller through LiteLLM against a local chat-completions server (no network,
no key), reached through a deployment's ``api_base`` over real HTTP on loopback."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from scenarios.loader import load_eva_scenarios
from scenarios.models import Scenario
from tasks.simulate import SimulationConfig, simulate
from tasks.simulate.callers import CALLERS, build_caller
from tasks.simulate.callers.llm import CallerModelError, LLMCaller
from tasks.simulate.llm_prompts import (
    CALLER_ACCEPTED,
    CALLER_FINAL_GOODBYE,
    CALLER_REFUSAL_GOODBYE,
    CALLER_REFUSAL_INFORMATION,
    caller_system_prompt,
)
from tests.fake_llm import (
    FakeChatServer,
    FakeResponse,
    fake_llm_fixture,  # noqa: F401 - registers the fake_llm fixture
    text_reply,
    tool_reply,
    trace_caller_model,
)

GOODBYE_TEXT = "Great, that's everything. Thank you, goodbye."


@pytest.fixture(scope="module")
def airline(eva_root: Path) -> Scenario:
    return load_eva_scenarios(eva_root, record_ids=["airline/1.1.2"])[0]


def caller_params(server: FakeChatServer, **extra: Any) -> dict[str, Any]:
    return {"base_url": server.base_url, "model": "fake-caller", **extra}


def make_caller(scenario: Scenario, server: FakeChatServer, **extra: Any) -> LLMCaller:
    config = SimulationConfig(caller="llm", caller_params=caller_params(server, **extra))
    caller = build_caller("llm", scenario, config)
    assert isinstance(caller, LLMCaller)
    return caller


def test_registered() -> None:
    assert "llm" in CALLERS.names()


def test_prompt_carries_goal_decision_tree_information_and_persona(airline: Scenario) -> None:
    prompt = caller_system_prompt(airline)
    goal = airline.user_goal
    tree = goal["decision_tree"]

    assert goal["high_level_user_goal"] in prompt
    for key in ("must_have_criteria", "negotiation_behavior", "edge_cases"):
        for item in tree[key]:
            assert item in prompt
    for key in ("resolution_condition", "failure_condition", "escalation_behavior"):
        assert tree[key] in prompt
    for value in goal["information_required"].values():
        if isinstance(value, str):
            assert value in prompt
    assert goal["starting_utterance"] in prompt
    assert airline.user_config["user_persona"] in prompt
    assert airline.user_config["name"] in prompt
    assert "end_call" in prompt and "goodbye" in prompt.lower()


def test_opens_with_the_starting_utterance_then_asks_the_model(
    airline: Scenario, fake_llm: FakeChatServer
) -> None:
    fake_llm.push(text_reply("Z K 3 F F W, Rodriguez."))
    caller = make_caller(airline, fake_llm)

    first = caller.respond("Hello! How can I help you today?")
    assert first.text == airline.user_goal["starting_utterance"] and not first.end_call
    assert not fake_llm.requests
    second = caller.respond("May I have your confirmation number and last name?")
    assert second.text == "Z K 3 F F W, Rodriguez." and not second.end_call

    (request,) = fake_llm.requests
    assert request.body["tools"][0]["function"]["name"] == "end_call"
    assert request.messages[0]["content"] == caller_system_prompt(airline)
    # The agent speaks as "user", the caller as "assistant".
    assert [m["role"] for m in request.messages[1:]] == ["user", "assistant", "user"]
    assert request.body["seed"] == 0 and request.body["temperature"] == 0.7
    (call,) = [e.data for e in caller.events if e.kind == "llm_call"]
    assert (call["model"], call["attempts"], call["error"]) == ("fake-caller", 1, None)
    assert call["input_tokens"] == 100 and call["output_tokens"] == 10


def test_extra_body_reaches_the_request_and_its_seed_wins(
    airline: Scenario, fake_llm: FakeChatServer
) -> None:
    fake_llm.push(text_reply("Hello."))
    extra = {"seed": 42, "top_k": 5}
    caller = make_caller(airline, fake_llm, scripted_opening=False, extra_body=extra)
    caller.respond("Hello?")

    body = fake_llm.requests[0].body
    assert (body["seed"], body["top_k"]) == (42, 5)


def test_hangs_up_through_end_call_after_goodbye(
    airline: Scenario, fake_llm: FakeChatServer
) -> None:
    fake_llm.push(tool_reply([("end_call", {"reason": "resolved"})], text=GOODBYE_TEXT))
    caller = make_caller(airline, fake_llm, scripted_opening=False)
    turn = caller.respond("Your flight is changed. Anything else?")

    assert turn.end_call and turn.kind == "closing" and turn.text == GOODBYE_TEXT
    assert caller.history[-1] == {
        "role": "tool",
        "tool_call_id": caller.history[-2]["tool_calls"][0]["id"],
        "content": CALLER_ACCEPTED,
    }


def test_end_call_without_goodbye_is_refused_and_the_call_goes_on(
    airline: Scenario, fake_llm: FakeChatServer
) -> None:
    fake_llm.push(
        tool_reply([("end_call", {})], text="Okay, thanks."),
        tool_reply([("end_call", {})], text="Bye now."),
    )
    caller = make_caller(airline, fake_llm, scripted_opening=False)

    refused = caller.respond("Is there anything else?")
    assert refused.text == "Okay, thanks." and not refused.end_call
    assert caller.history[-1]["content"] == CALLER_REFUSAL_GOODBYE
    accepted = caller.respond("You're welcome.")
    assert accepted.end_call and accepted.text == "Bye now."


def test_no_hang_up_in_the_turn_that_gives_information(
    airline: Scenario, fake_llm: FakeChatServer
) -> None:
    fake_llm.push(tool_reply([("end_call", {})], text="It's Z K three F F W. Goodbye."))
    caller = make_caller(airline, fake_llm, scripted_opening=False)
    turn = caller.respond("What is your confirmation number?")

    assert not turn.end_call and "Z K three F F W" in turn.text
    assert caller.history[-1]["content"] == CALLER_REFUSAL_INFORMATION


def test_silent_hang_up_says_goodbye(airline: Scenario, fake_llm: FakeChatServer) -> None:
    fake_llm.push(tool_reply([("end_call", {})]))
    caller = make_caller(airline, fake_llm, scripted_opening=False)
    turn = caller.respond("Goodbye!")

    assert turn.end_call and turn.text == CALLER_FINAL_GOODBYE


def test_ends_the_call_with_the_reference_agent_in_text_mode(
    airline: Scenario, fake_llm: FakeChatServer
) -> None:
    fake_llm.fallback = trace_caller_model(airline)
    config = SimulationConfig(caller="llm", caller_params=caller_params(fake_llm))
    record = simulate(airline, config)

    assert record.status == "ok" and record.end_reason == "goodbye", record.error
    assert record.caller_ended
    assert record.turns[-1].role == "user" and "goodbye" in record.turns[-1].intended_text.lower()
    assert record.final_db_hash == record.expected_db_hash
    assert any(e.kind == "end_call" and e.source == "caller" for e in record.events)


def test_caller_model_failure_is_a_harness_error(
    airline: Scenario, fake_llm: FakeChatServer
) -> None:
    fake_llm.fallback = FakeResponse(503, {"error": "down"})
    params = caller_params(fake_llm, max_retries=1)
    record = simulate(airline, SimulationConfig(caller="llm", caller_params=params))

    assert record.status == "infra_error" and record.end_reason == "harness_error"
    assert record.error is not None and "llm caller" in record.error and "503" in record.error
    assert "ServiceUnavailableError" in record.error
    assert len(fake_llm.requests) == 2  # LiteLLM's one retry
    caller = make_caller(airline, fake_llm, scripted_opening=False, max_retries=0)
    with pytest.raises(CallerModelError, match="ServiceUnavailableError"):
        caller.respond("Hello?")
    (call,) = [e.data for e in caller.events if e.kind == "llm_call"]
    assert call["attempts"] == 1 and "503" in call["error"]


def test_a_missing_key_variable_is_a_harness_error_without_a_request(
    airline: Scenario, fake_llm: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVAFLOW_TEST_CALLER_KEY", raising=False)
    params = caller_params(fake_llm, api_key_env="EVAFLOW_TEST_CALLER_KEY")
    record = simulate(airline, SimulationConfig(caller="llm", caller_params=params))

    assert record.status == "infra_error" and record.end_reason == "harness_error"
    assert record.error is not None and "EVAFLOW_TEST_CALLER_KEY is not set" in record.error
    assert not fake_llm.requests


@pytest.mark.live
def test_live_caller_answers(airline: Scenario) -> None:
    """Needs EVAFLOW_LIVE_LLM_BASE_URL, EVAFLOW_LIVE_LLM_MODEL, optional ..._KEY_ENV."""
    base_url = os.environ.get("EVAFLOW_LIVE_LLM_BASE_URL")
    if not base_url:
        pytest.skip("EVAFLOW_LIVE_LLM_BASE_URL not set")
    params = {
        "base_url": base_url,
        "model": os.environ.get("EVAFLOW_LIVE_LLM_MODEL", "gpt-4o-mini"),
        "api_key_env": os.environ.get("EVAFLOW_LIVE_LLM_KEY_ENV", "OPENAI_API_KEY"),
        "scripted_opening": False,
    }
    caller = build_caller("llm", airline, SimulationConfig(caller="llm", caller_params=params))
    turn = caller.respond("Hello! How can I help you today?")
    assert turn.text and not turn.end_call
