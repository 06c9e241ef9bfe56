"""Audio mode on the virtual clock: real TTS/STT, a real socket, a measured timeline."""

from __future__ import annotations

import contextlib
import json
import wave
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from scenarios.loader import load_eva_scenarios
from scenarios.models import Scenario
from tasks.records import AttemptRecord
from tasks.simulate import SimulationConfig, simulate
from tasks.simulate import protocol as wire
from tasks.simulate.agents import AGENTS

Handler = Callable[[ServerConnection], Awaitable[None]]


def shortened(scenario: Scenario, lines: int) -> Scenario:
    """The record's first ``lines`` caller lines, then a goodbye (read-only flows only)."""
    trace: list[dict[str, Any]] = []
    said = 0
    for event in scenario.expected_trace:
        if event.get("event_type") == "user_utterance":
            said += 1
            if said > lines:
                break
        trace.append(event)
    trace.append({"event_type": "user_utterance", "utterance": "Okay, thank you. Goodbye."})
    return scenario.model_copy(update={"expected_trace": trace, "expected_db": scenario.initial_db})


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("simulate-cache")


@pytest.fixture(scope="module", params=["itsm/14", "airline/1.1.2"])
def short_call(
    request: pytest.FixtureRequest,
    eva_root: Path,
    cache_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> AttemptRecord:
    domain, record_id = str(request.param).split("/")
    scenario = shortened(load_eva_scenarios(eva_root, [domain], [record_id])[0], 2)
    audio_dir = tmp_path_factory.mktemp("short-call")
    config = SimulationConfig(mode="audio", audio_dir=audio_dir, cache_dir=cache_dir)
    return simulate(scenario, config)


def check_timeline(record: AttemptRecord) -> None:
    """Invariants every audio record must satisfy."""
    assert record.turns and record.turns[0].turn_id == 0 and record.turns[0].role == "assistant"
    for turn in record.turns:
        for segment in turn.segments:
            assert 0 <= segment.start_s <= segment.end_s <= record.duration_s + 0.05
        starts = [s.start_s for s in turn.segments]
        assert starts == sorted(starts)
    user_turns = record.turns_of("user")
    assert [t.turn_id for t in user_turns] == list(range(1, len(user_turns) + 1))
    said = [e for e in record.events if e.source == "caller" and e.kind == "decide"]
    assert len(user_turns) == len(said)
    assert all(t.intended_text for t in user_turns)
    for turn in record.turns_of("assistant"):
        if turn.latency_s is not None and not turn.interrupts:
            assert turn.latency_s >= 0
    for call in record.tool_calls:
        assert call.t_call_s is not None and call.t_response_s is not None
        assert 0 <= call.t_call_s <= call.t_response_s <= record.duration_s


def test_short_call_completes_over_real_audio(short_call: AttemptRecord) -> None:
    record = short_call
    assert record.status == "ok", record.error
    assert record.end_reason == "goodbye" and record.caller_ended
    assert record.mode == "audio" and record.clock == "virtual"
    check_timeline(record)
    greeting = record.turns[0]
    assert greeting.intended_text.startswith("Hello!") and "help" in greeting.heard_text
    assert greeting.segments
    answered = [t for t in record.turns_of("assistant") if t.turn_id > 0 and t.segments]
    assert answered and all(t.latency_s is not None and t.latency_s > 0.3 for t in answered)


def test_short_call_saves_time_aligned_tracks(short_call: AttemptRecord) -> None:
    tracks = {ref.track: ref for ref in short_call.audio}
    assert set(tracks) == {"caller", "caller_clean", "agent", "mixed"}
    for ref in tracks.values():
        with wave.open(ref.path) as wav:
            assert wav.getframerate() == ref.sample_rate and wav.getnchannels() == 1
            seconds = wav.getnframes() / wav.getframerate()
        assert abs(seconds - short_call.duration_s) < 0.1
        assert abs(ref.duration_s - seconds) < 0.01


def test_heard_text_comes_from_recognition(short_call: AttemptRecord) -> None:
    spoken = [t for t in short_call.turns if t.segments]
    assert any(t.heard_text and t.heard_text != t.intended_text for t in spoken)
    assert all(t.heard_text == t.heard_text.lower() for t in spoken)


def _caller_voice(record: AttemptRecord) -> dict[str, Any]:
    events = [e.data for e in record.events if e.kind == "caller_voice"]
    assert len(events) == 1
    return events[0]


@pytest.fixture
def one_line_call(
    eva_root: Path, cache_dir: Path, tmp_path: Path
) -> tuple[Scenario, SimulationConfig]:
    """A one-line caller turn of itsm/14 and the audio config to simulate it with."""
    scenario = shortened(load_eva_scenarios(eva_root, ["itsm"], ["14"])[0], 1)
    return scenario, SimulationConfig(mode="audio", cache_dir=cache_dir, audio_dir=tmp_path)


def test_accent_condition_changes_the_callers_voice(
    one_line_call: tuple[Scenario, SimulationConfig],
) -> None:
    """The accent draw reaches the caller's synthesiser (and is recorded), seeded per trial."""
    scenario, base = one_line_call
    clean = _caller_voice(simulate(scenario, base))
    accents = [
        _caller_voice(simulate(scenario, base.model_copy(update={"condition": "accent", **u})))
        for u in ({"trial": 0}, {"trial": 0}, {"trial": 1})
    ]
    assert all(a != clean for a in accents)
    assert accents[0] == accents[1]  # same seed, same voice
    assert accents[0] != accents[2]  # another trial, another draw


# ----------------------------------------------------------------------------- misbehaving agents


def fake_agent(name: str, handler: Handler) -> str:
    class FakeAgent:
        modes = frozenset({"audio"})

        def text_session(self, ctx: Any) -> Any:
            raise NotImplementedError

        @contextlib.asynccontextmanager
        async def serve(self, ctx: Any) -> AsyncIterator[str]:
            async with serve(handler, "127.0.0.1", 0) as server:
                port = next(iter(server.sockets)).getsockname()[1]
                yield f"ws://127.0.0.1:{port}/ws"

    if name not in AGENTS:
        AGENTS.add(name, FakeAgent)  # type: ignore[arg-type]
    return name


async def silent(ws: ServerConnection) -> None:
    """Acknowledges the clock, never says a word."""
    async for raw in ws:
        message = wire.parse_caller_message(raw)
        if isinstance(message, wire.Sync):
            await ws.send(wire.encode(message))


async def garbage(ws: ServerConnection) -> None:
    async for _ in ws:
        await ws.send("this is not json")


async def hangs_up(ws: ServerConnection) -> None:
    await ws.recv()
    await ws.close()


async def mute_clock(ws: ServerConnection) -> None:
    """Never acknowledges a tick (a hung agent)."""
    async for _ in ws:
        pass


@pytest.fixture(scope="module")
def tiny(eva_root: Path) -> Scenario:
    return shortened(load_eva_scenarios(eva_root, ["itsm"], ["14"])[0], 1)


@pytest.mark.parametrize(
    ("handler", "reason", "extra"),
    [
        (silent, "agent_timeout", {"agent_timeout_s": 4.0}),
        (garbage, "protocol_error", {}),
        (hangs_up, "agent_disconnected", {}),
        (mute_clock, "agent_timeout", {"sync_timeout_s": 1.0}),
    ],
)
def test_misbehaving_agents_end_with_a_reason(
    tiny: Scenario, cache_dir: Path, handler: Handler, reason: str, extra: dict[str, Any]
) -> None:
    name = fake_agent(f"test-{handler.__name__}", handler)
    config = SimulationConfig(mode="audio", agent=name, cache_dir=cache_dir, **extra)
    record = simulate(tiny, config)
    assert record.end_reason == reason, record.error
    assert record.status == "agent_error"
    assert record.error
    assert record.wall_s < 60  # ended by its timeout, never hung
    # An agent that meters nothing is timed by the wall clock, so its timeouts still work.
    assert [e.data["timing"] for e in record.events if e.kind == "virtual_clock"] == ["wall"]
    assert record.final_db_hash == record.initial_db_hash


# ----------------------------------------------------------------------------- full records


@pytest.mark.slow
@pytest.mark.parametrize("key", ["airline/1.1.2", "itsm/14", "medical_hr/11.1"])
def test_full_records_over_audio(eva_root: Path, cache_dir: Path, key: str) -> None:
    domain, record_id = key.split("/")
    scenario = load_eva_scenarios(eva_root, [domain], [record_id])[0]
    record = simulate(scenario, SimulationConfig(mode="audio", cache_dir=cache_dir))
    assert record.status in ("ok", "agent_error"), record.error
    check_timeline(record)
    assert json.loads(record.model_dump_json())["scenario_id"] == record_id


def test_a_regenerated_attempt_gets_another_delivery(
    one_line_call: tuple[Scenario, SimulationConfig],
) -> None:
    """eSpeak is deterministic: a retake must not replay the delivery that failed."""
    scenario, base = one_line_call
    first = _caller_voice(simulate(scenario, base))
    retake = _caller_voice(simulate(scenario, base.model_copy(update={"attempt": 2})))
    assert retake["voice"] == first["voice"]
    assert (retake["rate_wpm"], retake["pitch"]) != (first["rate_wpm"], first["pitch"])
