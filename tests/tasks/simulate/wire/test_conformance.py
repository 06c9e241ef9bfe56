"""Protocol conformance: an agent written only from docs/agent-protocol.md against the harness.

``DocsAgent`` below imports nothing from ``tasks.simulate``: it is what an agent builder
would write from the document (Twilio framing, the tool bridge in ``customParameters``,
marks, ``agent_text``, ``end_call``), and it checks what the document promises about the
caller's side of the wire while the call runs.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from websockets.asyncio.server import ServerConnection, serve

from scenarios.loader import load_eva_scenarios
from scenarios.models import Scenario
from tasks.records import AttemptRecord
from tasks.simulate.clocks.realtime import simulate_realtime_async
from tasks.simulate.config import SimulationConfig

REPLY_DELAY_S = 0.4
REPLY_S = 0.5
ANSWERS = 2


def ulaw(samples: np.ndarray) -> bytes:
    """G.711 mu-law encoding of floats in [-1, 1] (the textbook formula)."""
    pcm = np.clip(samples * 32767, -32635, 32635).astype(np.int32)
    sign = (pcm < 0).astype(np.int32)
    magnitude = np.abs(pcm) + 0x84
    exponent = np.clip(np.floor(np.log2(magnitude)).astype(np.int32) - 7, 0, 7)
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    return (~((sign << 7) | (exponent << 4) | mantissa) & 0xFF).astype(np.uint8).tobytes()


def beep(seconds: float) -> bytes:
    t = np.arange(int(8000 * seconds)) / 8000
    return ulaw(0.3 * np.sin(2 * np.pi * 500 * t))


class DocsAgent:
    """Greets, answers each caller turn (``user_speech_stop`` hint) after a fixed delay,
    calls one tool through the bridge, and hangs up after its last answer."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.caller_frames: list[tuple[float, int, int]] = []  # (arrival, bytes, timestamp)
        self.marks_sent: dict[str, float] = {}
        self.marks_echoed: dict[str, float] = {}
        self.start: dict[str, Any] = {}
        self.tool_reply: dict[str, Any] = {}
        self.tool_names: list[str] = []

    async def call(self, ws: ServerConnection) -> None:
        answers = 0
        async for raw in ws:
            msg = json.loads(raw)
            self.events.append(msg["event"])
            if msg["event"] == "start":
                self.start = msg
                await self.use_tools(msg["start"]["customParameters"])
                await self.say(ws, "greeting", "Hello, this is the docs agent.")
            elif msg["event"] == "media":
                payload = base64.b64decode(msg["media"]["payload"])
                stamp = int(msg["media"]["timestamp"])
                self.caller_frames.append((time.perf_counter(), len(payload), stamp))
            elif msg["event"] == "mark":
                self.marks_echoed[msg["mark"]["name"]] = time.perf_counter()
            elif msg["event"] == "user_speech_stop":
                await asyncio.sleep(REPLY_DELAY_S)
                answers += 1
                await self.say(ws, f"answer-{answers}", "Thank you.")
                if answers == ANSWERS:
                    await asyncio.sleep(REPLY_S + 0.2)
                    await self.send(ws, {"event": "end_call", "reason": "goodbye"})
            elif msg["event"] == "sync":
                await ws.send(raw)
            elif msg["event"] == "stop":
                break

    async def send(self, ws: ServerConnection, msg: dict[str, Any]) -> None:
        await ws.send(json.dumps({**msg, "streamSid": self.start["streamSid"]}))

    async def say(self, ws: ServerConnection, mark: str, text: str) -> None:
        await self.send(ws, {"event": "agent_text", "kind": "response", "text": text})
        audio = beep(REPLY_S)
        for i in range(0, len(audio), 160):
            chunk = base64.b64encode(audio[i : i + 160]).decode()
            await self.send(ws, {"event": "media", "media": {"payload": chunk}})
        self.marks_sent[mark] = time.perf_counter()
        await self.send(ws, {"event": "mark", "mark": {"name": mark}})

    async def use_tools(self, params: dict[str, str]) -> None:
        headers = {"Authorization": f"Bearer {params['tools_token']}"}
        async with httpx.AsyncClient(headers=headers, trust_env=False) as client:
            schemas = (await client.get(params["tools_url"])).json()
            self.tool_names = [s["function"]["name"] for s in schemas]
            body = {"confirmation_number": "ZK3FFW", "last_name": "rodriguez"}
            reply = await client.post(f"{params['tools_url']}/get_reservation", json=body)
            self.tool_reply = reply.json()


@pytest.fixture(scope="module")
def scenario(eva_root: Path) -> Scenario:
    return load_eva_scenarios(eva_root, record_ids=["airline/1.1.2"])[0]


def run_call(scenario: Scenario, cache: Path) -> tuple[DocsAgent, AttemptRecord]:
    agent = DocsAgent()

    async def run() -> AttemptRecord:
        async with serve(agent.call, "127.0.0.1", 0) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            config = SimulationConfig(
                agent=f"ws://127.0.0.1:{port}/ws",
                mode="audio",
                clock="realtime",
                max_duration_s=20.0,
                cache_dir=cache,
            )
            return await simulate_realtime_async(scenario, config)

    return agent, asyncio.run(run())


def test_an_agent_built_from_the_docs_completes_a_call(scenario: Scenario, tmp_path: Path) -> None:
    agent, record = run_call(scenario, tmp_path / "cache")
    # The call: ended by the agent's end_call, both sides spoke, tools went through the bridge.
    assert (record.end_reason, record.status) == ("goodbye", "ok"), record.error
    assert agent.events[:2] == ["connected", "start"]
    media_format = agent.start["start"]["mediaFormat"]
    assert media_format == {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}
    assert agent.start["start"]["streamSid"] == agent.start["streamSid"]
    assert "get_reservation" in agent.tool_names
    assert agent.tool_reply["status"] == "success"
    assert [c.tool_name for c in record.tool_calls] == ["get_reservation"]
    assert "user_speech_start" in agent.events and "user_speech_stop" in agent.events
    assert "sync" not in agent.events  # real-time clock: never waits for the agent
    # Caller media: one 160-byte frame per message, stamped 20 ms apart, paced in real time.
    sizes = {size for _, size, _ in agent.caller_frames}
    stamps = [stamp for _, _, stamp in agent.caller_frames]
    assert sizes == {160}
    assert stamps == list(range(0, 20 * len(stamps), 20))
    wall = agent.caller_frames[-1][0] - agent.caller_frames[0][0]
    assert wall == pytest.approx((len(stamps) - 1) * 0.02, rel=0.05)
    # Marks come back once their audio has been played (it is played in real time).
    for name, sent in agent.marks_sent.items():
        assert agent.marks_echoed[name] - sent >= REPLY_S - 0.03, name
    # Turns: greeting + ANSWERS answers, each found by the harness VAD, latency measured.
    answers = [t for t in record.turns_of("assistant") if t.turn_id > 0]
    assert [t.intended_text for t in answers] == ["Thank you."] * ANSWERS
    assert len(record.turns_of("user")) == ANSWERS
    for turn in answers:
        assert turn.latency_s is not None
        # user_speech_stop marks the utterance's end, which trails its last speech.
        assert REPLY_DELAY_S - 0.03 <= turn.latency_s < REPLY_DELAY_S + 1.0
        assert turn.end_s is not None and turn.start_s is not None
        assert turn.end_s - turn.start_s == pytest.approx(REPLY_S, abs=0.03)
