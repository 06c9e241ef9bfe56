"""What the pipeline heard and meant to say, carried back to the harness as ``agent_text``.

The trace the judges read (EVA spec 4.2) takes a cascade's user turns from what its STT
heard and every non-s2s agent turn from the text its model sent to speech; the reference
records both from its own Pipecat pipelines. Without them a Pipecat system's turns are
empty and the speech metrics have nothing to judge. docs/agent-protocol.md: ``agent_text``
with ``kind`` ``transcript`` (what the STT heard) or ``response`` (the turn's intended
text); the harness files each under the turn in which it arrives.

:class:`HeardReporter` sits after the STT (Pipecat's ``TranscriptionFrame``, final
transcripts only). :class:`SaidReporter` sits after the model: a cascade's or audio-in
hybrid's LLM streams ``LLMTextFrame`` tokens; Ultravox streams the transcript of its own
speech as ``TTSTextFrame`` words. One response is the text between
one ``LLMFullResponseEndFrame`` (or interruption) and the next.
"""

from __future__ import annotations

from typing import Any

from pipecat.frames.frames import (
    Frame,
    InterruptionFrame,
    LLMFullResponseEndFrame,
    LLMTextFrame,
    OutputTransportMessageUrgentFrame,
    TextFrame,
    TranscriptionFrame,
    TTSTextFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

AGENT_TEXT = "agent_text"


def agent_text(stream_sid: str, text: str, kind: str) -> OutputTransportMessageUrgentFrame:
    message = {"event": AGENT_TEXT, "streamSid": stream_sid, "text": text, "kind": kind}
    return OutputTransportMessageUrgentFrame(message=message)


class HeardReporter(FrameProcessor):
    """Each final transcript of the STT as ``agent_text`` ``transcript``."""

    def __init__(self, stream_sid: str) -> None:
        super().__init__()
        self.stream_sid = stream_sid

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, TranscriptionFrame) and frame.text.strip():
            await self.push_frame(agent_text(self.stream_sid, frame.text.strip(), "transcript"))
        await self.push_frame(frame, direction)


class SaidReporter(FrameProcessor):
    """Each model response's text as ``agent_text`` ``response``.

    ``words``: the text frames to collect, ``LLMTextFrame`` (an LLM's tokens, spaces
    included) or ``TTSTextFrame`` (a realtime model's transcript words)."""

    def __init__(self, stream_sid: str, words: type[TextFrame] = LLMTextFrame) -> None:
        super().__init__()
        self.stream_sid = stream_sid
        self.words = words
        self.parts: list[str] = []

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        # No reset at LLMFullResponseStartFrame: Ultravox sends a response's first words
        # before its first audio, which is when its service starts the response.
        if isinstance(frame, self.words) and direction == FrameDirection.DOWNSTREAM:
            self.parts.append(_spaced(frame))
        elif isinstance(frame, (LLMFullResponseEndFrame, InterruptionFrame)):
            await self._flush()
        await self.push_frame(frame, direction)

    async def _flush(self) -> None:
        said = " ".join("".join(self.parts).split())
        self.parts = []
        if said:
            await self.push_frame(agent_text(self.stream_sid, said, "response"))


def _spaced(frame: Any) -> str:
    # LLM tokens carry their own spaces; TTS words do only when the service says so.
    if isinstance(frame, TTSTextFrame) and not getattr(frame, "includes_inter_frame_spaces", False):
        return f" {frame.text}"
    return str(frame.text)
