"""Interop: a Pipecat pipeline, with Pipecat's own Twilio serializer and WebSocket transport
and our offline STT/TTS as its services, called by the harness on the real-time clock.

Skipped when ``pipecat-ai`` is not installed (it is not a project dependency: 1.14 pins
``soxr~=1.0`` while ``audiomentations`` 0.43.1 needs ``soxr<1``; install it by hand with
``pip install pipecat-ai "soxr<1"`` to run this test).
"""

from __future__ import annotations

import asyncio
import io
import socket
import wave
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pipecat", reason="pipecat-ai is not installed")
pytestmark = pytest.mark.slow

import uvicorn  # noqa: E402
from fastapi import FastAPI, WebSocket  # noqa: E402
from pipecat.audio.vad.silero import SileroVADAnalyzer  # noqa: E402
from pipecat.frames.frames import Frame, TranscriptionFrame, TTSSpeakFrame  # noqa: E402
from pipecat.pipeline.pipeline import Pipeline  # noqa: E402
from pipecat.pipeline.runner import PipelineRunner  # noqa: E402
from pipecat.pipeline.task import PipelineParams, PipelineTask  # noqa: E402
from pipecat.processors.audio.vad_processor import VADProcessor  # noqa: E402
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor  # noqa: E402
from pipecat.serializers.twilio import TwilioFrameSerializer  # noqa: E402
from pipecat.services.settings import STTSettings, TTSSettings  # noqa: E402
from pipecat.services.stt_service import SegmentedSTTService  # noqa: E402
from pipecat.services.tts_service import TTSService  # noqa: E402
from pipecat.transports.websocket.fastapi import (  # noqa: E402
    FastAPIWebsocketParams,
    FastAPIWebsocketTransport,
)

from perturbations.audio import Clip, VoiceSpec  # noqa: E402
from scenarios.loader import load_eva_scenarios  # noqa: E402
from scenarios.models import Scenario  # noqa: E402
from tasks.records import AttemptRecord  # noqa: E402
from tasks.simulate.config import SimulationConfig  # noqa: E402
from tasks.simulate.realtime import simulate_realtime_async  # noqa: E402
from tasks.simulate.voices import agent_recognizer  # noqa: E402
from tasks.voice.stt import SttSpec  # noqa: E402
from tasks.voice.telephony import resample  # noqa: E402
from tasks.voice.tts import synthesize  # noqa: E402

GREETING = "Hello! How can I help you today?"
REPLY = "I understand. Could you tell me more?"
RATE = 16000


class EspeakTTSService(TTSService):
    """Our eSpeak NG synthesis as a Pipecat TTS service."""

    def __init__(self, **kwargs: Any) -> None:
        settings = TTSSettings(model=None, voice=None, language=None)
        super().__init__(
            push_start_frame=True,
            push_stop_frames=True,
            sample_rate=RATE,
            settings=settings,
            **kwargs,
        )

    def can_generate_metrics(self) -> bool:
        return False

    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame, None]:
        clip = await asyncio.to_thread(synthesize, text, VoiceSpec(voice="en-us"))
        pcm = resample(clip, RATE).to_int16().tobytes()

        async def chunks() -> AsyncIterator[bytes]:
            yield pcm

        async for frame in self._stream_audio_frames_from_iterator(
            chunks(), in_sample_rate=RATE, context_id=context_id
        ):
            yield frame


class PocketSphinxSTTService(SegmentedSTTService):
    """Our PocketSphinx recognizer as a Pipecat segmented STT service."""

    def __init__(self, recognizer: Any, heard: list[str], **kwargs: Any) -> None:
        settings = STTSettings(model=None, language=None)
        super().__init__(sample_rate=RATE, settings=settings, **kwargs)
        self.recognizer = recognizer
        self.heard = heard

    async def run_stt(self, audio: bytes) -> AsyncGenerator[Frame, None]:
        with wave.open(io.BytesIO(audio)) as wav:
            rate = wav.getframerate()
            pcm = np.frombuffer(wav.readframes(wav.getnframes()), np.int16)
        text = await asyncio.to_thread(self.recognizer.recognize, Clip.from_int16(pcm, rate))
        self.heard.append(text)
        yield TranscriptionFrame(text, "caller", "")


