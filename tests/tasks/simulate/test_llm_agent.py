"""The ``llm`` agent through LiteLLM against local chat-completions servers (no network, no
key): the scripted ``tests.fake_llm`` server and the OpenAI stand-in
(:mod:`tasks.systems.standins.openai_http`), reached through a deployment's ``api_base``
over real HTTP on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scenarios.loader import load_eva_scenarios
from scenarios.models import Scenario
from scenarios.schema import openai_tool_schemas
from tasks.simulate import SimulationConfig, simulate
from tasks.simulate.agents import AGENTS, AgentContext, get_agent
from tasks.simulate.agents.llm import LLMAgentParams, LLMAgentSession
from tasks.simulate.clocks.record import new_gateway
from tasks.simulate.llm_prompts import (
    GENERIC_ERROR_SENTENCE,
    GREETING,
    INAUDIBLE,
    TRANSFER_RESPONSE,
    TRANSFER_SENTENCE,
    spoken_now,
)
from tasks.systems.standins.brain import next_message
from tasks.systems.standins.openai_http import FakeOpenAIHTTP
from tests.fake_llm import (
    FakeChatServer,
    FakeResponse,
    fake_llm_fixture,  # noqa: F401 - registers the fake_llm fixture
    text_reply,
    tool_reply,
    trace_agent_model,
)

KEY_ENV = "EVAFLOW_TEST_LLM_AGENT_KEY"
SECRET = "sk-test-0123456789abcdef-do-not-store"


@pytest.fixture(scope="module")
def airline(eva_root: Path) -> Scenario:
    return load_eva_scenarios(eva_root, record_ids=["airline/1.1.2"])[0]


def agent_params(server: FakeChatServer, **extra: Any) -> dict[str, Any]:
    return {"base_url": server.base_url, "model": "fake-model", **extra}


def header(request: Any, name: str) -> str | None:
    return {k.lower(): v for k, v in request.headers.items()}.get(name)


def session(scenario: Scenario, server: FakeChatServer, **extra: Any) -> LLMAgentSession:
    config = SimulationConfig(agent="llm", agent_params=agent_params(server, **extra))
    ctx = AgentContext(scenario=scenario, tools=new_gateway(scenario), config=config)
    agent = get_agent("llm", "text")
    built = agent.text_session(ctx)
    assert isinstance(built, LLMAgentSession)
    return built


def test_registered_for_text_and_audio() -> None:
    assert "llm" in AGENTS.names()
    assert get_agent("llm", "audio").modes == frozenset({"text", "audio"})


def test_completes_airline_record_with_golden_tool_calls(
    airline: Scenario, fake_llm: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    fake_llm.fallback = trace_agent_model(airline)
    params = agent_params(fake_llm, api_key_env=KEY_ENV, history_user_messages=1000)
    record = simulate(airline, SimulationConfig(agent="llm", agent_params=params))

    assert record.status == "ok" and record.end_reason == "goodbye", record.error
    assert record.final_db_hash == record.expected_db_hash
    trace_tools = [e["tool_name"] for e in airline.expected_trace if e["event_type"] == "tool_call"]
    assert [c.tool_name for c in record.tool_calls] == trace_tools
    assert record.turns[0].intended_text == GREETING
    # Every request went with the key from the env var, the domain's tools and our prompt.
    assert fake_llm.requests and fake_llm.overruns == 0
    for request in fake_llm.requests:
        assert header(request, "authorization") == f"Bearer {SECRET}"
        assert request.body["tools"] == openai_tool_schemas(airline.agent)
        assert request.messages[0]["role"] == "system"
    # Token usage and latency of each model call are stored with the attempt.
    calls = [e for e in record.events if e.kind == "llm_call"]
    assert len(calls) == len(fake_llm.requests)
    assert all(e.data["input_tokens"] > 0 and e.data["latency_s"] > 0 for e in calls)
    assert {(e.data["model"], e.data["model_name"], e.data["attempts"]) for e in calls} == {
        ("fake-model", "fake-model", 1)
    }
    assert all(isinstance(e.data["cost_usd"], float | None) for e in calls)  # LiteLLM's
    # The key is nowhere in what gets stored.
    assert SECRET not in record.model_dump_json()
    assert KEY_ENV in json.dumps(params)


def test_system_prompt_frames_a_phone_call_with_date_role_and_policy(
    airline: Scenario, fake_llm: FakeChatServer
) -> None:
    fake_llm.push(text_reply("Sure, what is your confirmation number?"))
    agent = session(airline, fake_llm)
    agent.greet()
    reply = agent.respond("I need to change my flight.")

    assert reply.text == "Sure, what is your confirmation number?"
    system = fake_llm.requests[0].messages[0]["content"]
    assert "phone" in system.lower()
    assert spoken_now(airline.current_date_time) in system
    assert "2026" in spoken_now(airline.current_date_time)
    assert airline.agent.role.strip() in system
    assert airline.agent.instructions.strip() in system
    assert "markdown" in system.lower()
    history = fake_llm.requests[0].messages[1:]
    assert history == [
        {"role": "assistant", "content": GREETING},
        {"role": "user", "content": "I need to change my flight."},
    ]


def test_http_500_then_success_is_retried_by_litellm(
    airline: Scenario, fake_llm: FakeChatServer
) -> None:
    fake_llm.push(FakeResponse(500, {"error": "overloaded"}), text_reply("How can I help?"))
    agent = session(airline, fake_llm)
    agent.greet()

    assert agent.respond("Hello?").text == "How can I help?"
    assert len(fake_llm.requests) == 2
    call = next(e for e in agent.events if e.kind == "llm_call")
    assert call.data["attempts"] == 2 and call.data["error"] is None


def test_garbage_response_speaks_generic_error_and_the_call_goes_on(
    airline: Scenario, fake_llm: FakeChatServer
) -> None:
    fake_llm.push(FakeResponse(200, b"<html>definitely not json"), text_reply("I'm back."))
    agent = session(airline, fake_llm, max_retries=0)
    agent.greet()

    assert agent.respond("Hello?").text == GENERIC_ERROR_SENTENCE
    assert agent.respond("Are you there?").text == "I'm back."
    calls = [e.data for e in agent.events if e.kind == "llm_call"]
    assert calls[0]["error"] and calls[0]["attempts"] == 1 and calls[1]["error"] is None
    # The failed turn stays in the history as what the caller heard.
    assert {"role": "assistant", "content": GENERIC_ERROR_SENTENCE} in fake_llm.requests[1].messages


def test_missing_key_env_speaks_generic_error(
    airline: Scenario, fake_llm: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    agent = session(airline, fake_llm, api_key_env=KEY_ENV)
    agent.greet()

    assert agent.respond("Hello?").text == GENERIC_ERROR_SENTENCE
    assert not fake_llm.requests
    error = next(e for e in agent.events if e.kind == "llm_call").data["error"]
    assert KEY_ENV in error


def test_tool_results_go_back_to_the_model(airline: Scenario, fake_llm: FakeChatServer) -> None:
    call = next(e for e in airline.expected_trace if e["event_type"] == "tool_call")
    fake_llm.push(
        tool_reply([(call["tool_name"], call["params"])], text="Let me look that up."),
        text_reply("I found your booking."),
    )
    agent = session(airline, fake_llm)
    agent.greet()
    reply = agent.respond("ZK3FFW, Rodriguez.")

    assert reply.text == "Let me look that up. I found your booking."
    gateway = agent.tools
    assert [c.tool_name for c in gateway.calls] == [call["tool_name"]]  # type: ignore[attr-defined]
    tool_message = fake_llm.requests[1].messages[-1]
    assert tool_message["role"] == "tool"
    assert json.loads(tool_message["content"])["status"] == "success"
    assert tool_message["tool_call_id"] == fake_llm.requests[1].messages[-2]["tool_calls"][0]["id"]


def test_transfer_is_logged_not_executed_and_ends_the_tool_loop(
    airline: Scenario, fake_llm: FakeChatServer
) -> None:
    args = {"confirmation_number": "ZK3FFW", "transfer_reason": "other", "issue_summary": "x"}
    fake_llm.push(tool_reply([("transfer_to_agent", args)], text="One moment."))
    agent = session(airline, fake_llm)
    agent.greet()
    reply = agent.respond("Get me a human.")

    assert reply.text == f"One moment. {TRANSFER_SENTENCE}"
    assert len(fake_llm.requests) == 1  # the loop ended with the transfer
    calls = agent.tools.calls  # type: ignore[attr-defined]
    assert [(c.tool_name, c.response) for c in calls] == [("transfer_to_agent", TRANSFER_RESPONSE)]
    assert agent.tools.engine.counters["transfer_to_agent"] == 0  # type: ignore[attr-defined]


def test_tool_loop_is_capped_and_the_last_round_must_speak(
    airline: Scenario, fake_llm: FakeChatServer
) -> None:
    fake_llm.fallback = tool_reply([("get_reservation", {"confirmation_number": "ZK3FFW"})])
    agent = session(airline, fake_llm, max_tool_rounds=2)
    agent.greet()
    reply = agent.respond("Hello.")

    assert len(fake_llm.requests) == 3
    assert [r.body.get("tool_choice") for r in fake_llm.requests] == [None, None, "none"]
    assert reply.text == GENERIC_ERROR_SENTENCE  # it never said anything


def test_unreadable_arguments_are_answered_without_executing(
    airline: Scenario, fake_llm: FakeChatServer
) -> None:
    fake_llm.push(tool_reply([("get_reservation", "{not json")]), text_reply("Sorry about that."))
    agent = session(airline, fake_llm)
    agent.greet()

    assert agent.respond("ZK3FFW.").text == "Sorry about that."
    (logged,) = agent.tools.calls  # type: ignore[attr-defined]
    assert logged.response["error_type"] == "invalid_arguments"
    assert json.loads(fake_llm.requests[1].messages[-1]["content"])["status"] == "error"


def test_history_keeps_the_last_n_caller_messages(
    airline: Scenario, fake_llm: FakeChatServer
) -> None:
    fake_llm.fallback = text_reply("Okay.")
    agent = session(airline, fake_llm, history_user_messages=2)
    agent.greet()
    for said in ("one", "two", "three"):
        agent.respond(said)

    users = [m["content"] for m in fake_llm.requests[-1].messages if m["role"] == "user"]
    assert users == ["two", "three"]
    assert fake_llm.requests[-1].messages[0]["role"] == "system"


def test_empty_transcript_reaches_the_model_as_inaudible(
    airline: Scenario, fake_llm: FakeChatServer
) -> None:
    fake_llm.push(text_reply("Sorry, could you say that again?"))
    agent = session(airline, fake_llm)
    agent.greet()

    assert agent.respond("  ").text == "Sorry, could you say that again?"
    assert fake_llm.requests[0].messages[-1] == {"role": "user", "content": INAUDIBLE}


def test_bad_params_name_the_field_but_never_echo_values(airline: Scenario) -> None:
    config = SimulationConfig(agent="llm", agent_params={"modle": "x", "api_key": SECRET})
    record = simulate(airline, config)

    assert record.status == "infra_error" and record.end_reason == "harness_error"
    assert record.error is not None and "modle" in record.error and "api_key" in record.error
    assert "api_key_env" in record.error and "model_list" in record.error  # the valid names
    assert SECRET not in record.model_dump_json()


def test_a_model_list_entry_names_the_model(
    airline: Scenario, fake_llm: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    model_list = [
        {
            "model_name": "house-agent",
            "litellm_params": {
                "model": "openai/served-model",
                "api_base": fake_llm.base_url,
                "api_key": f"os.environ/{KEY_ENV}",
            },
        }
    ]
    fake_llm.push(text_reply("Hello from the list."))
    params = {"model": "house-agent", "model_list": model_list}
    config = SimulationConfig(agent="llm", agent_params=params)
    ctx = AgentContext(scenario=airline, tools=new_gateway(airline), config=config)
    agent = get_agent("llm", "text").text_session(ctx)
    assert isinstance(agent, LLMAgentSession)
    agent.greet()

    assert agent.respond("Hi.").text == "Hello from the list."
    (request,) = fake_llm.requests
    assert request.body["model"] == "served-model"
    assert header(request, "authorization") == f"Bearer {SECRET}"
    call = next(e for e in agent.events if e.kind == "llm_call").data
    assert (call["model"], call["model_name"]) == ("served-model", "house-agent")
    started = next(e for e in agent.events if e.kind == "llm_session").data
    assert started["base_url"] == fake_llm.base_url and SECRET not in json.dumps(started)


def test_params_are_a_frozen_spec() -> None:
    params = LLMAgentParams(model="m", api_key_env="SOME_ENV")
    with pytest.raises(ValueError):
        params.model = "other"  # type: ignore[misc]
    assert "api_key" not in params.model_dump() and params.api_key_env == "SOME_ENV"


def test_completes_airline_record_against_the_openai_standin(
    airline: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stand-in's brain is the reference policy over what it is sent; LiteLLM is the
    client, exactly as it would call OpenAI."""
    monkeypatch.setenv(KEY_ENV, SECRET)
    with FakeOpenAIHTTP(lambda messages: next_message(airline, messages)) as standin:
        params = {
            "base_url": standin.base_url,
            "model": "gpt-5.4",
            "api_key_env": KEY_ENV,
            "history_user_messages": 1000,
        }
        record = simulate(airline, SimulationConfig(agent="llm", agent_params=params))
        sent = [body for path, body in standin.requests if path.endswith("/chat/completions")]

    assert record.status == "ok" and record.final_db_hash == record.expected_db_hash, record.error
    assert sent and all(body["model"] == "gpt-5.4" for body in sent)
    calls = [e.data for e in record.events if e.kind == "llm_call"]
    assert len(calls) == len(sent) and all(c["error"] is None for c in calls)
    assert SECRET not in record.model_dump_json()


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("ratelimit", "RateLimitError"),
        ("reject", "AuthenticationError"),
        ("malformed", "InternalServerError"),
        ("drop", "InternalServerError"),
    ],
)
def test_provider_faults_are_data_and_the_call_goes_on(
    airline: Scenario, monkeypatch: pytest.MonkeyPatch, fault: str, error: str
) -> None:
    """The stand-in injects the fault its key names (a 429, a 401 echoing the key, a 200
    cut off mid-JSON, a dropped connection): a turn error, never an exception."""
    monkeypatch.setenv(KEY_ENV, fault)
    with FakeOpenAIHTTP(lambda messages: {"content": "Hello."}) as standin:
        params = {"base_url": standin.base_url, "api_key_env": KEY_ENV, "max_retries": 0}
        config = SimulationConfig(agent="llm", agent_params=params)
        ctx = AgentContext(scenario=airline, tools=new_gateway(airline), config=config)
        agent = get_agent("llm", "text").text_session(ctx)
        agent.greet()
        reply = agent.respond("Hello?")

    assert reply.text == GENERIC_ERROR_SENTENCE
    call = next(e for e in agent.events if e.kind == "llm_call").data  # type: ignore[attr-defined]
    assert call["error"].startswith(error) and call["attempts"] == 1
    assert fault not in call["error"]  # the key is scrubbed


