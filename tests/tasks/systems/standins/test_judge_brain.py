"""The judge brain of the stand-ins (:mod:`tasks.systems.standins.judge`): each of evaflow's
judge prompts answered in the shape it asks for, with the ids the prompt lists."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tasks.judges import JudgeTask
from tasks.judges.prompts import render_messages
from tasks.judges.render import prompt_variables, template_key
from tasks.systems.standins.gemini_contents import Heard, HeardAudio
from tasks.systems.standins.judge import NO_AUDIO, JudgeBrain, heard_share
from tests.tasks.judges.test_llm import DIMS, sample_tasks


def answer(task: JudgeTask, audio: list[HeardAudio] | None = None) -> Any:
    system, user = render_messages(template_key(task), prompt_variables(task))
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    brain = JudgeBrain()
    if audio is None:
        reply = brain(messages)
    else:  # as the Gemini stand-in hands it over: transcripts after the prompt's text
        said = " ".join([user, *(a.text for a in audio)])
        reply = brain.answer_heard(Heard(messages=[{"role": "user", "content": said}], audio=audio))
    return json.loads(reply["content"])


TASKS = {template_key(t): t for t in sample_tasks()}


def test_conversation_judges_get_the_dimensions_their_prompt_names() -> None:
    faithful = answer(TASKS["faithfulness"])
    assert set(faithful["dimensions"]) == set(DIMS) and faithful["rating"] == 3
    progression = answer(TASKS["conversation_progression"])
    assert set(progression["dimensions"]) == {
        "unnecessary_tool_calls",
        "information_loss",
        "redundant_statements",
        "question_quality",
    }
    behaviour = answer(TASKS["user_behavioral_fidelity"])
    assert behaviour["rating"] == 1 and len(behaviour["corruption_analysis"]) == 6
    assert not any(v["detected"] for v in behaviour["corruption_analysis"].values())


def test_per_turn_judges_rate_the_turns_their_prompt_lists() -> None:
    concise = answer(TASKS["conciseness"])
    assert [t["turn_id"] for t in concise] == [0, 1]  # the trace's turn ids
    assert all(t["rating"] == 3 and t["failure_modes"] == [] for t in concise)
    speakable = answer(TASKS["speakability"])
    assert speakable == [{"turn_id": 1, "explanation": "as the rubric's clean answer", "rating": 1}]
    (unit,) = answer(TASKS["transcription_accuracy_key_entities"])
    assert unit["turn_id"] == 1 and unit["entities"][0]["correct"] is False  # "A" != "B"
    (call,) = answer(TASKS["transcription_accuracy_key_entities_tool_calls"])
    assert call["tool_call_id"] == 1 and call["entities"][0]["correct"] is True


@pytest.mark.parametrize(
    "metric", ["agent_speech_fidelity", "user_speech_fidelity", "tts_fidelity"]
)
def test_audio_judges_say_when_they_heard_no_audio(metric: str) -> None:
    turns = answer(TASKS[metric], audio=[])["turns"]
    assert [t["turn_id"] for t in turns] == [1]
    assert turns[0]["explanation"] == NO_AUDIO and turns[0]["rating"] is None


def test_audio_judges_rate_what_they_heard() -> None:
    """The intended turn is "Code Z K three."; a clean rating needs half its words heard."""
    good = [HeardAudio("inline", "audio/wav", 1.5, "code z k three")]
    bad = [HeardAudio("inline", "audio/wav", 1.5, "hello there")]
    (heard,) = answer(TASKS["user_speech_fidelity"], good)["turns"]
    assert heard["transcript"] == "code z k three" and heard["rating"] == 3
    assert answer(TASKS["user_speech_fidelity"], bad)["turns"][0]["rating"] == 1
    (tts,) = answer(TASKS["tts_fidelity"], bad)["turns"]
    assert tts["rating"] == 0 and tts["failure_modes"] == ["entity_error"]
    assert heard_share("Code Z K three.", "code z") == 0.5
