"""The shared brain (:mod:`tasks.systems.standins.brain`) as a responder of the test suite's
OpenAI-compatible chat server (:class:`tests.fake_llm.FakeChatServer`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scenarios.models import Scenario
from tasks.systems.standins.brain import next_message


def chat_handler(scenario: Scenario) -> Callable[[Any], dict[str, Any]]:
    """A :class:`tests.fake_llm.FakeChatServer` responder around :func:`next_message`."""
    from tests.fake_llm import completion

    def respond(body: Any) -> dict[str, Any]:
        return completion(next_message(scenario, list(body.get("messages") or [])))

    return respond
