"""The offline key-entity transcription judge on constructed inputs."""

from __future__ import annotations

import json

from tasks.judges import JudgeTask, make_judge
from tasks.judges.inputs import EntityUnit, KeyEntityInput, TraceItem


def run(inputs: KeyEntityInput) -> list[dict]:
    verdict = make_judge("offline").evaluate(
        JudgeTask(metric="transcription_accuracy_key_entities", inputs=inputs)
    )
    assert verdict.error is None and verdict.scope and "cannot" in verdict.scope
    return json.loads(verdict.raw_text)


def entities(out: list[dict], turn: int) -> dict[str, tuple[bool, bool]]:
    item = next(i for i in out if i["turn_id"] == turn)
    return {e["value"]: (e["correct"], e["skipped"]) for e in item["entities"]}


def test_clean_transcript_keeps_every_entity() -> None:
    unit = EntityUnit(
        unit_id=1,
        expected="My code is Z K three F F W, last name Rodriguez.",
        transcribed="My code is ZK3FFW, last name Rodriguez.",
    )
    assert entities(run(KeyEntityInput(units=[unit])), 1) == {
        "ZK3FFW": (True, False),
        "Rodriguez": (True, False),
    }


def test_misheard_code_and_amount_are_incorrect() -> None:
    unit = EntityUnit(
        unit_id=2,
        expected="Code Y T M nine two four, total one hundred fifteen dollars.",
        transcribed="Code YPM 924, total $150.",
    )
    assert entities(run(KeyEntityInput(units=[unit])), 2) == {
        "YTM924": (False, False),
        "$115": (False, False),
    }


def test_text_after_a_cut_off_tag_is_skipped() -> None:
    unit = EntityUnit(
        unit_id=3,
        expected="Last name Patel [likely cut off by assistant] code A B C one two three",
        transcribed="Last name Patel",
    )
    found = entities(run(KeyEntityInput(units=[unit])), 3)
    assert found["Patel"] == (True, False)
    assert found["ABC123"] == (False, True)


def test_drift_into_the_next_turn_is_tolerated() -> None:
    units = [
        EntityUnit(unit_id=1, expected="My code is Z K three F F W.", transcribed="My code is"),
        EntityUnit(unit_id=2, expected="Yes.", transcribed="ZK3FFW. Yes."),
    ]
    assert entities(run(KeyEntityInput(units=units)), 1) == {"ZK3FFW": (True, False)}


def test_tool_call_mode_checks_caller_sourced_arguments() -> None:
    trace = [
        TraceItem(kind="user", turn_id=1, text="My code is Z K three F F W, last name Patel."),
        TraceItem(
            kind="tool_call",
            turn_id=1,
            tool_name="get_reservation",
            params={"confirmation_number": "ZK3FFW", "last_name": "Patel"},
        ),
        TraceItem(
            kind="tool_response",
            turn_id=1,
            tool_name="get_reservation",
            response={"status": "success", "passenger_id": "PAX001"},
        ),
        TraceItem(
            kind="tool_call",
            turn_id=2,
            tool_name="rebook",
            params={"confirmation_number": "ZK3FEW", "passenger_id": "PAX001"},
        ),
    ]
    out = run(KeyEntityInput(mode="tool_calls", trace=trace))
    first = {e["transcribed_value"]: e["correct"] for e in out[0]["entities"]}
    second = {e["transcribed_value"]: e["correct"] for e in out[1]["entities"]}
    assert out[0]["tool_call_id"] == 1 and first == {"ZK3FFW": True, "Patel": True}
    assert second == {"ZK3FEW": False}  # PAX001 came from a tool response: not rated


def test_tool_call_arguments_are_compared_as_values_of_their_kind() -> None:
    said = (
        "I'm born April fourth, two thousand. Room for ten people at ten AM. "
        "Facility K Q H K dash five one F."
    )
    trace = [
        TraceItem(kind="user", turn_id=1, text=said),
        TraceItem(
            kind="tool_call",
            turn_id=1,
            tool_name="book",
            params={
                "date_of_birth": "2000-04-04",
                "attendees": 10,
                "start_time": "10:00",
                "facility_code": "KQHK-51F",
            },
        ),
        TraceItem(
            kind="tool_call",
            turn_id=1,
            tool_name="book",
            params={"date_of_birth": "2000-04-05", "start_time": "11:00", "facility": "KQHK-57F"},
        ),
    ]
    out = run(KeyEntityInput(mode="tool_calls", trace=trace))
    first = {e["transcribed_value"]: e["correct"] for e in out[0]["entities"]}
    second = {e["transcribed_value"]: e["correct"] for e in out[1]["entities"]}
    assert first == {"2000-04-04": True, "10": True, "10:00": True, "KQHK-51F": True}
    assert second == {"2000-04-05": False, "11:00": False, "KQHK-57F": False}
