"""Offline speech-fidelity judges: recognise each turn's audio, compare with intended text.

Fast tests use generated audio and a stand-in recogniser (the rules are under test, not
the recogniser); the slow test runs the real eSpeak -> PocketSphinx chain.
"""

from __future__ import annotations

import json
import wave
from pathlib import Path

import numpy as np
import pytest

from tasks.judges import AudioInput, JudgeTask, make_judge
from tasks.judges.inputs import SpeechFidelityInput
from tasks.judges.offline.speech import Listener, word_recall

RATE = 16000


def write_track(path: Path, spans: list[tuple[float, float]], seconds: float) -> Path:
    samples = np.zeros(int(seconds * RATE), dtype=np.float32)
    for start, end in spans:
        t = np.arange(int((end - start) * RATE)) / RATE
        samples[int(start * RATE) : int(start * RATE) + t.size] = 0.3 * np.sin(2 * np.pi * 200 * t)
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(RATE)
        wav.writeframes((samples * 32767).astype("<i2").tobytes())
    return path


@pytest.fixture
def track(tmp_path: Path) -> AudioInput:
    path = write_track(tmp_path / "agent.wav", [(0.5, 1.5), (2.0, 3.0)], 4.0)
    return AudioInput(path=path, segments={1: [(0.5, 1.5)], 2: [(2.0, 3.0)]})


def scripted(*texts: str):  # type: ignore[no-untyped-def]
    """A stand-in recogniser returning ``texts`` in turn order."""
    queue = list(texts)
    return lambda samples, rate: queue.pop(0)


def judge(metric: str, inputs: SpeechFidelityInput, audio: AudioInput | None, *heard: str) -> dict:
    verdict = make_judge({"name": "offline", "params": {"transcriber": scripted(*heard)}}).evaluate(
        JudgeTask(metric=metric, inputs=inputs, audio=audio)
    )
    assert verdict.error is None, verdict.error
    return {
        "skipped": verdict.skipped,
        **(json.loads(verdict.raw_text) if verdict.raw_text else {}),
    }


AGENT = SpeechFidelityInput(
    role="assistant",
    turns={1: "Your code is Z K three F F W.", 2: "Is there anything else?"},
    variant="agent_entities",
)


def test_agent_entities_clean_and_faulty(track: AudioInput) -> None:
    clean = judge(
        "agent_speech_fidelity",
        AGENT,
        track,
        "your code is z k three f f w",
        "is there anything else",
    )
    assert [(t["rating"], t["has_entities"]) for t in clean["turns"]] == [(1, True), (1, False)]
    faulty = judge(
        "agent_speech_fidelity",
        AGENT,
        track,
        "your code is c k three f f w",
        "is there anything else",
    )
    assert faulty["turns"][0]["rating"] == 0 and "ZK3FFW" in faulty["turns"][0]["explanation"]


def test_no_audio_is_skipped_and_missing_file_is_an_error(tmp_path: Path) -> None:
    assert judge("agent_speech_fidelity", AGENT, None)["skipped"].startswith("no audio")
    verdict = make_judge("offline").evaluate(
        JudgeTask(
            metric="agent_speech_fidelity",
            inputs=AGENT,
            audio=AudioInput(path=tmp_path / "none.wav", segments={1: [(0, 1)]}),
        )
    )
    assert verdict.error and "none.wav" in verdict.error


def test_turn_without_segments_is_not_rated(track: AudioInput) -> None:
    audio = AudioInput(path=track.path, segments={1: [(0.5, 1.5)]})
    out = judge("agent_speech_fidelity", AGENT, audio, "your code is z k three f f w")
    assert out["turns"][1]["rating"] is None


USER = SpeechFidelityInput(
    role="user",
    turns={
        1: "My last name is Patel and my code is A B C one two three.",
        2: "I would like the earliest flight tomorrow morning please [likely cut off by assistant] ok",
    },
    variant="user",
)


def test_user_speech_ratings(track: AudioInput) -> None:
    good = judge(
        "user_speech_fidelity",
        USER,
        track,
        "my last name is patel and my code is a b c one two three",
        "i would like the earliest flight tomorrow morning please",
    )
    assert [t["rating"] for t in good["turns"]] == [3, 3]
    mixed = judge(
        "user_speech_fidelity",
        USER,
        track,
        "my last name is patel and my code is a b d one two three",
        "i would like the earliest flight",
    )
    # Spec 4.5: an entity error rates the turn 1 (the code was heard as ABD123); the
    # second turn has its words partly missing but no entity error: 2.
    assert [t["rating"] for t in mixed["turns"]] == [1, 2]
    silent = judge("user_speech_fidelity", USER, track, "", "the")
    assert [t["rating"] for t in silent["turns"]] == [1, 1]


