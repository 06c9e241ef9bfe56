"""The wire protocol: Twilio Media Streams JSON plus a few evaluation events.

The caller side (harness) is the WebSocket client, the agent under test the server.
Every message is one JSON text frame with an ``event`` field. See
``docs/agent-protocol.md`` for the sequence and timing rules. Parsing is strict: a
malformed message becomes a :class:`ProtocolError` *value* naming what was wrong, so a
misbehaving agent ends its attempt with ``protocol_error`` instead of crashing the run.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

ENCODING = "audio/x-mulaw"
SAMPLE_RATE = 8000
CHANNELS = 1
FRAME_BYTES = 160  # 20 ms of 8 kHz mu-law
MAX_MESSAGE_BYTES = 1 << 20


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class MediaFormat(BaseModel):
    model_config = ConfigDict(frozen=True)
    encoding: Literal["audio/x-mulaw"] = "audio/x-mulaw"
    sampleRate: Literal[8000] = 8000  # noqa: N815 - Twilio's field name
    channels: Literal[1] = 1


class StartInfo(BaseModel):
    model_config = ConfigDict(extra="allow")
    streamSid: str = Field(description="Id of this media stream")  # noqa: N815
    callSid: str = Field(default="", description="Id of the call")  # noqa: N815
    accountSid: str = Field(default="evaflow")  # noqa: N815
    tracks: list[str] = Field(default_factory=lambda: ["inbound"])
    mediaFormat: MediaFormat = Field(default_factory=MediaFormat)  # noqa: N815
    customParameters: dict[str, str] = Field(  # noqa: N815
        default_factory=dict,
        description="Trial context: scenario key, clock, tool bridge URL and token, ...",
    )


class MediaPayload(BaseModel):
    model_config = ConfigDict(extra="allow")
    payload: str = Field(description="base64 of 8 kHz mono mu-law bytes")
    track: str | None = None
    chunk: str | None = None
    timestamp: str | None = Field(default=None, description="ms since stream start (caller)")

    def audio(self) -> bytes:
        return base64.b64decode(self.payload, validate=True)


class MarkInfo(BaseModel):
    name: str = Field(min_length=1)


class SyncInfo(BaseModel):
    tick: int = Field(ge=0, description="Harness tick number (virtual clock)")
    timestamp_ms: int | None = Field(default=None, ge=0)


# ----------------------------------------------------------------------------- caller -> agent


class Connected(_Message):
    event: Literal["connected"]
    protocol: str = "Call"
    version: str = "1.0.0"


class _Sequenced(_Message):
    """A Twilio Media Streams message: event, optional sequence number, stream id (in that
    order on the wire; subclasses narrow ``event`` and keep its place)."""

    event: str
    sequenceNumber: str | None = None  # noqa: N815
    streamSid: str  # noqa: N815


class Start(_Sequenced):
    event: Literal["start"]
    start: StartInfo


class Media(_Sequenced):
    event: Literal["media"]
    media: MediaPayload


class Mark(_Sequenced):
    event: Literal["mark"]
    mark: MarkInfo


class Stop(_Sequenced):
    event: Literal["stop"]
    stop: dict[str, Any] = Field(default_factory=dict)


class UserSpeechStart(_Message):
    event: Literal["user_speech_start"]
    streamSid: str  # noqa: N815
    timestamp_ms: int = Field(ge=0, description="Call time of the first speech frame, in ms")


class UserSpeechStop(_Message):
    event: Literal["user_speech_stop"]
    streamSid: str  # noqa: N815
    timestamp_ms: int = Field(ge=0, description="Call time of the last speech frame's end, in ms")


class EndCall(_Message):
    event: Literal["end_call"]
    streamSid: str  # noqa: N815
    reason: str = "goodbye"


class Sync(_Message):
    event: Literal["sync"]
    streamSid: str  # noqa: N815
    sync: SyncInfo


# ----------------------------------------------------------------------------- agent -> caller


class Clear(_Message):
    event: Literal["clear"]
    streamSid: str  # noqa: N815


class AgentText(_Message):
    event: Literal["agent_text"]
    streamSid: str  # noqa: N815
    text: str
    kind: Literal["response", "transcript"] = Field(
        default="response",
        description="response: intended text of the agent's turn; transcript: what it heard",
    )


class ProviderFailure(_Message):
    """``provider_error``: a provider the agent depends on failed (docs/agent-protocol.md 9).

    The agent says so instead of going silent, so the harness can tell a provider outage
    (infrastructure: the attempt ends ``provider_error``, status ``infra_error``, and is
    regenerated) from the agent's own failure. ``fatal`` false is a diagnostic only (a
    failure the agent recovered from): it is kept on the timeline and the call goes on.
    """

    event: Literal["provider_error"]
    streamSid: str  # noqa: N815
    provider: str = Field(min_length=1, description="Who failed, e.g. openai, deepgram")
    role: str = Field(default="", description="stt, llm, tts, realtime (or what else failed)")
    message: str = Field(default="", description="The provider's own error message")
    fatal: bool = Field(default=True, description="The call cannot go on: end it now")

    def describe(self) -> str:
        """One line naming the provider, its role and its message."""
        role = f" {self.role}" if self.role else ""
        model = self.model_extra.get("model") if self.model_extra else None
        named = f"{self.provider}{role}" + (f" (model {model})" if model else "")
        return f"provider {named} failed: {self.message or 'no message'}"


CallerMessage = Annotated[
    Connected | Start | Media | Mark | Stop | UserSpeechStart | UserSpeechStop | EndCall | Sync,
    Field(discriminator="event"),
]
AgentMessage = Annotated[
    Media | Mark | Clear | AgentText | EndCall | Sync | ProviderFailure,
    Field(discriminator="event"),
]
_CALLER = TypeAdapter(CallerMessage)
_AGENT = TypeAdapter(AgentMessage)


AGENT_EVENTS = frozenset(
    {"media", "mark", "clear", "agent_text", "end_call", "sync", "provider_error"}
)
# Protocol events an agent must never send (wrong direction): still protocol errors.
CALLER_ONLY_EVENTS = frozenset(
    {"connected", "start", "stop", "user_speech_start", "user_speech_stop"}
)


class OtherEvent(BaseModel):
    """An agent event outside the protocol (e.g. ``agent_timing``, ``transcript``).

    Optional extras never break a call: they are kept on the timeline and otherwise ignored.
    """

    model_config = ConfigDict(frozen=True)
    event: str
    data: dict[str, Any] = Field(default_factory=dict)


class ProtocolError(BaseModel):
    """Why a frame could not be accepted (a value, never raised)."""

    model_config = ConfigDict(frozen=True)
    reason: str
    excerpt: str = Field(default="", description="Start of the offending frame")


def _parse(raw: Any, adapter: TypeAdapter[Any], side: str) -> Any:
    if isinstance(raw, bytes | bytearray):
        return ProtocolError(reason=f"binary frame from the {side}; messages must be JSON text")
    if not isinstance(raw, str):
        return ProtocolError(reason=f"unexpected frame type {type(raw).__name__}")
    excerpt = raw[:120]
    if len(raw) > MAX_MESSAGE_BYTES:
        return ProtocolError(reason=f"message of {len(raw)} bytes is too large", excerpt=excerpt)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        return ProtocolError(reason=f"invalid JSON: {exc.msg}", excerpt=excerpt)
    if not isinstance(data, dict) or "event" not in data:
        return ProtocolError(
            reason="message must be a JSON object with an 'event'", excerpt=excerpt
        )
    try:
        message = adapter.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return ProtocolError(
            reason=f"bad '{data['event']}' message: {where}: {first['msg']}", excerpt=excerpt
        )
    if isinstance(message, Media):
        try:
            audio = message.media.audio()
        except (binascii.Error, ValueError):
            return ProtocolError(reason="media payload is not valid base64", excerpt=excerpt)
        if not audio:
            return ProtocolError(reason="media payload is empty", excerpt=excerpt)
    return message


def parse_agent_message(raw: Any) -> Any:
    """A message the agent sent, an :class:`OtherEvent`, or a :class:`ProtocolError`."""
    if isinstance(raw, str) and len(raw) <= MAX_MESSAGE_BYTES:
        try:
            data = json.loads(raw)
        except json.JSONDecodeError:
            data = None
        event = data.get("event") if isinstance(data, dict) else None
        if isinstance(event, str) and event not in AGENT_EVENTS | CALLER_ONLY_EVENTS:
            return OtherEvent(event=event, data=data)
    return _parse(raw, _AGENT, "agent")


def parse_caller_message(raw: Any) -> Any:
    """A message the caller (harness) sent, or a :class:`ProtocolError`."""
    return _parse(raw, _CALLER, "caller")


# ----------------------------------------------------------------------------- builders


def encode(message: BaseModel) -> str:
    return message.model_dump_json(exclude_none=True)


def media_message(
    stream_sid: str, audio: bytes, timestamp_ms: int | None = None, chunk: int | None = None
) -> str:
    """One media frame; the caller side stamps ``timestamp`` and ``chunk`` like Twilio."""
    payload = MediaPayload(
        payload=base64.b64encode(audio).decode("ascii"),
        track="inbound" if timestamp_ms is not None else None,
        timestamp=None if timestamp_ms is None else str(timestamp_ms),
        chunk=None if chunk is None else str(chunk),
    )
    return encode(Media(event="media", streamSid=stream_sid, media=payload))


def start_messages(stream_sid: str, call_sid: str, params: dict[str, str]) -> list[str]:
    """The opening ``connected`` + ``start`` pair the caller sends."""
    start = StartInfo(streamSid=stream_sid, callSid=call_sid, customParameters=params)
    return [
        encode(Connected(event="connected")),
        encode(Start(event="start", sequenceNumber="1", streamSid=stream_sid, start=start)),
    ]
