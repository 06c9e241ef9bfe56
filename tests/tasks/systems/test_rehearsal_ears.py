"""The stand-ins' ears in a rehearsal: what they decode, and where."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from perturbations.audio import Clip, VoiceSpec
from scenarios.models import Scenario
from tasks.config import ScenarioSource
from tasks.config_checks import load_checked
from tasks.systems.rehearsal_ears import EARS, hear, rehearsal_corpus, rehearsal_recognizer
from tasks.voice.stt import Recognizer
from tasks.voice.tts import synthesize

CODE = "yankee papa three golf victor quebec"


@pytest.fixture(scope="module")
def builtin_scenarios() -> list[Scenario]:
    return load_checked(ScenarioSource())


def test_the_ears_decode_in_worker_processes_as_they_would_here(
    builtin_scenarios: list[Scenario], tmp_path: Path
) -> None:
    """PocketSphinx keeps the GIL while it decodes; the run's process serves every call's
    audio, so a rehearsal's ears decode in other processes, and hear the same words."""
    said = synthesize(f"my code is {CODE}", VoiceSpec(voice="en-us"))
    ears = rehearsal_recognizer(builtin_scenarios, tmp_path / "ears")
    try:
        heard = [ears.recognize(said), ears.recognize(said, "code")]
        workers = ears.pool.worker_pids()
    finally:
        ears.close()
    assert workers and os.getpid() not in workers
    assert ears.pool.worker_pids() == []
    here = Recognizer(EARS, rehearsal_corpus(builtin_scenarios), tmp_path / "ears" / "lm")
    assert heard == [hear(here, said), hear(here, said, "code")]
    assert all("yankee papa three golf" in text for text in heard), heard


def test_spelled_speech_gets_the_code_grammar_and_nothing_else_does() -> None:
    from tasks.systems.rehearsal_ears import hear, sounds_spelled

    assert sounds_spelled("yankee papa three golf victor clinton")
    assert sounds_spelled("golf alpha romeo charlie the aisle")
    assert not sounds_spelled("like p three t t two last name the")
    assert not sounds_spelled("hi i need to cancel my flight")

    class Heard:
        """A recogniser double: free speech says ``text``, the code grammar ``code``."""

        def __init__(self, text: str) -> None:
            self.text, self.asked = text, []

        def recognize(self, clip: Any, expect: Any = None) -> str:
            self.asked.append(expect)
            return "yankee papa three golf victor quebec" if expect == "code" else self.text

    for text, heard, asked in [
        ("yankee papa three golf victor clinton", "yankee papa three golf victor quebec", 2),
        ("i need to cancel my flight", "i need to cancel my flight", 1),
    ]:
        double = Heard(text)
        assert hear(double, Clip(np.zeros(1600, dtype=np.float32), 16000)) == heard
        assert double.asked == [None, "code"][:asked]


def test_the_ears_decode_an_utterance_without_the_silence_around_it() -> None:
    """A manual STT commit or an audio-in LLM's pre-roll brings seconds of silence with the
    utterance; the decoder gets the speech and a fraction of a second around it."""
    from tasks.systems.rehearsal_ears import speech_span
    from tasks.systems.standins.audio import Ears

    said = synthesize("yankee papa three golf victor quebec", VoiceSpec(voice="en-us"))
    quiet = np.zeros(int(said.rate * 3.0), dtype=np.float32)
    padded = Clip(np.concatenate([quiet, said.samples, quiet]), said.rate)
    span = speech_span(padded)
    assert said.duration_s < span.duration_s < said.duration_s + 1.2, span.duration_s
    ears = Ears(recognizer=None)  # type: ignore[arg-type]
    for i in range(0, padded.n_samples, 320):  # 20 ms chunks, as a client streams them
        ears.feed(Clip(padded.samples[i : i + 320], padded.rate))
    committed = ears.flush_turn()
    assert committed is not None
    assert said.duration_s < committed.duration_s < said.duration_s + 3.0 + 0.5
