"""perturbations.channel and seeding: same seed, same bytes; each utterance seeded alone."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from perturbations.audio import AudioError, Clip
from perturbations.channel import make_channel
from perturbations.conditions import CONDITIONS, get_condition
from perturbations.seeding import derive_seed

RATE = 16000


@pytest.fixture(scope="module")
def speechlike() -> Clip:
    t = np.arange(RATE) / RATE
    return Clip(
        (0.1 * np.sin(2 * np.pi * 200 * t) * (np.sin(2 * np.pi * 3 * t) > 0)).astype(np.float32),
        RATE,
    )


def _session(name: str, seed: int, clip: Clip) -> bytes:
    channel = make_channel(name, seed)
    parts = [channel.speech(clip), channel.ambient(0.3, RATE), channel.speech(clip)]
    return b"".join(p.samples.tobytes() for p in parts) + channel.voice().model_dump_json().encode()


@pytest.mark.parametrize("name", ["clean", "accent", "noise", "accent+noise", "connection"])
def test_same_seed_gives_identical_bytes(name: str, speechlike: Clip) -> None:
    seed = derive_seed("run", "scenario-1", 0, name)
    assert _session(name, seed, speechlike) == _session(name, seed, speechlike)
    if name != "clean":
        assert _session(name, seed, speechlike) != _session(name, seed + 1, speechlike)


def test_noise_is_shared_between_noise_and_accent_noise(speechlike: Clip) -> None:
    a = make_channel("noise", 11).speech(speechlike)
    b = make_channel("accent+noise", 11).speech(speechlike)
    assert a.same_as(b)  # each axis has its own random stream


def _utterances(name: str, gaps: list[list[float]], clips: list[Clip]) -> list[bytes]:
    """Speak ``clips`` through one channel, with the open mic sending ``gaps[i]`` (seconds,
    in pieces) before utterance ``i``: what an agent's timing changes, and nothing else."""
    channel = make_channel(name, derive_seed("run", "scenario-1", name, 0))
    spoken = []
    for gap, clip in zip(gaps, clips, strict=True):
        for seconds in gap:
            channel.ambient(seconds, RATE)
        spoken.append(channel.speech(clip).samples.tobytes())
    return spoken


@pytest.mark.parametrize("name", sorted(CONDITIONS.names()))
def test_caller_utterances_do_not_depend_on_the_agents_timing(name: str, speechlike: Clip) -> None:
    """A quick agent and a slow one (other gaps, cut into other pieces) hear the same
    caller: every utterance byte for byte, for every built-in condition."""
    clips = [speechlike, Clip(speechlike.samples[: RATE // 2], RATE), speechlike]
    quick = _utterances(name, [[0.3], [0.02] * 12, [0.5]], clips)
    slow = _utterances(name, [[2.7, 0.4], [5.0, 5.0, 1.3], []], clips)
    assert quick == slow
    spec = get_condition(name)
    if spec.noise is not None or spec.connection is not None:  # each utterance drawn alone
        assert quick[0] != speechlike.samples.tobytes()
        assert quick[0] != quick[2]


def test_ambient_runs_on_within_a_gap_and_each_gap_has_its_own_start(
    speechlike: Clip,
) -> None:
    one, two = make_channel("noise", 5), make_channel("noise", 5)
    first, second = one.ambient(0.5, RATE), one.ambient(0.5, RATE)
    both = two.ambient(1.0, RATE)
    assert np.array_equal(both.samples, np.concatenate([first.samples, second.samples]))
    assert first.dbfs() > -60  # noise, not silence
    # Gap 1 starts where it is seeded, however long gap 0 lasted.
    one.speech(speechlike)
    two.speech(speechlike)
    after_one, after_two = one.ambient(0.2, RATE), two.ambient(0.2, RATE)
    assert after_one.same_as(after_two)
    assert not np.array_equal(after_one.samples, two.ambient(0.2, RATE).samples)
    assert (one.utterances, two.utterances) == (1, 1)


def test_noise_axis_is_drawn_per_utterance_not_from_a_shared_cursor(
    speechlike: Clip,
) -> None:
    """Utterance k of a channel that sent no ambient audio equals utterance k of one that
    sent seconds of it (a shared cursor would have moved on)."""
    quiet, chatty = make_channel("noise", 9), make_channel("noise", 9)
    quiet.speech(speechlike)
    chatty.speech(speechlike)
    chatty.ambient(7.3, RATE)
    assert quiet.speech(speechlike).same_as(chatty.speech(speechlike))


def test_clean_channel_is_transparent(speechlike: Clip) -> None:
    channel = make_channel(get_condition("clean"), 1)
    assert channel.speech(speechlike) is speechlike
    assert channel.ambient(0.2, RATE).dbfs() == float("-inf")


def test_channel_rejects_a_rate_change(speechlike: Clip) -> None:
    channel = make_channel("noise", 1)
    channel.speech(speechlike)
    with pytest.raises(AudioError, match="16000 Hz"):
        channel.ambient(0.1, 8000)


def test_derive_seed_is_stable_across_processes() -> None:
    code = "from perturbations.seeding import derive_seed; print(derive_seed('r', 's', 3, 'noise'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout) == derive_seed("r", "s", 3, "noise")
    assert derive_seed("a", "bc") != derive_seed("ab", "c")
    assert derive_seed(1) != derive_seed("1")
    assert 0 <= derive_seed("x") < 2**63
