"""Short calls for the clock tests: a record cut after its first caller lines."""

from __future__ import annotations

from typing import Any

from scenarios.models import Scenario


def first_lines(scenario: Scenario, lines: int) -> Scenario:
    """The record's first ``lines`` caller lines (with what the agent does between them),
    then a goodbye: a short call that still runs the record's own opening."""
    trace: list[dict[str, Any]] = []
    said = 0
    for event in scenario.expected_trace:
        if event.get("event_type") == "user_utterance":
            said += 1
            if said > lines:
                break
        trace.append(event)
    trace.append({"event_type": "user_utterance", "utterance": "Okay, thank you. Goodbye."})
    return scenario.model_copy(update={"expected_trace": trace})
