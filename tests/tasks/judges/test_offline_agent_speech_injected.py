"""Does the offline agent-speech-fidelity judge hear errors its language model did not expect?

The judge decodes with an LM built from the conversation's own intended text, so the test
speaks (real eSpeak -> PocketSphinx chain, as the voice stack speaks: ``render_spoken``) a
wrong entity while the intended text stays right: one letter or digit of a confirmation
code, one digit of an employee ID, an amount and a date off by a little. The judge must
flag >= 90% of the injected turns and raise <= 5% false alarms on the same calls spoken
correctly.

Before the forced choice (transcript check only), 6 calls x 4 entity turns of seed 0
caught 100% but raised 21% false alarms: PocketSphinx confuses spelled letters (W/D, T/D,
Q/U) in clean audio. The judge now re-checks an entity missing from the transcript by
decoding the turn against the intended sentence with the entity's slot open to its
one-change variants (``tasks.voice.verify``): a variant that beats the intended value by
``CHOICE_MARGIN``, or one the transcript heard in words rather than spelled letters,
counts. Seeds 0-2 were used to develop the rule and choose the margin; the default run
measures seed 3, the slow test seeds 4-11 and 12-19. With that rule alone, seeds 4-11 gave
caught 187/192 (97.4%) but false alarms 10/192 (5.2%): the transcript mishearing a digit
or month in clean audio (J4Z for J1Z, July for June) and letter confusions past the margin
(V for D by 0.16). Scoring the entity's time span alone did not help (on seeds 0-3 its
margins were within 0.02 of the whole sentence's; 89/96 caught, 1/96 false alarms, against
94/96 and 1/96): segmentation elsewhere was not the cause. The judge now also asks a
second view, the clip played 5% faster (``tasks.voice.verify.VIEW_SPEED``, not tuned):
either piece of evidence counts only when the variant beats the intended value there too.
On seeds 0-3 (replayed from their recorded scores) it gives caught 90/96, false alarms
0/96. Measured once each (2026-12-02): seeds 4-11 caught 182/192 (94.8%), false alarms
3/192 (1.6%); seeds 12-19 caught 179/192 (93.2%), false alarms 1/192 (0.5%). The catch
rate pays for it: wrong digits the transcript heard but both decodes scored below the
intended value are now kept.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import wave
from pathlib import Path

import numpy as np
import pytest

from tasks.judges import AudioInput, JudgeTask, make_judge
from tasks.judges.inputs import SpeechFidelityInput
from tasks.spoken import render_spoken

RATE = 16000
CALLS = 6
DEFAULT_SEED = 3  # seeds 0-2 shaped the rule and CHOICE_MARGIN, 0-3 chose the second view
LETTERS = "BCDFGHJKLMNPQRSTVWXYZ"
DIGITS = "0123456789"
MONTHS = [dt.date(2026, m, 1).strftime("%B") for m in range(1, 13)]


def _flip(value: str, rng: random.Random, lo: int = 0) -> str:
    i = rng.randrange(lo, len(value))
    pool = LETTERS if value[i].isalpha() else DIGITS
    return value[:i] + rng.choice([c for c in pool if c != value[i]]) + value[i + 1 :]


def _date(day: dt.date) -> str:
    return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"


def call_pair(rng: random.Random) -> tuple[dict[int, str], dict[int, str]]:
    """(intended turns, the same turns with one entity error each)."""
    code = "".join(rng.choice(LETTERS + DIGITS) for _ in range(6))
    code = code if any(c.isalpha() for c in code) else "K" + code[1:]
    emp = "EMP" + "".join(rng.choice(DIGITS) for _ in range(6))
    fee = rng.randrange(20, 500)
    day = dt.date(2026, 1, 1) + dt.timedelta(rng.randrange(365))
    templates = (
        "Your confirmation code is {}.",
        "The change fee is ${}.",
        "Your new flight is on {}.",
        "Your employee ID is {}.",
    )
    good = (code, fee, _date(day), emp)
    bad = (
        _flip(code, rng),
        fee + rng.choice([-10, -1, 1, 10, 100]),
        _date(day + dt.timedelta(rng.choice([-2, -1, 1, 2, 7]))),
        _flip(emp, rng, lo=3),
    )
    intended = {i + 1: t.format(v) for i, (t, v) in enumerate(zip(templates, good, strict=True))}
    wrong = {i + 1: t.format(v) for i, (t, v) in enumerate(zip(templates, bad, strict=True))}
    return intended, wrong


def speak(texts: dict[int, str], path: Path) -> AudioInput:
    from perturbations.audio import VoiceSpec
    from tasks.voice.tts import synthesize

    pieces, segments, cursor = [], {}, 0.5
    for turn, text in texts.items():
        clip = synthesize(render_spoken(text), VoiceSpec(voice="en-us+klatt3"))
        audio = np.interp(
            np.arange(0, clip.samples.size, clip.rate / RATE),
            np.arange(clip.samples.size),
            clip.samples,
        )
        pieces += [np.zeros(int(0.5 * RATE)), audio]
        segments[turn] = [(cursor, cursor + audio.size / RATE)]
        cursor += 0.5 + audio.size / RATE
    samples = np.clip(np.concatenate(pieces), -1.0, 1.0)
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(RATE)
        wav.writeframes((samples * 32767).astype("<i2").tobytes())
    return AudioInput(path=path, segments=segments)


def measure(seed: int, calls: int, tmp: Path) -> dict[str, list[bool]]:
    """ "clean"/"injected" -> per entity turn, did the judge rate it 0?"""
    judge = make_judge({"name": "offline", "params": {"cache_dir": str(tmp / "lm")}})
    rng = random.Random(seed)
    out: dict[str, list[bool]] = {"clean": [], "injected": []}
    for k in range(calls):
        intended, wrong = call_pair(rng)
        for kind, spoken in (("clean", intended), ("injected", wrong)):
            inputs = SpeechFidelityInput(role="assistant", turns=intended, variant="agent_entities")
            task = JudgeTask(
                metric="agent_speech_fidelity",
                inputs=inputs,
                audio=speak(spoken, tmp / f"{kind}{seed}_{k}.wav"),
            )
            verdict = judge.evaluate(task)
            assert verdict.error is None, verdict.error
            turns = json.loads(verdict.raw_text)["turns"]
            assert all(t["has_entities"] for t in turns)
            out[kind] += [t["rating"] == 0 for t in turns]
    return out


@pytest.fixture(scope="module")
def flagged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[bool]]:
    return measure(DEFAULT_SEED, CALLS, tmp_path_factory.mktemp("injected"))


def test_injected_entity_errors_are_caught(flagged: dict[str, list[bool]]) -> None:
    caught = flagged["injected"]
    assert len(caught) == 4 * CALLS
    assert sum(caught) / len(caught) >= 0.90, sum(caught)


def test_few_false_alarms_on_clean_calls(flagged: dict[str, list[bool]]) -> None:
    alarms = flagged["clean"]
    assert sum(alarms) / len(alarms) <= 0.05, sum(alarms)


HELD_OUT = {"seeds 4-11": range(4, 12), "seeds 12-19": range(12, 20)}


@pytest.mark.slow
@pytest.mark.timeout(3600)  # ~8 x 60 s of CPU per set; far longer on a shared machine
@pytest.mark.parametrize("seeds", list(HELD_OUT.values()), ids=list(HELD_OUT))
def test_bounds_hold_on_held_out_seeds(tmp_path: Path, seeds: range) -> None:
    """The same bounds over 8 seeds x CALLS calls (192 turns of each kind)."""
    caught: list[bool] = []
    alarms: list[bool] = []
    for seed in seeds:
        found = measure(seed, CALLS, tmp_path)
        caught += found["injected"]
        alarms += found["clean"]
    print(f"caught {sum(caught)}/{len(caught)}, false alarms {sum(alarms)}/{len(alarms)}")
    assert sum(caught) / len(caught) >= 0.90, sum(caught)
    assert sum(alarms) / len(alarms) <= 0.05, sum(alarms)
