"""The fake chat model of the Pipecat cascade: the reference policy over a chat history,
every caller value from the transcript, spoken as OpenAI's streaming wire format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest

from scenarios.loader import load_eva_scenarios
from scenarios.models import Scenario
from tasks.systems.standins.brain import next_message
from tests.fake_llm import FakeChatServer
from tests.fakes.trace_model import chat_handler


@pytest.fixture(scope="module")
def scenario(eva_root: Path) -> Scenario:
    return load_eva_scenarios(eva_root, record_ids=["airline/5.2.2"])[0]


def history(*turns: dict[str, Any]) -> list[dict[str, Any]]:
    system = {"role": "system", "content": "You are a voice assistant."}
    greeting = {"role": "assistant", "content": "Hello! How can I help you today?"}
    return [system, greeting, *turns]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def arguments(message: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    (call,) = message["tool_calls"]
    return call["function"]["name"], json.loads(call["function"]["arguments"])


def test_the_caller_values_of_a_tool_call_come_from_the_transcript(scenario: Scenario) -> None:
    opening = user("hi i need to cancel my flight")
    assert next_message(scenario, history(opening))["content"]  # asks for the booking
    heard = next_message(scenario, history(opening, user("y p three g v q last name garcia")))
    assert arguments(heard) == (
        "get_reservation",
        {"confirmation_number": "YP3GVQ", "last_name": "Garcia"},
    )
    misheard = next_message(scenario, history(opening, user("y p three p v two last name r b a")))
    name, args = arguments(misheard)
    assert name == "get_reservation" and args["confirmation_number"] == "YP3PV2"


def test_tool_results_come_from_the_history_and_a_failed_lookup_asks_to_spell(
    scenario: Scenario,
) -> None:
    turns = [user("hi i need to cancel my flight"), user("y p three p v two last name r b a")]
    asked = next_message(scenario, history(*turns))
    failed = {"role": "tool", "tool_call_id": asked["tool_calls"][0]["id"]}
    # The airline engine's own error for an unknown reservation (it names the value it got).
    error = {
        "status": "error",
        "error_type": "not_found",
        "message": "Reservation YP3PV2 not found",
    }
    failed["content"] = json.dumps(error)
    reply = next_message(scenario, history(turns[0], turns[1], asked, failed))
    assert reply.get("tool_calls") is None
    assert "spell your confirmation number" in reply["content"]


def test_pipecat_s_streaming_client_reads_the_fake_s_tool_call(scenario: Scenario) -> None:
    turns = history(user("hi i need to cancel my flight"), user("y p three g v q last name garcia"))
    with FakeChatServer(fallback=chat_handler(scenario)) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        stream = client.chat.completions.create(
            model="fake", messages=turns, stream=True, stream_options={"include_usage": True}
        )
        chunks = list(stream)
    calls = [
        c for chunk in chunks if chunk.choices for c in chunk.choices[0].delta.tool_calls or []
    ]
    assert calls[0].function.name == "get_reservation" and calls[0].id
    assert json.loads("".join(c.function.arguments or "" for c in calls))["last_name"] == "Garcia"
    assert chunks[-1].usage is not None and chunks[-2].choices[0].finish_reason == "tool_calls"
