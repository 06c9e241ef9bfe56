"""``openai_realtime``: a caller played by an OpenAI Realtime session in its own voice (spec 7.3).

The session gets our caller prompt (:func:`caller_system_prompt`, a behaviour persona's
text under a persona condition) and one tool, ``end_call``. It hears the agent's actual
audio: every tick's played agent frame, handed over as 8 kHz mu-law every 250 ms
(``input_audio_buffer.append``, silence as 0xFF, as the reference bridge does), with
server VAD (threshold 0.5, prefix 300 ms, silence 500 ms) that neither answers nor
interrupts by itself, and ``whisper-1`` transcription of what it heard. A response is
requested only when an agent transcription has arrived since the last request, the
agent's audio has been silent for 2 s and no response is active (:class:`TurnGate`).
The response's audio (PCM 24 kHz: the model's own voice and timing) is the caller's
turn, its audio transcript the turn's words; the clock puts it through the trial's
channel (noise, connection). ``end_call`` follows the ``llm`` caller's rules
(:class:`HangupRules`: after a goodbye, never in a turn that gives information); a
refused one is answered with the reason and the call goes on; an honoured one ends the
call once the turn's audio has drained (reason ``goodbye``). The persona's speaking rate
maps to ``audio.output.speed``; eSpeak accents cannot apply to the model's voice.

Audio mode on the real-time clock only; the key comes from ``$OPENAI_API_KEY`` (or the
``api_key_env`` param), the host from ``base_url`` / ``$OPENAI_BASE_URL`` like the other
OpenAI engines. The official ``openai`` SDK's realtime client does the talking.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from perturbations.audio import Clip, VoiceSpec
from scenarios.models import Scenario
from tasks.records import TimelineEvent
from tasks.simulate.caller.caller import CallerTurn
from tasks.simulate.caller.persona import condition_persona
from tasks.simulate.caller.spoken import SpokenTurn
from tasks.simulate.callers import CALLERS
from tasks.simulate.callers.hangup import HangupRules
from tasks.simulate.callers.llm import CallerModelError
from tasks.simulate.callers.openai_realtime_config import (
    ENGINE,
    RealtimeCallerParams,
    TurnGate,
    accent_problems,
    agent_ulaw,
    realtime_params,
    realtime_tools,
)
from tasks.simulate.config import SimulationConfig
from tasks.simulate.llm_prompts import (
    CALLER_ACCEPTED,
    END_CALL_TOOL_NAME,
    caller_system_prompt,
    prompt_hash,
)
from tasks.voice.providers._common import speed_factor

if TYPE_CHECKING:
    from tasks.config import BenchmarkConfig

VERSION = "0.1"
OUTPUT_RATE = 24000  # GA audio/pcm is 24 kHz only
APPEND_BYTES = 2000  # 250 ms of 8 kHz mu-law per input_audio_buffer.append
DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass
class _Response:
    audio: bytearray = field(default_factory=bytearray)
    text: str = ""
    end_call: str | None = None  # the end_call's call_id
    other_calls: list[str] = field(default_factory=list)


class RealtimeCaller:
    """An :class:`tasks.simulate.caller.spoken.AudioCaller` over one Realtime session."""

    speaks_for_itself = True

    def __init__(
        self, scenario: Scenario, params: RealtimeCallerParams, persona_text: str | None = None
    ) -> None:
        self.params = params
        self.instructions = caller_system_prompt(scenario, persona_text)
        male = scenario.user_config.get("user_persona_id") == 2 or (
            str(scenario.user_config.get("gender") or "").lower() == "man"
        )
        self.voice_name = params.male_voice if male else params.female_voice
        self.rules = HangupRules(scenario)
        self.gate = TurnGate(params.respond_after_silence_s)
        self.events: list[TimelineEvent] = []
        self.turns: deque[SpokenTurn] = deque()
        self.heard_texts: list[str] = []
        self.last_said = ""
        self.ending = False
        self.failure: str | None = None
        self.now = 0.0
        self.requested_at: float | None = None
        self.conn: Any = None
        self._line = bytearray()
        self._response: _Response | None = None

    @property
    def hung_up(self) -> bool:
        return self.ending and not self.turns

    def respond(self, heard: str) -> CallerTurn:
        raise CallerModelError(
            f"{ENGINE} speaks for itself: it runs in audio mode on the real-time clock only"
        )

    def session_config(self, voice: VoiceSpec) -> dict[str, Any]:
        """The ``session.update`` payload (GA shape, ``openai.types.realtime``)."""
        p = self.params
        detection = {
            "type": "server_vad",
            "threshold": p.vad_threshold,
            "prefix_padding_ms": p.prefix_padding_ms,
            "silence_duration_ms": p.silence_duration_ms,
            "create_response": False,  # we decide when it speaks (TurnGate)
            "interrupt_response": False,
            "idle_timeout_ms": p.idle_timeout_ms,
        }
        return {
            "type": "realtime",
            "instructions": self.instructions,
            "output_modalities": ["audio"],
            "audio": {
                "input": {
                    "format": {"type": "audio/pcmu"},
                    "transcription": {"model": p.transcription_model},
                    "turn_detection": detection,
                },
                "output": {
                    "format": {"type": "audio/pcm", "rate": OUTPUT_RATE},
                    "voice": self.voice_name,
                    "speed": speed_factor(voice, 0.25, 1.5),
                },
            },
            "tools": realtime_tools(),
            "tool_choice": "auto",
        }

    # ------------------------------------------------------------------ the session

    def _client(self) -> Any:
        from openai import AsyncOpenAI  # only this caller needs the SDK

        key = os.environ.get(self.params.api_key_env, "").strip()
        if not key:
            raise CallerModelError(
                f"{ENGINE}: environment variable {self.params.api_key_env} is not set"
            )
        base = self.params.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        if base.startswith(("ws://", "wss://")):
            return AsyncOpenAI(api_key=key, websocket_base_url=base)
        return AsyncOpenAI(api_key=key, base_url=base)

    @contextlib.asynccontextmanager
    async def session(self, voice: VoiceSpec) -> AsyncIterator[None]:
        client = self._client()
        stack = contextlib.AsyncExitStack()
        try:
            async with asyncio.timeout(self.params.connect_timeout_s):
                manager = client.realtime.connect(model=self.params.model)
                self.conn = await stack.enter_async_context(manager)
                await self._configure(voice)
        except Exception as exc:  # noqa: BLE001 - any failure to start is the caller's
            await stack.aclose()
            raise CallerModelError(f"{ENGINE}: could not start the session: {exc!r}") from exc
        reader = asyncio.create_task(self._read(), name="openai-realtime-caller")
        try:
            yield
        finally:
            self.ending = True
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
            with contextlib.suppress(Exception):
                await stack.aclose()

    async def _configure(self, voice: VoiceSpec) -> None:
        await self.conn.session.update(session=self.session_config(voice))
        while True:
            event = await self.conn.recv()
            if event.type == "error":
                raise CallerModelError(f"{ENGINE}: session.update refused: {event.error}")
            if event.type == "session.updated":
                break
        data = {"model": self.params.model, "voice": self.voice_name}
        data["prompt_hash"] = prompt_hash(self.instructions)
        self._event("session_started", data)

    async def _read(self) -> None:
        try:
            while True:
                await self._on_event(await self.conn.recv())
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a lost session fails the attempt
            if not self.ending:
                self.failure = f"{ENGINE}: the session ended: {exc!r}"

    # ------------------------------------------------------------------ listening

    async def hear(self, agent_pcm: np.ndarray, t: float, agent_audio: bool) -> None:
        self.now = t
        self.gate.heard(t, agent_audio)
        self._line += agent_ulaw(agent_pcm, agent_audio)
        try:
            if len(self._line) >= APPEND_BYTES:
                payload = base64.b64encode(bytes(self._line[:APPEND_BYTES])).decode()
                del self._line[:APPEND_BYTES]
                await self.conn.input_audio_buffer.append(audio=payload)
            if self.gate.due(t):
                await self._request(t)
        except Exception as exc:  # noqa: BLE001 - the session is gone
            self.failure = self.failure or f"{ENGINE}: sending failed: {exc!r}"
        late = (
            self.requested_at is not None and t - self.requested_at > self.params.response_timeout_s
        )
        if self.gate.active and late:
            self.failure = (
                self.failure
                or f"{ENGINE}: no response within {self.params.response_timeout_s:.0f} s"
            )

    async def _request(self, t: float) -> None:
        self.gate.requested()
        self.requested_at = t
        await self.conn.response.create()
        self._event("caller_response_created", {"trigger": "agent_silence"})

    def take_turn(self) -> SpokenTurn | None:
        return self.turns.popleft() if self.turns else None

    # ------------------------------------------------------------------ server events

    async def _on_event(self, event: Any) -> None:
        kind = event.type
        if kind == "response.created":
            self.gate.active = True
            self._response = _Response()
        elif kind == "response.output_audio.delta" and self._response is not None:
            self._response.audio += base64.b64decode(event.delta)
        elif kind == "response.output_audio_transcript.done" and self._response is not None:
            self._response.text = f"{self._response.text} {event.transcript}".strip()
        elif kind == "response.function_call_arguments.done" and self._response is not None:
            if event.name == END_CALL_TOOL_NAME:
                self._response.end_call = event.call_id
            else:
                self._response.other_calls.append(event.call_id)
        elif kind == "conversation.item.input_audio_transcription.completed":
            self.heard_texts.append(str(event.transcript or "").strip())
            self.gate.transcribed = True
            self._event("assistant_speech", {"text": event.transcript})
        elif kind == "response.done":
            await self._finish(event.response)
        elif kind == "error":
            self._event("error", {"error": str(event.error)})

    async def _finish(self, response: Any) -> None:
        said, self._response = self._response or _Response(), None
        usage = response_usage(response, self.params.model)
        if usage:
            self._event("usage", usage)  # priced by the costs view (tasks/costs)
        self.gate.active, self.requested_at = False, None
        status = getattr(response, "status", None)
        if status == "failed":
            self.failure = (
                f"{ENGINE}: the response failed: {getattr(response, 'status_details', '')}"
            )
            return
        text = said.text.strip()
        hang_up = False
        if said.end_call is not None:
            refusal = self.rules.refusal(text, self.last_said, silent_ok=False)
            await self._tool_output(said.end_call, refusal or CALLER_ACCEPTED)
            self._event("tool_call", {"name": END_CALL_TOOL_NAME, "refused": refusal})
            hang_up = refusal is None
        for call_id in said.other_calls:
            await self._tool_output(
                call_id, f"Unknown tool; the only tool is {END_CALL_TOOL_NAME}."
            )
        heard = " ".join(h for h in self.heard_texts if h)
        self.heard_texts = []
        if said.audio:
            samples = np.frombuffer(bytes(said.audio), dtype="<i2")
            turn = CallerTurn(text=text, kind="closing" if hang_up else "line", end_call=hang_up)
            self.turns.append(SpokenTurn(turn, Clip.from_int16(samples, OUTPUT_RATE), heard))
            self.last_said = text
        self.ending = self.ending or hang_up
        self._event("user_speech", {"text": text, "status": status, "end_call": hang_up})

    async def _tool_output(self, call_id: str, output: str) -> None:
        item = {"type": "function_call_output", "call_id": call_id, "output": output}
        await self.conn.conversation.item.create(item=item)

    def _event(self, kind: str, data: dict[str, Any]) -> None:
        self.events.append(
            TimelineEvent(t_s=round(self.now, 3), source="caller", kind=kind, data=data)
        )


def response_usage(response: Any, model: str) -> dict[str, Any] | None:
    """A Realtime ``response.done``'s token counts as a ``usage`` event's data (the shape
    agents send, docs/agent-protocol.md), or None when the response carries none."""
    usage = getattr(response, "usage", None)
    if usage is None:
        return None
    inp = getattr(usage, "input_token_details", None)
    cached = getattr(inp, "cached_tokens_details", None)
    out = getattr(usage, "output_token_details", None)
    # Input counts are gross: audio and cached tokens are inside input_tokens.
    return {
        "provider": "openai-realtime",
        "model": model,
        "input_tokens": getattr(usage, "input_tokens", None),
        "output_tokens": getattr(usage, "output_tokens", None),
        "input_audio_tokens": getattr(inp, "audio_tokens", None),
        "cached_input_tokens": getattr(cached, "text_tokens", None),
        "cached_input_audio_tokens": getattr(cached, "audio_tokens", None),
        "output_audio_tokens": getattr(out, "audio_tokens", None),
    }


@CALLERS.register("openai_realtime")
class RealtimeCallerDefinition:
    version = VERSION

    def build(self, scenario: Scenario, config: SimulationConfig) -> RealtimeCaller:
        # A behaviour persona condition plays that persona (spec 8.1), as the llm caller does.
        persona = condition_persona(config.condition)
        text = persona.persona_text if persona else None
        return RealtimeCaller(scenario, realtime_params(config), persona_text=text)

    def problems(self, config: BenchmarkConfig) -> list[str]:
        """What stops a run before its first trial (see tasks.config_checks)."""
        from tasks.simulate.wire.external import served_out_of_process

        try:
            params = realtime_params(config)
        except ValueError as exc:
            return [f"field 'caller.params': {exc}"]
        problems = accent_problems(config)
        if not os.environ.get(params.api_key_env, "").strip():
            problems.append(
                f"caller 'openai_realtime': environment variable {params.api_key_env} is not set"
            )
        if config.mode != "audio":
            problems.append("caller 'openai_realtime' speaks for itself: mode must be audio")
        for system in config.systems:
            agent = system.agent
            remote = "://" in agent or agent == "external" or served_out_of_process(agent)
            if config.mode == "audio" and config.clock != "realtime" and not remote:
                problems.append(
                    f"caller 'openai_realtime' needs the real-time clock, but system "
                    f"{system.name!r} runs on the virtual clock: set clock: realtime"
                )
        return problems
