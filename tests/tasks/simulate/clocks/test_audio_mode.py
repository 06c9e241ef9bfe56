"""Audio mode on the virtual clock: real TTS/STT, a real socket, a measured timeline."""

from __future__ import annotations

import contextlib
import json
import wave
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.server import ServerConnection, serve

from perturbations import CONDITIONS, Clip, VoiceSpec
from perturbations.channel import Channel, make_channel
from scenarios.loader import load_eva_scenarios
from scenarios.models import Scenario
from tasks.records import AttemptRecord
from tasks.simulate import SimulationConfig, simulate
from tasks.simulate.agents import AGENTS
from tasks.simulate.channel import AMBIENT_CHUNK_S, AmbientFeed, channel_seed
from tasks.simulate.clocks.call import CLEAN_FRAME
from tasks.simulate.clocks.tracks import CLEAN_RATE
from tasks.simulate.dialogue.script import build_script
from tasks.simulate.wire import protocol as wire
from tests.tasks.simulate.clocks.short_calls import first_lines

Handler = Callable[[ServerConnection], Awaitable[None]]


def shortened(scenario: Scenario, lines: int) -> Scenario:
    """The record's first ``lines`` caller lines, then a goodbye (read-only flows only)."""
    return first_lines(scenario, lines).model_copy(update={"expected_db": scenario.initial_db})


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


EVA_COMPOSITES = ["EVA-A_pass", "EVA-X_pass", "EVA-A_mean", "EVA-X_mean"]


@pytest.mark.parametrize(
    "key",
    [
        "itsm/14",  # the shortest full record: part of every run (about 30 s here)
        pytest.param("airline/1.1.2", marks=pytest.mark.slow),
        pytest.param("medical_hr/11.1", marks=pytest.mark.slow),
    ],
)
def test_full_record_over_audio_is_simulated_and_scored(
    eva_root: Path, tmp_path: Path, key: str
) -> None:
    """A whole EVA record, not a shortened one, through the pipeline's own attempt: the
    call over real audio, then every metric, the composites and the validity verdict."""
    from tasks.config import parse_config
    from tasks.sources import load_source
    from tasks.trial import expand_trials, judge_kept, run_attempt

    domain, record_id = key.split("/")
    config = parse_config(
        {
            "run_id": "full-audio",
            "store": str(tmp_path / "store"),
            "scenarios": {"eva_root": str(eva_root), "domains": [domain], "records": [record_id]},
            "mode": "audio",
            "conditions": ["clean"],
            "trials": 1,
        }
    )
    (scenario,) = load_source(config.scenarios)
    (spec,) = expand_trials(config, [scenario], str(tmp_path / "audio"))
    result = run_attempt(spec, scenario, 1)
    # An attempt is validated alone; the full metric set waits for the trial to keep it.
    assert "task_completion" not in {s.name for s in result.scores}
    result = judge_kept(spec, scenario, result)
    record = result.record
    assert record.mode == "audio" and record.clock == "virtual"
    assert record.end_reason == "goodbye" and record.status in ("ok", "invalid"), record.error
    assert len(record.turns) >= 2 * len(build_script(scenario).user_lines)
    check_timeline(record)
    assert json.loads(record.model_dump_json())["scenario_id"] == record_id
    scores = {s.name: s for s in result.scores}
    assert scores["task_completion"].normalized_score is not None
    assert all(scores[name].normalized_score is not None for name in EVA_COMPOSITES)
    assert "valid" in result.validation and record.stage_seconds["score"] > 0
    assert {ref.track for ref in record.audio} == {"caller", "caller_clean", "agent", "mixed"}


def test_a_regenerated_attempt_gets_another_delivery(
    one_line_call: tuple[Scenario, SimulationConfig],
) -> None:
    """eSpeak is deterministic: a retake must not replay the delivery that failed."""
    scenario, base = one_line_call
    first = _caller_voice(simulate(scenario, base))
    retake = _caller_voice(simulate(scenario, base.model_copy(update={"attempt": 2})))
    assert retake["voice"] == first["voice"]
    assert (retake["rate_wpm"], retake["pitch"]) != (first["rate_wpm"], first["pitch"])


# ----------------------------------------------------------------------------- agent timing