class Replier(FrameProcessor):
    """The 'brain': answers every transcription with one fixed sentence."""

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, TranscriptionFrame):
            await self.push_frame(TTSSpeakFrame(REPLY))
        else:
            await self.push_frame(frame, direction)


def pipecat_app(recognizer: Any, heard: list[str], running: list[PipelineTask]) -> FastAPI:
    app = FastAPI()

    @app.websocket("/ws")
    async def call(websocket: WebSocket) -> None:
        await websocket.accept()
        # Pipecat's Twilio recipe: read 'connected' and 'start' to learn the stream id.
        start: dict[str, Any] = {}
        while start.get("event") != "start":
            start = await websocket.receive_json()
        serializer = TwilioFrameSerializer(
            start["start"]["streamSid"],
            params=TwilioFrameSerializer.InputParams(auto_hang_up=False),
        )
        transport = FastAPIWebsocketTransport(
            websocket,
            FastAPIWebsocketParams(
                audio_in_enabled=True, audio_out_enabled=True, serializer=serializer
            ),
        )
        pipeline = Pipeline(
            [
                transport.input(),
                VADProcessor(vad_analyzer=SileroVADAnalyzer()),
                PocketSphinxSTTService(recognizer, heard),
                Replier(),
                EspeakTTSService(),
                transport.output(),
            ]
        )
        task = PipelineTask(
            pipeline, params=PipelineParams(audio_in_sample_rate=RATE, audio_out_sample_rate=RATE)
        )

        running.append(task)

        @transport.event_handler("on_client_connected")
        async def greet(transport: Any, client: Any) -> None:
            await task.queue_frames([TTSSpeakFrame(GREETING)])

        await PipelineRunner(handle_sigint=False).run(task)

    return app


@pytest.fixture(scope="module")
def scenario(eva_root: Path) -> Scenario:
    return load_eva_scenarios(eva_root, record_ids=["airline/1.1.2"])[0]


async def call_pipecat(scenario: Scenario, cache: Path) -> tuple[AttemptRecord, list[str]]:
    recognizer = agent_recognizer(scenario, SttSpec(), cache, 0)
    heard: list[str] = []
    running: list[PipelineTask] = []
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(pipecat_app(recognizer, heard, running), log_level="warning")
    )
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    config = SimulationConfig(
        agent=f"ws://127.0.0.1:{port}/ws",
        mode="audio",
        clock="realtime",
        max_duration_s=25.0,
        cache_dir=cache,
    )
    try:
        record = await simulate_realtime_async(scenario, config)
    finally:
        for task in running:
            await task.cancel()  # the harness hung up: end the pipeline like a phone bridge
        server.should_exit = True
        done, _ = await asyncio.wait({serving}, timeout=10)
        if not done:
            serving.cancel()
    return record, heard


def test_a_pipecat_pipeline_talks_to_the_harness(scenario: Scenario, tmp_path: Path) -> None:
    record, heard = asyncio.run(call_pipecat(scenario, tmp_path / "cache"))
    assert record.end_reason == "max_duration" and record.status == "ok", record.error
    greeting, *answers = record.turns_of("assistant")
    assert greeting.turn_id == 0 and greeting.segments
    assert "help" in greeting.heard_text  # the caller's STT heard Pipecat's espeak audio
    assert answers and heard  # the caller spoke, Pipecat's STT service heard something
    # Pipecat answers after its own end-of-turn detection (it may also cut in on a pause).
    assert any(t.latency_s is not None and 0 < t.latency_s < 5 for t in answers)