COLD_PROCESS = """
import json, sys, time
from scenarios.loader import load_scenario_dir
from tasks.simulate import SimulationConfig
from tasks.simulate.agents import AgentContext, get_agent
from tasks.simulate.callers import build_caller
from tasks.simulate.clocks.record import new_gateway
from tasks.simulate.meter import ComputeMeter
from tasks.sources import BUILTIN_PACK

scenario = load_scenario_dir(BUILTIN_PACK)[0]
params = {"base_url": sys.argv[1], "model": "fake-model"}
config = SimulationConfig(agent="llm", agent_params=params, caller="llm", caller_params=params)
ctx = AgentContext(scenario=scenario, tools=new_gateway(scenario), config=config)
cold = "litellm" not in sys.modules
started = time.perf_counter()
agent = get_agent("llm", "text").text_session(ctx)
built_s = time.perf_counter() - started
warmed = "litellm" in sys.modules
build_caller("llm", scenario, config)
meter = ComputeMeter()
meter.call("wall", agent.greet)
meter.call("wall", agent.respond, "Hello?")
call = next(e for e in agent.events if e.kind == "llm_call").data
print(json.dumps({"cold": cold, "warmed": warmed, "built_s": built_s,
                  "charged_s": meter.seconds(), "latency_s": call["latency_s"],
                  "error": call["error"]}))
"""