AGENT_LINES = ["Hello! How can I help you today?", "Okay, noted."]


def paced_agent(delay_s: float, lines: list[bytes]) -> Handler:
    """Says the same lines, each ``delay_s`` after the caller stops talking (call time)."""

    async def handler(ws: ServerConnection) -> None:
        sid, due, said = "", 0, 0
        async for raw in ws:
            message = wire.parse_caller_message(raw)
            if isinstance(message, wire.Start):
                sid = message.streamSid
            elif isinstance(message, wire.UserSpeechStop):
                due = round(message.timestamp_ms / 20 + delay_s / 0.02)
            elif isinstance(message, wire.Sync):
                if due is not None and message.sync.tick >= due:
                    await ws.send(wire.media_message(sid, lines[min(said, len(lines) - 1)]))
                    due, said = None, said + 1
                await ws.send(wire.encode(message))

    return handler


@pytest.fixture(scope="module")
def agent_lines() -> list[bytes]:
    from tasks.voice.telephony import to_wire
    from tasks.voice.tts import synthesize

    return [to_wire(synthesize(line, VoiceSpec(voice="en-us"))) for line in AGENT_LINES]


def _caller_utterances(
    monkeypatch: pytest.MonkeyPatch, scenario: Scenario, config: SimulationConfig
) -> tuple[AttemptRecord, list[bytes]]:
    """The call, and every caller utterance as it left the caller's phone."""
    spoken: list[bytes] = []
    speech = Channel.speech

    def recording(self: Channel, clip: Clip) -> Clip:
        out = speech(self, clip)
        spoken.append(out.samples.tobytes())
        return out

    monkeypatch.setattr(Channel, "speech", recording)
    record = simulate(scenario, config)
    monkeypatch.setattr(Channel, "speech", speech)
    return record, spoken


@pytest.mark.parametrize("condition", sorted(CONDITIONS.names()))
def test_agents_with_other_timing_hear_byte_identical_caller_audio(
    monkeypatch: pytest.MonkeyPatch,
    tiny: Scenario,
    cache_dir: Path,
    agent_lines: list[bytes],
    condition: str,
) -> None:
    """A quick and a slow agent, the same words: the open mic sends seconds more ambient
    audio to the slow one, yet every caller utterance is the same bytes."""
    heard = []
    for delay_s in (0.3, 3.5):
        name = fake_agent(f"test-paced-{delay_s}", paced_agent(delay_s, agent_lines))
        config = SimulationConfig(
            mode="audio", agent=name, condition=condition, cache_dir=cache_dir, seed=3, trial=1
        )
        record, spoken = _caller_utterances(monkeypatch, tiny, config)
        assert record.end_reason == "goodbye", record.error
        heard.append((record.duration_s, spoken))
    (quick_s, quick), (slow_s, slow) = heard
    assert slow_s > quick_s + 2.5  # the slow agent really was slower
    assert len(quick) >= 2 and quick == slow


def test_open_mic_starts_each_gap_where_the_channel_seeds_it() -> None:
    """The feed drops what is left of its chunk when the caller speaks, so gap 1 sounds
    the same however much of gap 0 the agent's timing used up."""
    speech = Clip(np.full(1600, 0.1, np.float32), CLEAN_RATE)
    fed = make_channel("noise", 4)
    feed = AmbientFeed(fed, CLEAN_RATE, CLEAN_FRAME)
    for _ in range(7):
        feed.next_frame()
    fed.speech(speech)
    fresh = make_channel("noise", 4)
    fresh.speech(speech)
    expected = fresh.ambient(AMBIENT_CHUNK_S, CLEAN_RATE).samples[:CLEAN_FRAME]
    assert np.array_equal(feed.next_frame(), expected)


def test_channel_seed_leaves_the_agent_out(tiny: Scenario) -> None:
    base = SimulationConfig(mode="audio", condition="noise", seed=3, trial=1)
    seed = channel_seed(tiny, base)
    assert channel_seed(tiny, base.model_copy(update={"agent": "text"})) == seed
    for change in ({"trial": 2}, {"seed": 4}, {"condition": "accent+noise"}):
        assert channel_seed(tiny, base.model_copy(update=change)) != seed
