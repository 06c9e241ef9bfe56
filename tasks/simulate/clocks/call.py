"""The caller side of an audio call on the virtual clock (the harness is the client).

Each 20 ms tick the harness sends one caller frame (speech or open-mic ambience), sends a
``sync`` and waits for its echo; everything the agent sends meanwhile is stamped with the
call time at which it arrived (tick start + the agent's compute, timed as
:mod:`tasks.simulate.clocks.clock` says). Agent audio is
buffered and played out at 20 ms per tick, like a phone network does, so a slow agent is
heard late. Both directions go through a VAD; those segments are the timeline.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import deque
from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from perturbations.audio import Clip, VoiceSpec
from tasks.records import EndReason, TimelineEvent
from tasks.simulate.caller.caller import CallerTurn
from tasks.simulate.caller.spoken import speaks_for_itself
from tasks.simulate.callers import CallerPolicy
from tasks.simulate.channel import AmbientFeed, CallerChannel
from tasks.simulate.clocks.audio_turns import AudioTurns
from tasks.simulate.clocks.call_state import CuttingIn, Heard, Utterance, is_cut_off_tail
from tasks.simulate.clocks.clock import FRAME_S, VirtualClock
from tasks.simulate.clocks.interaction import (
    BackchannelPlayer,
    CallerInteraction,
    hesitant_speech,
    split_frames,
)
from tasks.simulate.clocks.timeline import CallLog, UtteranceLog
from tasks.simulate.clocks.tracks import CLEAN_FRAME, CLEAN_RATE, CallTracks
from tasks.simulate.config import SimulationConfig
from tasks.simulate.meter import ComputeMeter
from tasks.simulate.tools.gateway import EngineGateway
from tasks.simulate.voices import CallerStyle, speakable
from tasks.simulate.wire import protocol as wire
from tasks.voice.stt import Recognizer
from tasks.voice.telephony import FRAME_BYTES, WIRE_RATE, resample, to_wire, wire_samples
from tasks.voice.tts import synthesize
from tasks.voice.vad import EnergyVAD, VadEvent

WIRE_FRAME = WIRE_RATE // 50
AGENT_DONE_S = 0.3  # quiet this long after the agent's audio ends: its turn is over
# Ends that look like the agent's but may be caused by what it depended on (a provider it
# reported failing, a harness behind its clock): CallerSide.attributed decides.
SILENCE_OR_DROP = ("agent_timeout", "agent_disconnected")


class CallEnded(Exception):
    def __init__(self, reason: EndReason, error: str | None = None) -> None:
        super().__init__(error or reason)
        self.reason: EndReason = reason
        self.error = error


class CallerSide(CuttingIn, AudioTurns):
    """Runs one call: caller behaviour, playout, VAD and the call log."""

    def __init__(
        self,
        ws: ClientConnection,
        caller: CallerPolicy,
        style: CallerStyle,
        voice: VoiceSpec,
        recognizer: Recognizer,
        channel: CallerChannel,
        gateway: EngineGateway,
        config: SimulationConfig,
        rng: random.Random,
        meter: ComputeMeter | None = None,
        interaction: CallerInteraction | None = None,
        backchannels: BackchannelPlayer | None = None,
    ) -> None:
        self.ws, self.caller, self.style, self.voice = ws, caller, style, voice
        self.own_ears = speaks_for_itself(caller)  # it hears the line and decides itself
        self.interaction = interaction or CallerInteraction(style, 0)
        self.backchannels = backchannels or BackchannelPlayer(None, voice, config.caller_tts)
        self.backchannel_frame = False
        self.prepared = 0
        self.recognizer, self.channel, self.gateway = recognizer, channel, gateway
        self.config, self.rng = config, rng
        # ``meter``: the agent's, when it is in-process (see tasks.simulate.clocks.clock).
        timing = config.virtual_timing
        if meter is None and timing == "cpu":
            timing = "wall"
        self.clock = VirtualClock(timing, meter)
        self.stream_sid = f"MZ{rng.getrandbits(64):016x}"
        self.ambient = AmbientFeed(channel, CLEAN_RATE, CLEAN_FRAME)
        self.playout: deque[tuple[str, Any, float]] = deque()
        self.tracks = CallTracks()
        self.log = CallLog()
        self.events: list[TimelineEvent] = []
        self.caller_vad, self.agent_vad = EnergyVAD(), EnergyVAD()
        self.current: Utterance | None = None
        self.heard = Heard()
        self.waiting_since = 0.0
        self.turns = 0
        self.caller_ended = False
        self.provider_failures: list[str] = []  # what the agent reported (provider_error)
        self.stage_seconds: dict[str, float] = {
            "tts": 0.0,
            "stt": 0.0,
            "perturb": 0.0,
            "agent": 0.0,
        }

    # ------------------------------------------------------------------ the tick loop

    async def run(self) -> tuple[EndReason, str | None, float]:
        for message in wire.start_messages(self.stream_sid, f"CA{self.stream_sid[2:]}", {}):
            await self.ws.send(message)
        tick = 0
        try:
            while True:
                t = round(tick * FRAME_S, 6)
                if t >= self.config.max_duration_s:
                    raise CallEnded("max_duration")
                await self._tick(tick, t)
                tick += 1
        except CallEnded as raised:
            ended = self.attributed(raised)
            await self._hang_up(ended)
            return ended.reason, ended.error, tick * FRAME_S

    async def _tick(self, tick: int, t: float) -> None:
        self.clock.start_tick(tick)
        caller_wire, clean, finished = await self._caller_frame(t)
        await self.ws.send(
            wire.media_message(self.stream_sid, caller_wire, int(t * 1000), tick + 1)
        )
        if finished is not None:
            await self._send(
                wire.UserSpeechStop(
                    event="user_speech_stop",
                    streamSid=self.stream_sid,
                    timestamp_ms=int((t + FRAME_S) * 1000),
                )
            )
        await self._send(
            wire.Sync(
                event="sync",
                streamSid=self.stream_sid,
                sync=wire.SyncInfo(tick=tick, timestamp_ms=int(t * 1000)),
            )
        )
        waited = time.perf_counter()
        await self._pump(tick)
        self.stage_seconds["agent"] += time.perf_counter() - waited
        agent_pcm = await self._play(t)
        caller_pcm = wire_samples(caller_wire)
        self.tracks.add_tick(caller_pcm, clean, agent_pcm)
        # A backchannel is on the line and the track, but it is not a turn.
        heard_clean = np.zeros_like(clean) if self.backchannel_frame else clean
        self._vad(self.caller_vad.process_samples(heard_clean, CLEAN_RATE), "caller")
        self._vad(self.agent_vad.process_samples(agent_pcm, WIRE_RATE), "agent")
        if finished is not None:
            self._finish_utterance(finished, t + FRAME_S)
        await self._listen(t + FRAME_S)

    def _ended(self, reason: EndReason, error: str | None = None) -> Exception:
        return CallEnded(reason, error)

    async def _send(self, message: Any) -> None:
        try:
            await self.ws.send(wire.encode(message))
        except ConnectionClosed as exc:
            raise CallEnded("agent_disconnected", f"agent closed the socket: {exc}") from None

    # ------------------------------------------------------------------ caller speech

    async def _caller_frame(self, t: float) -> tuple[bytes, np.ndarray, Utterance | None]:
        utt = self.current
        due = utt is not None and utt.start_at is not None and t >= utt.start_at
        self.backchannel_frame = False
        # A backchannel being said is finished before the caller's turn starts.
        if utt is not None and due and (utt.sent or self.backchannels.playing is None):
            if utt.sent == 0:
                await self._start_utterance(utt, t)
            frame_wire, frame_clean = utt.wire[utt.sent], utt.clean[utt.sent]
            utt.sent += 1
            return frame_wire, frame_clean, utt if utt.sent == len(utt.wire) else None
        backchannel = self.backchannels.next_frame()
        if backchannel is not None:
            self.backchannel_frame = True
            return backchannel[0], backchannel[1], None
        ambient = self.ambient.next_frame()
        return to_wire(Clip(ambient, CLEAN_RATE)), np.zeros(CLEAN_FRAME, np.float32), None

    async def _start_utterance(self, utt: Utterance, t: float) -> None:
        self.turns += 1
        self.gateway.turn_id = self.turns
        self.log.utterances.append(
            UtteranceLog(
                turn_id=self.turns, text=utt.spoken, start_s=round(t, 6), end_s=round(t, 6)
            )
        )
        if utt.hesitation is not None:
            offset, pause = utt.hesitation
            data = {"pause_s": round(pause, 3), "turn_id": self.turns}
            self.events.append(
                TimelineEvent(
                    t_s=round(t + offset, 3), source="caller", kind="hesitation", data=data
                )
            )
        await self._send(
            wire.UserSpeechStart(
                event="user_speech_start", streamSid=self.stream_sid, timestamp_ms=int(t * 1000)
            )
        )

    def _finish_utterance(self, utt: Utterance, t_end: float) -> None:
        self.log.utterances[-1].end_s = round(t_end, 6)
        self.current = None
        self.heard = Heard()
        if self.agent_vad.in_speech:  # it talked on through the caller's turn: hear it
            self.heard.spoke, self.heard.speech_start = True, t_end
            self.heard.cut_off_tail = utt.barge_in
        self.waiting_since = t_end
        if utt.turn.end_call:
            self.caller_ended = True
            raise CallEnded("goodbye")

    async def _prepare(
        self, turn: CallerTurn, start_at: float | None, audio: Clip | None = None
    ) -> Utterance:
        """The turn's audio on the line: our TTS of its words, or the caller's own
        ``audio`` (a caller that speaks for itself), then the trial's channel."""
        spoken = (
            turn.text
            if audio is not None
            else speakable(turn.text, self.rng, self.style.disfluency)
        )
        self.prepared += 1
        pause = self.interaction.hesitation(self.prepared, spoken) if audio is None else None
        hesitation: tuple[float, float] | None = None
        began = time.perf_counter()
        engine = self.config.caller_tts
        if audio is not None:
            clean = await asyncio.to_thread(resample, audio, CLEAN_RATE)
        elif pause is not None:
            clean, offset = await asyncio.to_thread(hesitant_speech, pause, self.voice, engine)
            hesitation = (offset, pause[2])
        else:
            tts = await asyncio.to_thread(synthesize, spoken, self.voice, engine)
            clean = await asyncio.to_thread(resample, tts, CLEAN_RATE)
        self.stage_seconds["tts"] += time.perf_counter() - began
        began = time.perf_counter()
        sent = await asyncio.to_thread(self.channel.speech, clean)
        wire_frames, clean_frames = await asyncio.to_thread(split_frames, sent, clean)
        self.stage_seconds["perturb"] += time.perf_counter() - began
        return Utterance(turn, spoken, wire_frames, clean_frames, start_at, hesitation=hesitation)

    # ------------------------------------------------------------------ listening

    async def _listen(self, t: float) -> None:
        """Decide whether the caller speaks now, later, or not yet."""
        if self.own_ears:
            await self._listen_audio(t)
            return
        heard, utt = self.heard, self.current
        agent_talking = self.agent_vad.in_speech or bool(self.playout)
        if utt is not None:
            if utt.sent == 0 and agent_talking and not utt.barge_in:
                utt.start_at = None  # the agent went on talking: wait for it
            elif utt.start_at is None and not agent_talking:
                utt.start_at = t + self.rng.uniform(*self.style.pause_s)
            return
        if heard.spoke and not agent_talking and t - heard.last_audio >= AGENT_DONE_S:
            if heard.cut_off_tail and is_cut_off_tail(heard, await self._heard_text()):
                self._wait_past_tail(t)
            else:
                await self._respond(t, t + self.rng.uniform(*self.style.pause_s))
        elif self._barge_in_due(t):
            await self._barge_in(t)
        elif self._backchannel_due(t):
            await self._backchannel(t)
        elif not heard.spoke and t - self.waiting_since >= self.config.agent_timeout_s:
            raise CallEnded(
                "agent_timeout", f"no agent speech for {self.config.agent_timeout_s:.0f} s"
            )

    def _recognize_later(self, frames: list[np.ndarray]) -> asyncio.Future[str]:
        audio = np.concatenate(frames).astype(np.float32) if frames else np.zeros(1, np.float32)
        return asyncio.ensure_future(
            asyncio.to_thread(self.recognizer.recognize, Clip(audio, WIRE_RATE))
        )

    def _segment_heard(self) -> None:
        """An agent segment ended: start recognising it while the call goes on."""
        heard = self.heard
        if self.own_ears:
            return
        if self.current is None and heard.cut < len(heard.frames):
            heard.pending.append(self._recognize_later(heard.frames[heard.cut :]))
            heard.cut = len(heard.frames)

    async def _heard_text(self) -> str:
        heard = self.heard
        if heard.cut < len(heard.frames) and (self.agent_vad.in_speech or not heard.pending):
            heard.pending.append(self._recognize_later(heard.frames[heard.cut :]))
            heard.cut = len(heard.frames)
        began = time.perf_counter()
        texts = [await task for task in heard.pending]
        self.stage_seconds["stt"] += time.perf_counter() - began
        return " ".join(t for t in texts if t)

    async def _respond(self, t: float, start_at: float) -> None:
        if self.turns >= self.config.max_turns:
            raise CallEnded("max_duration", f"caller turn limit {self.config.max_turns} reached")
        text = await self._heard_text()
        # Filed under the agent turn it was heard in, which began when its speech began.
        heard_at = self.heard.speech_start if self.heard.speech_start is not None else t
        self.log.caller_heard.append((min(heard_at, t), text))
        # An LLM caller makes a blocking HTTP call: keep the event loop (and pacing) free.
        turn = await asyncio.to_thread(self.caller.respond, text)
        self.events.append(
            TimelineEvent(
                t_s=round(t, 3),
                source="caller",
                kind="decide",
                data={"kind": turn.kind, "heard": text},
            )
        )
        utt = await self._prepare(turn, start_at)
        utt.barge_in = self.heard.barged  # this is the turn said over the agent
        self.current = utt
        self.heard = Heard(spoke=False, barged=self.heard.barged)

    # ------------------------------------------------------------------ the agent's side

    async def _pump(self, tick: int) -> None:
        """Handle agent messages until it echoes this tick's sync."""
        while True:
            # Wall time on purpose: a hung agent charges no compute, yet must be cut off.
            left = self.config.sync_timeout_s - self.clock.wall_elapsed()
            try:
                raw = await asyncio.wait_for(self.ws.recv(), timeout=max(left, 0.001))
            except TimeoutError:
                raise CallEnded(
                    "agent_timeout",
                    f"agent did not acknowledge tick {tick} within "
                    f"{self.config.sync_timeout_s:.0f} s (virtual clock needs sync echoes)",
                ) from None
            except ConnectionClosed as exc:
                raise CallEnded("agent_disconnected", f"agent closed the socket: {exc}") from None
            if self._receive(wire.parse_agent_message(raw), self.clock.now()) == tick:
                return

    def _receive(self, message: Any, at: float) -> int | None:
        if isinstance(message, wire.ProtocolError):
            raise CallEnded("protocol_error", f"{message.reason} ({message.excerpt!r})")
        if isinstance(message, wire.OtherEvent):
            self.events.append(
                TimelineEvent(
                    t_s=round(at, 3), source="agent", kind=message.event, data=message.data
                )
            )
            return None
        if message.streamSid != self.stream_sid:
            raise CallEnded("protocol_error", f"unknown streamSid {message.streamSid!r}")
        if isinstance(message, wire.Sync):
            return message.sync.tick
        if isinstance(message, wire.Media):
            audio = message.media.audio()
            for i in range(0, len(audio), FRAME_BYTES):
                chunk = audio[i : i + FRAME_BYTES].ljust(FRAME_BYTES, b"\xff")
                self.playout.append(("audio", chunk, at))
        elif isinstance(message, wire.Mark):
            self.playout.append(("mark", message.mark.name, at))
        elif isinstance(message, wire.Clear):
            self.events.append(TimelineEvent(t_s=round(at, 3), source="agent", kind="clear"))
            marks = [item for item in self.playout if item[0] == "mark"]
            self.playout = deque(marks)
        elif isinstance(message, wire.AgentText):
            target = (
                self.log.agent_texts if message.kind == "response" else self.log.agent_transcripts
            )
            target.append((at, message.text))
        elif isinstance(message, wire.EndCall):
            self.events.append(TimelineEvent(t_s=round(at, 3), source="agent", kind="end_call"))
            raise CallEnded("goodbye", "the agent ended the call")
        elif isinstance(message, wire.ProviderFailure):
            self._provider_failed(message, at)
        return None

    def _provider_failed(self, message: wire.ProviderFailure, at: float) -> None:
        """A provider outage is infrastructure, never the agent's failure (issue 29)."""
        data = message.model_dump(exclude={"event", "streamSid"})
        self.events.append(
            TimelineEvent(t_s=round(at, 3), source="agent", kind="provider_error", data=data)
        )
        self.provider_failures.append(message.describe())
        if message.fatal:
            raise CallEnded("provider_error", message.describe())

    def attributed(self, ended: CallEnded) -> CallEnded:
        """An agent that fell silent or dropped the call after one of its providers failed
        (a failure it first reported as recoverable) did so for the provider."""
        if ended.reason in SILENCE_OR_DROP and self.provider_failures:
            then = ended.error or ended.reason
            return CallEnded("provider_error", f"{self.provider_failures[-1]}; then {then}")
        return ended

    async def _play(self, t: float) -> np.ndarray:
        """This tick's agent audio from the playout buffer (silence if none is due)."""
        await self._echo_marks()
        pcm = np.zeros(WIRE_FRAME, np.float32)
        if self.playout and self.playout[0][0] == "audio" and self.playout[0][2] <= t:
            _, chunk, _ = self.playout.popleft()
            pcm = wire_samples(chunk)
            self.heard.frames.append(pcm)
            self.heard.last_audio = t + FRAME_S
            await self._echo_marks()
        return pcm

    async def _echo_marks(self) -> None:
        while self.playout and self.playout[0][0] == "mark":
            _, name, _ = self.playout.popleft()
            await self._send(
                wire.Mark(event="mark", streamSid=self.stream_sid, mark=wire.MarkInfo(name=name))
            )

    def _vad(self, events: list[VadEvent], source: str) -> None:
        for event in events:
            self.events.append(
                TimelineEvent(
                    t_s=event.time_s,
                    source=source,  # type: ignore[arg-type]
                    kind=event.kind,
                )
            )
            if source == "agent" and event.kind == "speech_start":
                self.heard.spoke = True
                if self.heard.speech_start is None:
                    self.heard.speech_start = event.time_s
            elif source == "agent" and event.kind == "speech_end":
                self._segment_heard()

    # ------------------------------------------------------------------ the end

    async def _hang_up(self, ended: CallEnded) -> None:
        if self.audio_preparing is not None:  # a spoken turn the call ended before
            self.audio_preparing.cancel()
        for source, vad in (("caller", self.caller_vad), ("agent", self.agent_vad)):
            self._vad(vad.flush(), source)
        if self.current is not None and self.current.sent and self.log.utterances:
            self.log.utterances[-1].end_s = self.clock.tick_time
        if ended.reason in ("agent_disconnected",):
            return
        with contextlib.suppress(ConnectionClosed, OSError):
            if self.caller_ended:
                await self.ws.send(
                    wire.encode(wire.EndCall(event="end_call", streamSid=self.stream_sid))
                )
            await self.ws.send(wire.encode(wire.Stop(event="stop", streamSid=self.stream_sid)))