def test_litellm_import_is_paid_when_the_session_is_built_not_in_a_turn(
    fake_llm: FakeChatServer,
) -> None:
    """The virtual clock charges a turn's wall time (``compute_kind = "wall"``): LiteLLM's
    import (seconds in a cold process) must happen when the session is built, before the
    call, never inside the first turn, where it would be counted as the agent's latency."""
    fake_llm.fallback = text_reply("How can I help?")
    repo = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    out = subprocess.run(
        [sys.executable, "-c", COLD_PROCESS, fake_llm.base_url],
        capture_output=True,
        text=True,
        check=True,
        cwd=repo,
        env=env,
        timeout=120,
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["cold"] and seen["warmed"] and seen["error"] is None
    # Building paid the import; the turn (greeting + one model call on loopback) did not.
    assert seen["built_s"] > 0.3, seen
    assert seen["charged_s"] < seen["built_s"] / 3, seen
    assert seen["latency_s"] < seen["built_s"] / 3, seen


@pytest.mark.slow
def test_audio_mode_runs_the_cascade_around_the_model(
    airline: Scenario, fake_llm: FakeChatServer
) -> None:
    fake_llm.fallback = trace_agent_model(airline)
    params = agent_params(fake_llm, history_user_messages=1000)
    record = simulate(airline, SimulationConfig(agent="llm", agent_params=params, mode="audio"))

    assert record.status == "ok", record.error
    assert record.turns[0].intended_text == GREETING and record.turns[0].heard_text
    calls = [e for e in record.events if e.kind == "llm_call"]
    assert calls and all(e.t_s > 0 for e in calls)  # stamped on the call clock


@pytest.mark.slow
def test_completes_every_record_when_the_model_plays_the_trace(eva_root: Path) -> None:
    failed = []
    for scenario in load_eva_scenarios(eva_root):
        with FakeChatServer(fallback=trace_agent_model(scenario)) as server:
            params = agent_params(server, history_user_messages=1000)
            record = simulate(scenario, SimulationConfig(agent="llm", agent_params=params))
        if record.final_db_hash != record.expected_db_hash or record.status != "ok":
            failed.append(scenario.key)
    assert not failed


@pytest.mark.live
def test_live_endpoint_answers(airline: Scenario) -> None:
    """Needs EVAFLOW_LIVE_LLM_BASE_URL, EVAFLOW_LIVE_LLM_MODEL, optional ..._KEY_ENV."""
    base_url = os.environ.get("EVAFLOW_LIVE_LLM_BASE_URL")
    if not base_url:
        pytest.skip("EVAFLOW_LIVE_LLM_BASE_URL not set")
    params = {
        "base_url": base_url,
        "model": os.environ.get("EVAFLOW_LIVE_LLM_MODEL", "gpt-4o-mini"),
        "api_key_env": os.environ.get("EVAFLOW_LIVE_LLM_KEY_ENV", "OPENAI_API_KEY"),
    }
    config = SimulationConfig(agent="llm", agent_params=params, max_turns=6)
    ctx = AgentContext(scenario=airline, tools=new_gateway(airline), config=config)
    agent = get_agent("llm", "text").text_session(ctx)
    agent.greet()
    reply = agent.respond("Hi, I need to change my flight. My code is ZK3FFW, last name Rodriguez.")
    assert reply.text and reply.text != GENERIC_ERROR_SENTENCE
