"""A Pipecat pipeline's usage, carried back to the harness as ``usage`` events.

Pipecat's services push ``MetricsFrame``s downstream when usage metrics are enabled: LLM
token counts (``LLMUsageMetricsData``), TTS characters (``TTSUsageMetricsData``) and, for a
few STT services, audio seconds (``STTUsageMetricsData``). :class:`UsageReporter`, placed
before the transport's output, sends each as a usage event (shape:
:mod:`tasks.costs.usage_events`), naming the catalogue's model so the price table matches.
Most streaming STT services report no usage of their own; they bill every second of audio
they receive, which :class:`AudioMeter` (placed before the STT) counts and the reporter
sends with each metrics frame (the caller's last seconds after the final one go unreported).
Offline components (``evaflow-*``) are not reported: they cost nothing.
"""

from __future__ import annotations

from typing import Any

from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    MetricsFrame,
    OutputTransportMessageUrgentFrame,
)
from pipecat.metrics.metrics import (
    LLMUsageMetricsData,
    STTUsageMetricsData,
    TTSUsageMetricsData,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from tasks.costs.usage_events import llm_usage_event, stt_usage_event, tts_usage_event
from tasks.systems.pipecat_bot.components import Component

OFFLINE_PREFIX = "evaflow-"
FLUSH_S = 1.0  # STT seconds are sent once at least this much has accumulated


class AudioMeter(FrameProcessor):
    """Seconds of caller audio going downstream into the STT service."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds = 0.0

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InputAudioRawFrame) and direction == FrameDirection.DOWNSTREAM:
            channels = max(int(getattr(frame, "num_channels", 1) or 1), 1)
            self.seconds += len(frame.audio) / 2 / frame.sample_rate / channels
        await self.push_frame(frame, direction)

    def take(self) -> float:
        seconds, self.seconds = self.seconds, 0.0
        return seconds


class UsageReporter(FrameProcessor):
    """The cascade's usage metrics as usage events, one per metrics datum."""

    def __init__(
        self, components: dict[str, Component], services: dict[str, Any], meter: AudioMeter | None
    ) -> None:
        super().__init__()
        # Pipecat names a metric by its processor's name: map that back to the role.
        self.roles = {getattr(s, "name", None): r for r, s in services.items()}
        self.components = components
        self.meter = meter

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, MetricsFrame):
            for event in self.events(frame):
                await self.push_frame(OutputTransportMessageUrgentFrame(message=event))
        await self.push_frame(frame, direction)

    def events(self, frame: MetricsFrame) -> list[dict[str, Any]]:
        out = []
        for data in frame.data:
            role = self.roles.get(data.processor)
            component = self.components.get(role or "")
            if component is None or component.provider.startswith(OFFLINE_PREFIX):
                continue
            model = component.model or data.model
            if isinstance(data, LLMUsageMetricsData):
                out.append(llm_usage_event(component.provider, model, data.value, "llm"))
            elif isinstance(data, TTSUsageMetricsData):
                out.append(tts_usage_event(component.provider, model, data.value))
            elif isinstance(data, STTUsageMetricsData):
                self.meter = None  # the service counts its own seconds: do not count twice
                out.append(stt_usage_event(component.provider, model, data.value.audio_seconds))
        stt = self.components.get("stt")
        if self.meter is not None and stt is not None and self.meter.seconds >= FLUSH_S:
            out.append(stt_usage_event(stt.provider, stt.model, self.meter.take()))
        return out


def metered(component: Component | None) -> bool:
    return component is not None and not component.provider.startswith(OFFLINE_PREFIX)
