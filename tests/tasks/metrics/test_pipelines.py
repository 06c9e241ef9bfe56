"""Each metric runs on the pipelines the reference runs it on, and agent speech fidelity of
an audio-native agent judges the reference's entities (EVA spec 4.1, 4.3, 4.6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tasks.judges import JudgeConfig
from tasks.metrics import METRICS
from tasks.metrics.runner import run_metrics
from tasks.records import AttemptRecord
from tests.tasks.judges.fakes import scripted_transcriber, with_tracks
from tests.tasks.metrics.builders import call, make_record, make_scenario, turn

ALL = ("cascade", "audio_llm", "s2s")
# EVA spec 4.6: speakability "cascade and audio-LLM only", stt_wer "cascade only",
# tts_fidelity "cascade and audio-LLM"; every other metric: default (all pipelines, 4.1).
SPEC_PIPELINES = {
    "speakability": ("cascade", "audio_llm"),
    "stt_wer": ("cascade",),
    "tts_fidelity": ("cascade", "audio_llm"),
}
# Spec 4.3-4.6, in their order.
SPEC_METRICS = (
    "task_completion",
    "faithfulness",
    "agent_speech_fidelity",
    "turn_taking",
    "conciseness",
    "conversation_progression",
    "conversation_valid_end",
    "user_behavioral_fidelity",
    "user_speech_fidelity",
    "authentication_success",
    "conversation_correctly_finished",
    "conversation_completed_on_time",
    "response_speed",
    "speakability",
    "stt_wer",
    "tool_call_validity",
    "transcription_accuracy_key_entities",
    "tts_fidelity",
)
NOT_COMPUTED = {"cascade": set(), "audio_llm": {"stt_wer"}, "s2s": set(SPEC_PIPELINES)}


def test_every_metric_declares_the_pipelines_of_the_spec() -> None:
    declared = {name: metric.info.pipelines for name, metric in METRICS.items()}
    assert set(SPEC_METRICS) <= set(declared)
    for name, pipelines in declared.items():
        assert set(pipelines) == set(SPEC_PIPELINES.get(name, ALL)), name


def _record() -> AttemptRecord:
    """An audio conversation where the cascade rule and the reference's rule disagree.

    Turn 1: the agent repeats the caller's code (also in the tool response) and adds a
    voucher code it made up, which its audio says wrong. Turn 2: it repeats a gate the caller
    said but the agent's recogniser turned into nonsense, and says that gate wrong too.
    """
    turns = [
        turn(0, "assistant", "Hello! How can I help you today?", "hello", [(0.2, 1.5)]),
        turn(1, "user", "My code is ZK3FFW.", "my code is z k three f f w", [(2.0, 3.5)]),
        turn(
            1,
            "assistant",
            "Booking ZK3FFW is confirmed. I added voucher QX7 for you.",
            "booking z k three f f w is confirmed i added voucher q x eight for you",
            [(4.5, 7.0)],
        ),
        turn(2, "user", "Please meet me at gate B12.", "please meet me at gay to elf", [(8, 9)]),
        turn(2, "assistant", "Sure, gate B12.", "sure gate b thirteen", [(10.0, 11.0)]),
        turn(3, "user", "Thanks, goodbye.", "thanks goodbye", [(12.0, 13.0)]),
        turn(3, "assistant", "Goodbye!", "goodbye", [(14.0, 14.6)]),
    ]
    found = {"status": "success", "reservation": {"confirmation_number": "ZK3FFW"}}
    calls = [call(0, 1, "get_reservation", found, t=4.0, confirmation_number="ZK3FFW")]
    return make_record(turns, calls, mode="audio", clock="virtual", duration_s=15.0)


def _speech_fidelity(record: AttemptRecord, pipeline: str) -> Any:
    # The agent track's audio as a recogniser heard it, turn by turn (tone audio stands in
    # for speech: the rule is under test here, the recogniser in tests/tasks/judges).
    heard = scripted_transcriber(*(t.heard_text for t in record.turns_of("assistant")))
    judge = JudgeConfig(name="offline", params={"transcriber": heard})
    (score,) = run_metrics(
        record, make_scenario(), ["agent_speech_fidelity"], judge, pipeline=pipeline
    )
    return score


def _judged(score: Any) -> dict[int, list[str]]:
    rows = json.loads(score.details["judge_response"])["turns"]
    return {
        row["turn_id"]: [e["value"] for e in row["entities"]] for row in rows if row["entities"]
    }


@pytest.mark.parametrize("pipeline", ["s2s", "audio_llm"])
def test_audio_native_speech_fidelity_judges_the_callers_and_tools_entities(
    tmp_path: Path, pipeline: str
) -> None:
    score = _speech_fidelity(with_tracks(_record(), tmp_path), pipeline)
    assert score.error is None, score.error
    # The caller's code (said, and returned by the tool) and the caller's gate as said are
    # judged; the voucher code appears in neither and is not (the cascade rule judges it).
    assert _judged(score) == {1: ["ZK3FFW"], 2: ["B12"]}
    assert score.details["judge_extra"]["entities_from"] == "context"
    assert score.details["per_turn_ratings"] == {"0": 1, "1": 1, "2": 0, "3": 1}
    assert (score.score, score.normalized_score, score.passed) == (0.5, 0.5, False)


def test_cascade_speech_fidelity_judges_every_entity_of_the_intended_text(
    tmp_path: Path,
) -> None:
    score = _speech_fidelity(with_tracks(_record(), tmp_path), "cascade")
    assert score.error is None, score.error
    assert _judged(score) == {1: ["ZK3FFW", "QX7"], 2: ["B12"]}
    assert score.details["judge_extra"]["entities_from"] == "turn"
    assert (score.score, score.passed) == (0.0, False)


def _without_agent_text(record: AttemptRecord, **heard: str) -> AttemptRecord:
    """The record as an s2s agent that reports no text leaves it: its turns are only what
    the caller side transcribed (``heard`` replaces turn ``t<N>``'s transcript)."""
    turns = [
        t.model_copy(
            update={
                "intended_text": "",
                "heard_text": heard.get(f"t{t.turn_id}", t.heard_text),
            }
        )
        if t.role == "assistant"
        else t
        for t in record.turns
    ]
    return record.model_copy(update={"turns": turns})


def test_s2s_turn_without_reported_text_is_judged_on_its_transcript(tmp_path: Path) -> None:
    """Spec 4.2: an S2S agent's entries are the caller side's transcript of its audio."""
    record = with_tracks(_without_agent_text(_record()), tmp_path)
    score = _speech_fidelity(record, "s2s")
    assert score.error is None, score.error
    # The transcript of turn 2 says "b thirteen": no entity of the context, so not judged;
    # turn 1's transcript spells the caller's code, which is judged (and heard right).
    assert _judged(score) == {1: ["ZK3FFW"]}
    assert score.score == 1.0


@pytest.mark.parametrize(
    ("judge_hears", "rating"),
    [("booking z k three f f v is confirmed", 0), ("booking z k three f f w is confirmed", 1)],
)
def test_a_transcript_code_one_symbol_off_is_judged_as_the_contexts_code(
    tmp_path: Path, judge_hears: str, rating: int
) -> None:
    """Spec 4.3 (c): a one-character slip in a long identifier is articulation. The caller
    side heard ZK3FFV; the context has ZK3FFW, so ZK3FFW is judged, and what the judge's
    own recogniser hears in the audio decides (the caller side may have misheard)."""
    said = "booking z k three f f v is confirmed"
    record = with_tracks(_without_agent_text(_record(), t1=said), tmp_path)
    heard = scripted_transcriber("hello", judge_hears, "sure gate b thirteen", "goodbye")
    judge = JudgeConfig(name="offline", params={"transcriber": heard})
    (score,) = run_metrics(
        record, make_scenario(), ["agent_speech_fidelity"], judge, pipeline="s2s"
    )
    assert score.error is None, score.error
    assert _judged(score) == {1: ["ZK3FFW"]}
    assert score.details["per_turn_ratings"]["1"] == rating


def _rows(pipeline: str) -> set[str]:
    names = [*METRICS.names(), "not_a_metric"]
    record = make_record(
        [
            turn(0, "assistant", "Hello! How can I help you today?"),
            turn(1, "user", "My code is ABC123."),
            turn(1, "assistant", "Thank you, goodbye."),
        ],
        mode="text",
    )
    return {s.name for s in run_metrics(record, make_scenario(), names, pipeline=pipeline)}


@pytest.mark.parametrize("pipeline", ALL)
def test_a_metric_outside_its_pipelines_leaves_no_row(pipeline: str) -> None:
    # An unknown name still comes back as an error row: only unsupported metrics vanish.
    assert _rows(pipeline) == set(METRICS.names()) - NOT_COMPUTED[pipeline] | {"not_a_metric"}


def _misrepresents(record: AttemptRecord, pipeline: str) -> bool:
    (score,) = run_metrics(record, make_scenario(), ["faithfulness"], pipeline=pipeline)
    assert score.error is None, score.error
    return score.sub_metrics["misrepresenting_tool_result_rate"].score == 1.0


def test_s2s_faithfulness_leaves_a_one_symbol_slip_to_speech_fidelity() -> None:
    """Spec 4.3 (c), S2S only: a dash/single-character slip in a long identifier of the
    agent's transcribed speech is not a misrepresentation; a cascade agent's text that says
    the wrong code is, and so is an s2s code two symbols off."""
    slip = _without_agent_text(_record(), t1="booking z k three f f v is confirmed", t2="sure")
    assert not _misrepresents(slip, "s2s")
    off_by_two = _without_agent_text(_record(), t1="booking z k three f m v is ready", t2="sure")
    assert _misrepresents(off_by_two, "s2s")
    turns = [
        t.model_copy(
            update={"intended_text": {1: "Booking ZK3FFV is confirmed.", 2: "Sure."}[t.turn_id]}
        )
        if t.role == "assistant" and t.turn_id in (1, 2)
        else t
        for t in _record().turns
    ]
    assert _misrepresents(_record().model_copy(update={"turns": turns}), "cascade")
