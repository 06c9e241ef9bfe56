"""The served agent's own account of its response times (the ``agent_timing`` event).

``evaflow serve-agent`` watches the frames it relays: the caller's audio as it arrives
and the agent's audio as it leaves. With the same VAD the harness uses, it finds when the
caller stopped speaking (arrival of the last speech frame, plus its 20 ms) and when the
agent's first speech frame starts playing (a phone line plays a frame when it arrives or
when the audio queued before it has played, whichever is later), and reports the
difference after each reply. Measured on the agent's side of the socket and its own
clock, it lets a test check the harness's timeline against the agent's real time.
"""

from __future__ import annotations

import json
import time
from typing import Any

from perturbations.audio import Clip
from tasks.simulate.wire import protocol as wire
from tasks.simulate.wire.wire_checks import TIMING_EVENT
from tasks.voice.telephony import FRAME_BYTES, ULAW_SILENCE, WIRE_RATE, from_wire
from tasks.voice.vad import EnergyVAD

FRAME_S = 0.02
_SILENT_FRAME = bytes([ULAW_SILENCE]) * FRAME_BYTES


class TurnTimer:
    """Feed it both directions of a call; it returns ``agent_timing`` frames to send."""

    def __init__(self, clock: Any = time.perf_counter) -> None:
        self.clock = clock
        self.origin: float | None = None  # wall time of the agent stream's frame 0
        self.caller_vad = EnergyVAD()
        self.caller_arrivals: list[float] = []
        self.agent_vad = EnergyVAD()
        self.agent_frames = 0  # frames on the agent's play-out grid so far
        self.queued_until = 0.0  # wall time the agent audio sent so far finishes playing
        self.caller_done: float | None = None  # wall end of the caller's last speech
        self.stream_sid = ""

    def on_caller(self, raw: Any) -> None:
        now = self.clock()
        message = wire.parse_caller_message(raw)
        if isinstance(message, wire.Start):
            self.stream_sid = message.streamSid
            self.origin = self.queued_until = now
        elif isinstance(message, wire.Media):
            audio = message.media.audio()
            for i in range(0, len(audio), FRAME_BYTES):
                self.caller_arrivals.append(now)
                chunk = audio[i : i + FRAME_BYTES].ljust(FRAME_BYTES, _SILENT_FRAME[:1])
                for event in self.caller_vad.process(from_wire(chunk)):
                    self._caller_event(event.kind, event.time_s)

    def _caller_event(self, kind: str, time_s: float) -> None:
        if kind == "speech_start":
            self.caller_done = None
            return
        last = min(round(time_s / FRAME_S) - 1, len(self.caller_arrivals) - 1)
        self.caller_done = self.caller_arrivals[max(last, 0)] + FRAME_S

    def on_agent(self, raw: Any) -> list[str]:
        now = self.clock()
        if self.origin is None:
            return []
        message = wire.parse_agent_message(raw)
        if isinstance(message, wire.Clear):
            self.queued_until = now
            return []
        if not isinstance(message, wire.Media):
            return []
        audio = message.media.audio()
        start = max(now, self.queued_until)
        self.queued_until = start + len(audio) / WIRE_RATE
        out: list[str] = []
        gap = int(round((start - self._grid_end()) / FRAME_S))
        for _ in range(max(gap, 0)):
            out += self._play(_SILENT_FRAME)
        for i in range(0, len(audio), FRAME_BYTES):
            out += self._play(audio[i : i + FRAME_BYTES].ljust(FRAME_BYTES, _SILENT_FRAME[:1]))
        return out

    def _grid_end(self) -> float:
        assert self.origin is not None
        return self.origin + self.agent_frames * FRAME_S

    def _play(self, frame: bytes) -> list[str]:
        self.agent_frames += 1
        out = []
        for event in self.agent_vad.process(Clip(from_wire(frame).samples, WIRE_RATE)):
            if event.kind == "speech_start" and self.caller_done is not None:
                assert self.origin is not None
                started = self.origin + event.time_s
                latency_ms = round((started - self.caller_done) * 1000, 3)
                self.caller_done = None
                body = {"event": TIMING_EVENT, "streamSid": self.stream_sid}
                out.append(json.dumps({**body, "latency_ms": latency_ms, "measured_by": "relay"}))
        return out
