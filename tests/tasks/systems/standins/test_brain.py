"""The stand-ins' shared brain: what the reference policy expects the caller to say next."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tasks.config import ScenarioSource
from tasks.simulate.llm_prompts import agent_system_prompt
from tasks.sources import load_source
from tasks.systems.standins.brain import expectation_after, next_message


def test_the_expectation_follows_the_policys_last_question(eva_root: Path) -> None:
    """Free speech until a lookup fails on a heard value; then the confirmation number is
    expected as a six-symbol code (its schema's format), the last name as any spelling."""
    (scenario,) = load_source(
        ScenarioSource(eva_root=str(eva_root), domains=["airline"], records=["5.2.2"])
    )
    messages: list[dict[str, Any]] = [{"role": "system", "content": agent_system_prompt(scenario)}]
    assert expectation_after(scenario, messages) is None
    expected = []
    for said in ["Hi, I need to cancel my flight.", "It's Y K three P D Q, last name Guardia."]:
        messages.append({"role": "user", "content": said})
        while (reply := next_message(scenario, messages)).get("tool_calls"):
            # Mid-turn, with a call pending, no question has been asked yet.
            assert expectation_after(scenario, messages) is None
            call = reply["tool_calls"][0]
            missing = json.loads(call["function"]["arguments"])["confirmation_number"]
            result = {"status": "error", "error_type": "not_found"}
            result["message"] = f"Reservation {missing} not found"
            messages += [
                reply,
                {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)},
            ]
        messages.append(reply)
        expected.append((reply["content"], expectation_after(scenario, messages)))
    (_, first), (asked, second) = expected
    assert first is None
    assert "spell your confirmation number" in asked and second == "code:XXXXXX"
