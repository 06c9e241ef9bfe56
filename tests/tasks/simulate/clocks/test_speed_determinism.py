"""Speed-ups must not change results: the fast code paths and the ones they replaced give
the same audio, transcripts and timeline on one short audio trial of the reference cascade.

Each speed-up (issue 14) keeps its slow form reachable here: recognisers built anew
for every call (no pool), silence filtered like any audio, the filter design
``resample_poly`` does itself, and the VAD as it was (``np.mean`` per frame, every chunk
through the pending buffer). The agent's compute clock is held at zero, because on
the virtual clock call time advances by the agent's measured CPU time, which varies run to
run (and which speeding the agent up is meant to shrink); with it fixed, the timeline is
a function of the code and the seed only.
"""

from __future__ import annotations

import hashlib
import json
from math import gcd
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scenarios.loader import load_scenario_dir
from scenarios.models import Scenario
from tasks.records import AttemptRecord
from tasks.simulate import SimulationConfig, simulate
from tasks.simulate import meter as meter_module
from tasks.voice import telephony
from tasks.voice.recognizer_pool import POOL
from tasks.voice.vad import EnergyVAD, VadEvent
from tests.tasks.simulate.clocks.short_calls import first_lines

REPO_ROOT = Path(__file__).resolve().parents[4]


def short_pack_scenario(key: str, lines: int) -> Scenario:
    """The built-in record's first ``lines`` caller lines, then a goodbye."""
    scenario = next(s for s in load_scenario_dir(REPO_ROOT / "scenarios" / "pack") if s.key == key)
    return first_lines(scenario, lines)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:20]


def fingerprint(record: AttemptRecord) -> dict[str, Any]:
    """What a trial stored, minus wall-clock figures: hashes plus readable transcripts."""
    stored = record.model_dump(mode="json", exclude={"wall_s", "stage_seconds", "audio"})
    return {
        "end_reason": record.end_reason,
        "duration_s": record.duration_s,
        "heard": [[t.role, t.turn_id, t.heard_text] for t in record.turns],
        "tracks": {ref.track: _sha(Path(ref.path).read_bytes()) for ref in record.audio},
        "events": _sha(json.dumps(stored["events"], sort_keys=True).encode()),
        "record": _sha(json.dumps(stored, sort_keys=True).encode()),
    }


# ----------------------------------------------------------------------------- slow forms


def reference_process_samples(self: EnergyVAD, samples: np.ndarray, rate: int) -> list[VadEvent]:
    if self._rate is None:
        self._rate = rate
    self._pending = np.concatenate([self._pending, samples])
    n = self._frame_len()
    events: list[VadEvent] = []
    while self._pending.size >= n:
        frame, self._pending = self._pending[:n], self._pending[n:]
        events.extend(self._step(frame))
    return events


def reference_level(frame: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(frame, dtype=np.float64))))


def use_reference_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(POOL, "enabled", False)
    monkeypatch.setattr(telephony, "_silent_wire", lambda clip: None)
    monkeypatch.setattr(telephony, "_lowpass", lambda up, down: ("kaiser", 5.0))
    monkeypatch.setattr(EnergyVAD, "process_samples", reference_process_samples)
    monkeypatch.setattr("tasks.voice.vad._frame_rms", reference_level)


# ----------------------------------------------------------------------------- unit level


@pytest.mark.parametrize(
    ("src", "dst"), [(16000, 8000), (8000, 16000), (22050, 8000), (22050, 16000)]
)
def test_resample_with_the_cached_filter_is_resample_poly(src: int, dst: int) -> None:
    from scipy.signal import resample_poly

    rng = np.random.default_rng(src + dst)
    for n in (1, 320, 4801):
        x = (rng.standard_normal(n) * 0.3).clip(-1, 1).astype(np.float32)
        got = telephony.resample(telephony.Clip(x, src), dst).samples
        g = gcd(src, dst)
        want = np.clip(resample_poly(x.astype(np.float64), dst // g, src // g), -1, 1)
        assert got.tobytes() == want.astype(np.float32).tobytes()


def test_wire_samples_is_from_wire_for_every_code() -> None:
    codes = bytes(range(256))
    reference = telephony.Clip.from_int16(telephony.ulaw_decode(codes), telephony.WIRE_RATE)
    assert telephony.wire_samples(codes).tobytes() == reference.samples.tobytes()
    assert telephony.from_wire(codes).samples.tobytes() == reference.samples.tobytes()
    with pytest.raises(telephony.AudioError, match="non-empty"):
        telephony.wire_samples(b"")


@pytest.mark.parametrize("rate", [8000, 16000, 22050])
def test_silence_goes_to_the_wire_as_the_full_path_sends_it(
    monkeypatch: pytest.MonkeyPatch, rate: int
) -> None:
    clips = [telephony.Clip(np.zeros(n, np.float32), rate) for n in (1, 2, 3, 159, 320, 441, 2205)]
    fast = [telephony.to_wire(c) for c in clips]
    assert telephony._silent_wire(telephony.Clip(np.full(4, 1e-4, np.float32), rate)) is None
    monkeypatch.setattr(telephony, "_silent_wire", lambda clip: None)
    assert fast == [telephony.to_wire(c) for c in clips]


def test_vad_fast_path_matches_the_buffered_one(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    envelope = np.repeat(rng.random(400) < 0.4, 160) * 0.3 + 0.002
    audio = (rng.standard_normal(envelope.size) * envelope).astype(np.float32)
    cuts = [160] * 150 + [37, 283, 160, 1000, 1] + [160] * 40
    runs = []
    for reference in (False, True):
        if reference:
            use_reference_paths(monkeypatch)
        vad, events, at = EnergyVAD(), [], 0
        for size in cuts:
            events += vad.process_samples(audio[at : at + size], 8000)
            at += size
        runs.append((events + vad.flush(), vad.levels_db))
    assert runs[0][0] and runs[0] == runs[1]


# ----------------------------------------------------------------------------- one trial


def run_trial(cache_dir: Path, audio_dir: Path) -> dict[str, Any]:
    config = SimulationConfig(mode="audio", seed=7, audio_dir=audio_dir, cache_dir=cache_dir)
    frozen = dict(meter_module._CLOCKS)
    meter_module._CLOCKS.update({"cpu": lambda: 0.0, "wall": lambda: 0.0})
    try:
        return fingerprint(simulate(short_pack_scenario("airline/air-001", 1), config))
    finally:
        meter_module._CLOCKS.update(frozen)


def test_fast_and_reference_paths_store_the_same_trial(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The second fast run reuses the first one's recognisers (reset), the reference run
    builds new ones and takes every slow path."""
    reused = POOL.reused
    fast = [run_trial(tmp_path / "cache", tmp_path / f"fast{i}") for i in range(2)]
    assert POOL.reused == reused + 2  # the caller's and the agent's ears
    use_reference_paths(monkeypatch)
    reference = run_trial(tmp_path / "cache", tmp_path / "reference")
    assert fast[0]["end_reason"] == "goodbye" and len(fast[0]["heard"]) >= 4
    assert fast[0]["heard"] == fast[1]["heard"] == reference["heard"]
    assert fast[0] == fast[1] == reference