def test_user_speech_lenient_entity_rating_on_request(track: AudioInput) -> None:
    for params, want in (({}, [1, 3]), ({"user_entity_error_rating": 2}, [2, 3])):
        heard = scripted(
            "my last name is patel and my code is a b d one two three",
            "i would like the earliest flight tomorrow morning please",
        )
        verdict = make_judge({"name": "offline", "params": {"transcriber": heard, **params}})
        answer = verdict.evaluate(
            JudgeTask(metric="user_speech_fidelity", inputs=USER, audio=track)
        )
        assert [t["rating"] for t in json.loads(answer.raw_text)["turns"]] == want


def test_tts_failure_modes(track: AudioInput) -> None:
    inputs = SpeechFidelityInput(
        role="assistant",
        turns={
            1: "Your flight leaves at nine forty from gate twelve and boards at nine ten.",
            2: "Thank you for calling SkyWay today, goodbye.",
        },
        variant="tts",
    )
    out = judge(
        "tts_fidelity",
        inputs,
        track,
        "your flight leaves at nine forty from",
        "thank you for calling sky way today goodbye",
    )
    first, second = out["turns"]
    assert first["rating"] == 0 and "truncation" in first["failure_modes"]
    assert second["rating"] == 1 and second["failure_modes"] == []


@pytest.mark.slow
def test_real_tts_and_stt_round_trip(tmp_path: Path) -> None:
    from perturbations.audio import VoiceSpec
    from tasks.voice.tts import synthesize

    texts = {1: "Your confirmation code is Z K three F F W.", 2: "Your flight leaves at nine AM."}
    pieces, segments, cursor = [], {}, 0.5
    for turn, text in texts.items():
        clip = synthesize(text, VoiceSpec(voice="en-us+klatt3"))
        audio = np.interp(
            np.arange(0, clip.samples.size, clip.rate / RATE),
            np.arange(clip.samples.size),
            clip.samples,
        )
        pieces += [np.zeros(int(0.5 * RATE)), audio]
        segments[turn] = [(cursor, cursor + audio.size / RATE)]
        cursor += 0.5 + audio.size / RATE
    samples = np.concatenate(pieces).astype(np.float32)
    path = tmp_path / "agent.wav"
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(RATE)
        wav.writeframes((samples * 32767).astype("<i2").tobytes())
    inputs = SpeechFidelityInput(role="assistant", turns=texts, variant="agent_entities")
    verdict = make_judge({"name": "offline", "params": {"cache_dir": str(tmp_path)}}).evaluate(
        JudgeTask(
            metric="agent_speech_fidelity",
            inputs=inputs,
            audio=AudioInput(path=path, segments=segments),
        )
    )
    assert verdict.error is None
    turns = json.loads(verdict.raw_text)["turns"]
    assert all(t["transcript"] for t in turns)
    assert sum(t["rating"] for t in turns) >= 1


def test_words_the_recogniser_cannot_output_are_no_evidence(track: AudioInput) -> None:
    """A one-word turn of a name outside the recogniser's vocabulary is not a major error."""
    names = SpeechFidelityInput(
        role="user", turns={1: "Castellanos.", 2: "My last name is Castellanos."}, variant="user"
    )
    vocabulary = frozenset({"my", "last", "name", "is"})
    listener = Listener(scripted("catch that", "my last name is catch that"), vocabulary)
    verdict = make_judge({"name": "offline", "params": {"transcriber": listener}}).evaluate(
        JudgeTask(metric="user_speech_fidelity", inputs=names, audio=track)
    )
    assert [t["rating"] for t in json.loads(verdict.raw_text)["turns"]] == [3, 3]
    # Without a vocabulary every word counts, and the first turn is a major error.
    plain = judge("user_speech_fidelity", names, track, "catch that", "my last name is catch that")
    assert [t["rating"] for t in plain["turns"]] == [1, 3]
    assert word_recall("My last name is Castellanos.", "my last name is", vocabulary) == 1.0
