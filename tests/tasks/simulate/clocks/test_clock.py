"""The virtual clock times metered agents by their compute, so load does not move a timeline."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from scenarios.loader import load_eva_scenarios
from scenarios.models import Scenario
from tasks.records import AttemptRecord
from tasks.simulate import SimulationConfig, simulate
from tasks.simulate.clocks.clock import FRAME_S, VirtualClock
from tasks.simulate.meter import ComputeMeter
from tests.tasks.simulate.clocks.test_audio_mode import shortened
from tests.tasks.simulate.test_meter import gil_hog


def test_cpu_timing_advances_by_charged_compute_only() -> None:
    meter = ComputeMeter()
    meter.engage()
    clock = VirtualClock("cpu", meter)
    meter.add(0.1)  # the greeting, prepared before the first tick
    clock.start_tick(0)
    assert clock.timing == "cpu" and clock.now() == pytest.approx(0.1)
    clock.start_tick(3)
    time.sleep(0.05)  # waiting is not compute
    assert clock.now() == pytest.approx(3 * FRAME_S)
    assert clock.wall_elapsed() >= 0.05  # ...but the sync timeout still sees it
    meter.add(0.2)
    assert clock.elapsed() == pytest.approx(0.2)


def test_unmetered_agents_fall_back_to_wall_time() -> None:
    clock = VirtualClock("cpu", ComputeMeter())  # the agent never engaged the meter
    clock.start_tick(1)
    time.sleep(0.03)
    assert clock.timing == "wall" and clock.elapsed() >= 0.03
    assert VirtualClock().timing == "wall"
    with pytest.raises(ValueError):
        VirtualClock("cpu")


def test_no_timing_charges_nothing_for_compute_or_waiting() -> None:
    meter = ComputeMeter()
    meter.engage()
    clock = VirtualClock("none", meter)
    clock.start_tick(5)
    meter.add(0.4)
    time.sleep(0.02)
    assert clock.timing == "none" and clock.now() == pytest.approx(5 * FRAME_S)
    assert clock.wall_elapsed() >= 0.02  # the sync timeout still runs on the wall
    assert VirtualClock("none").now() == 0.0  # no meter needed


# ----------------------------------------------------------------------------- a whole call


@pytest.fixture(scope="module")
def two_turns(eva_root: Path) -> Scenario:
    return shortened(load_eva_scenarios(eva_root, ["itsm"], ["14"])[0], 2)


def call(scenario: Scenario, cache_dir: Path, timing: str) -> AttemptRecord:
    config = SimulationConfig(mode="audio", cache_dir=cache_dir, virtual_timing=timing)
    record = simulate(scenario, config)
    assert record.status == "ok", record.error
    return record


def latencies(record: AttemptRecord) -> list[float]:
    return [t.latency_s for t in record.turns_of("assistant") if t.latency_s is not None]


# Off by default: on two fresh-clone CI runs turn 2's CPU-charged latency varied by 0.14-0.22 s
# between two runs of the same call (once faster under load than quiet), with the per-domain
# agent LM (larger than the old per-scenario one); the tolerance cannot separate that from the
# wall-time regression it guards against (+0.26 s). Needs a quieter measure (issue 14).
@pytest.mark.slow
def test_agent_latencies_do_not_depend_on_load(two_turns: Scenario, tmp_path: Path) -> None:
    # The first call of a process decodes cold (lazy imports, caches): keep it out of the
    # comparison. It runs on the old wall timing, which the record must say.
    warm = call(two_turns, tmp_path, "wall")
    assert [e.data["timing"] for e in warm.events if e.kind == "virtual_clock"] == ["wall"]
    idle = call(two_turns, tmp_path, "cpu")
    # Like the caller's own recognition in a thread of this process; a 1 ms switch interval
    # keeps the loaded call short (with 5 ms its GIL hand-offs make it 2-6x slower).
    with gil_hog(switch_s=0.001):
        loaded = call(two_turns, tmp_path, "cpu")
    quiet, busy = latencies(idle), latencies(loaded)
    assert len(quiet) == len(busy) >= 2
    # Thread CPU time itself drifts 10-20 % when something else runs on the other core
    # (shared caches; this VM has no instruction counters): up to ~60 ms on the 0.3 s
    # decode of turn 2, plus a 20 ms tick of rounding. Wall-timed, this same load moved
    # the latencies by +80 to +260 ms (and by +600 ms with the default switch interval).
    # Measured up to 0.14 s on a long decode while 8 other processes loaded the machine; the
    # wall-timed accounting moved them by up to +0.26 s (+0.6 s at the default switch interval).
    assert busy == pytest.approx(quiet, abs=0.16), (quiet, busy, latencies(warm))
    (timing,) = [e.data for e in loaded.events if e.kind == "virtual_clock"]
    assert timing == {
        "timing": "cpu",
        "requested": "cpu",
        "metered": True,
        "agent_compute_s": timing["agent_compute_s"],
    }
    assert 0 < timing["agent_compute_s"] < loaded.wall_s
