"""The openai_realtime caller's rules without a network: when a response may be asked
for, what session.update says, which end_call is honoured, and the checks before a run."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from perturbations.audio import VoiceSpec
from scenarios.loader import load_scenario_dir
from scenarios.models import Scenario
from tasks.config import BenchmarkConfig, CallerSpec, ConfigError, SystemSpec
from tasks.config_checks import check_names
from tasks.simulate.callers import build_caller
from tasks.simulate.callers.openai_realtime import RealtimeCaller, RealtimeCallerParams, TurnGate
from tasks.simulate.config import SimulationConfig
from tasks.simulate.llm_prompts import (
    CALLER_ACCEPTED,
    CALLER_REFUSAL_GOODBYE,
    CALLER_REFUSAL_INFORMATION,
    caller_system_prompt,
)

PACK = Path(__file__).resolve().parents[4] / "scenarios" / "pack"


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return next(s for s in load_scenario_dir(PACK) if s.key == "airline/air-002")


def test_a_response_waits_for_a_transcription_two_quiet_seconds_and_no_active_one() -> None:
    gate = TurnGate(2.0)
    gate.heard(1.0, agent_audio=True)
    assert not gate.due(5.0), "no transcription yet"
    gate.transcribed = True
    assert not gate.due(2.98) and gate.due(3.0), "2 s after the last agent frame"
    gate.heard(3.5, agent_audio=True)  # the agent went on talking
    assert not gate.due(5.4) and gate.due(5.5)
    gate.heard(6.0, agent_audio=False)  # a quiet frame does not restart the wait
    assert gate.due(6.0)
    gate.requested()
    assert not gate.due(9.0), "one response at a time, and a new transcription is needed"
    gate.active = False
    assert not gate.due(9.0)
    gate.transcribed = True
    assert gate.due(9.0)


def test_session_update_carries_the_spec_settings(scenario: Scenario) -> None:
    caller = RealtimeCaller(scenario, RealtimeCallerParams())
    session = caller.session_config(VoiceSpec(rate_wpm=120))
    audio = session["audio"]
    assert audio["input"]["format"] == {"type": "audio/pcmu"}
    assert audio["input"]["transcription"] == {"model": "whisper-1"}
    assert audio["input"]["turn_detection"] == {
        "type": "server_vad",
        "threshold": 0.5,
        "prefix_padding_ms": 300,
        "silence_duration_ms": 500,
        "create_response": False,
        "interrupt_response": False,
        "idle_timeout_ms": 15000,
    }
    assert audio["output"]["format"] == {"type": "audio/pcm", "rate": 24000}
    assert audio["output"]["voice"] == "marin"  # air-002: user_persona_id 1
    assert audio["output"]["speed"] < 1.0  # a slow persona speaks slower
    assert [t["name"] for t in session["tools"]] == ["end_call"]
    assert session["tools"][0]["type"] == "function" and "parameters" in session["tools"][0]
    assert session["instructions"] == caller_system_prompt(scenario)
    male = scenario.model_copy(
        update={"user_config": {**scenario.user_config, "user_persona_id": 2, "gender": "man"}}
    )
    assert RealtimeCaller(male, RealtimeCallerParams()).voice_name == "cedar"


class _Conn:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.conversation = SimpleNamespace(item=SimpleNamespace(create=self._item))
        self.response = SimpleNamespace(create=self._response)
        self.input_audio_buffer = SimpleNamespace(append=self._append)

    async def _item(self, item: dict[str, Any]) -> None:
        self.sent.append(("item", item))

    async def _response(self) -> None:
        self.sent.append(("response.create", None))

    async def _append(self, audio: str) -> None:
        self.sent.append(("append", base64.b64decode(audio)))


def _ev(type_: str, **fields: Any) -> SimpleNamespace:
    return SimpleNamespace(type=type_, **fields)


async def _respond(caller: RealtimeCaller, text: str | None, end_call: bool) -> None:
    """One response: speech saying ``text`` (none for a silent one), then maybe end_call."""
    pcm = (np.sin(np.arange(2400) / 5) * 8000).astype("<i2").tobytes()
    await caller._on_event(_ev("response.created"))
    if text is not None:
        delta = base64.b64encode(pcm).decode()
        await caller._on_event(_ev("response.output_audio.delta", delta=delta))
        await caller._on_event(_ev("response.output_audio_transcript.done", transcript=text))
    if end_call:
        await caller._on_event(
            _ev(
                "response.function_call_arguments.done",
                name="end_call",
                call_id="c1",
                arguments="{}",
            )
        )
    await caller._on_event(_ev("response.done", response=SimpleNamespace(status="completed")))


def _outputs(conn: _Conn) -> list[str]:
    return [item["output"] for kind, item in conn.sent if kind == "item"]


def test_end_call_is_honoured_only_after_a_goodbye_and_never_with_information(
    scenario: Scenario,
) -> None:
    caller = RealtimeCaller(scenario, RealtimeCallerParams())
    conn = caller.conn = _Conn()
    code = str(scenario.user_goal["information_required"]["Booking confirmation code"])

    async def run() -> None:
        await _respond(caller, "Okay, I think that's everything.", end_call=True)
        await _respond(caller, f"It's {' '.join(code)}. Goodbye.", end_call=True)
        await _respond(caller, "Thanks!", end_call=True)  # the goodbye was its last turn

    asyncio.run(run())
    assert _outputs(conn) == [CALLER_REFUSAL_GOODBYE, CALLER_REFUSAL_INFORMATION, CALLER_ACCEPTED]
    turns = [caller.take_turn() for _ in range(3)]
    assert [t.turn.end_call for t in turns if t] == [False, False, True]
    assert all(t is not None and t.audio.rate == 24000 and t.audio.n_samples == 2400 for t in turns)
    assert caller.hung_up  # nothing left to say: the clock hangs up once it is played


def test_a_silent_end_call_needs_the_goodbye_said_before(scenario: Scenario) -> None:
    caller = RealtimeCaller(scenario, RealtimeCallerParams())
    conn = caller.conn = _Conn()

    async def run() -> None:
        await _respond(caller, "Yes, that works for me.", end_call=False)
        await _respond(caller, None, end_call=True)
        assert not caller.hung_up
        await _respond(caller, "Great, thank you, bye.", end_call=False)
        caller.take_turn(), caller.take_turn()
        await _respond(caller, None, end_call=True)

    asyncio.run(run())
    assert _outputs(conn) == [CALLER_REFUSAL_GOODBYE, CALLER_ACCEPTED]
    assert caller.hung_up


def test_the_line_goes_to_the_model_as_mulaw_every_250_ms_and_a_response_only_when_due(
    scenario: Scenario,
) -> None:
    caller = RealtimeCaller(scenario, RealtimeCallerParams())
    conn = caller.conn = _Conn()
    voiced = (np.sin(np.arange(160) / 3) * 0.3).astype(np.float32)

    async def run() -> None:
        for tick in range(100):  # 1 s of agent speech, then 1 s quiet
            t = (tick + 1) * 0.02
            await caller.hear(voiced if tick < 50 else np.zeros(160, np.float32), t, tick < 50)
            if tick == 60:
                await caller._on_event(
                    _ev("conversation.item.input_audio_transcription.completed", transcript="hi")
                )
        assert ("response.create", None) not in conn.sent, "only 1 s of quiet so far"
        for tick in range(100, 160):
            await caller.hear(np.zeros(160, np.float32), (tick + 1) * 0.02, False)

    asyncio.run(run())
    appended = [data for kind, data in conn.sent if kind == "append"]
    assert appended and all(len(a) == 2000 for a in appended)
    assert set(appended[-1]) == {0xFF}, "a quiet line is mu-law silence"
    assert len(set(appended[0])) > 10, "speech is the agent's audio"
    created = [i for i, (kind, _) in enumerate(conn.sent) if kind == "response.create"]
    assert len(created) == 1
    requested = [e for e in caller.events if e.kind == "caller_response_created"]
    assert requested and requested[0].t_s == pytest.approx(1.0 + 2.0, abs=0.021)


def _config(**fields: Any) -> BenchmarkConfig:
    fields = {"conditions": ["clean"], **fields}
    return BenchmarkConfig(caller=CallerSpec(name="openai_realtime"), **fields)


def test_preflight_names_the_missing_key_and_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError) as missing:
        check_names(_config(clock="realtime"))
    assert "OPENAI_API_KEY" in str(missing.value)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    check_names(_config(clock="realtime"))  # all there
    with pytest.raises(ConfigError) as virtual:
        check_names(_config(clock="virtual"))
    assert "openai_realtime" in str(virtual.value) and "clock: realtime" in str(virtual.value)
    external = [SystemSpec(name="mine", agent="ws://127.0.0.1:9/ws")]
    check_names(_config(clock="virtual", systems=external))  # a ws:// agent is real time
    with pytest.raises(ConfigError, match="accent"):
        check_names(_config(clock="realtime", conditions=["accent"]))
    with pytest.raises(ConfigError, match="female_voise"):
        check_names(
            _config(clock="realtime").model_copy(
                update={"caller": CallerSpec(name="openai_realtime", params={"female_voise": "x"})}
            )
        )


def test_the_virtual_clock_and_text_mode_refuse_it(scenario: Scenario, tmp_path: Path) -> None:
    from tasks.simulate import simulate

    config = SimulationConfig(mode="audio", caller="openai_realtime", cache_dir=tmp_path)
    record = simulate(scenario, config)
    assert record.status == "infra_error"
    assert "openai_realtime" in (record.error or "") and "real-time clock" in (record.error or "")
    caller = build_caller("openai_realtime", scenario, config)
    with pytest.raises(RuntimeError, match="real-time clock"):
        caller.respond("hello")  # type: ignore[union-attr]


def test_an_attempt_without_the_key_is_the_harness_failure_naming_it(
    scenario: Scenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tasks.simulate import simulate

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = SimulationConfig(
        mode="audio", clock="realtime", caller="openai_realtime", cache_dir=tmp_path
    )
    record = simulate(scenario, config)
    assert (record.status, record.end_reason) == ("infra_error", "harness_error")
    assert "OPENAI_API_KEY" in (record.error or "") and not record.turns_of("user")
