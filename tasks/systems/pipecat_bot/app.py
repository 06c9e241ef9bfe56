"""The bot's WebSocket server: one Pipecat pipeline per incoming call at ``/ws``.

Transport: Pipecat's ``FastAPIWebsocketTransport`` with its own ``TwilioFrameSerializer``
(``auto_hang_up=False``: there is no Twilio account to call at hang-up). That serializer
drops the harness's ``mark`` echoes (we send no marks), ``stop`` and ``end_call``; the call
ends when the harness closes the socket after them (``on_client_disconnected`` cancels the
pipeline). Pipecat sends synthesized audio faster than real time, which the protocol
allows (the harness queues it, up to 60 s ahead).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, WebSocket
from loguru import logger
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADParams
from pipecat.frames.frames import TTSSpeakFrame, TTSTextFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.serializers.twilio import TwilioFrameSerializer
from pipecat.transports.websocket.fastapi import (
    FastAPIWebsocketParams,
    FastAPIWebsocketTransport,
)
from pipecat.turns.user_stop.speech_timeout_user_turn_stop_strategy import (
    SpeechTimeoutUserTurnStopStrategy,
)
from pipecat.turns.user_turn_strategies import UserTurnStrategies
from pipecat.workers.runner import WorkerRunner

from scenarios.models import AgentConfig
from tasks.systems.pipecat_bot.audio_llm import build_audio_llm
from tasks.systems.pipecat_bot.faults import report_faults, report_setup_failure
from tasks.systems.pipecat_bot.offline import RATE, AgentPromptListener, PocketSphinxSTTService
from tasks.systems.pipecat_bot.pipeline import (
    SystemParams,
    is_audio_llm,
    realtime_builder,
    service,
)
from tasks.systems.pipecat_bot.texts import HeardReporter, SaidReporter, agent_text
from tasks.systems.pipecat_bot.tools import BridgeTools
from tasks.systems.pipecat_bot.usage import AudioMeter, UsageReporter, metered

# customParameters the pipecat agent (tasks/simulate/agents/pipecat.py) adds to the bridge's.
PARAM_SYSTEM_PROMPT = "system_prompt"
PARAM_AGENT_CONFIG = "agent_config"
PARAM_DOMAIN = "domain"
# The cascade's initial message (tasks.simulate.llm_prompts.GREETING, EVA spec 7.5): the
# agent greets without the model.
GREETING = "Hello! How can I help you today?"
DEFAULT_PROMPT = "You are a helpful voice assistant answering a phone call."
# Caller turn end: the reference cascade's 600 ms of silence (VAD stop + turn timeout).
VAD_STOP_S = 0.4
TURN_TIMEOUT_S = 0.2


async def read_start(websocket: WebSocket) -> dict[str, Any]:
    """Pipecat's Twilio recipe: read ``connected`` and ``start`` to learn the stream."""
    message: dict[str, Any] = {}
    while message.get("event") != "start":
        message = await websocket.receive_json()
    return message


def build_task(
    system: SystemParams, websocket: WebSocket, start: dict[str, Any], tools: BridgeTools
) -> PipelineWorker:
    params = dict(start["start"].get("customParameters") or {})
    serializer = TwilioFrameSerializer(
        start["start"]["streamSid"],
        params=TwilioFrameSerializer.InputParams(auto_hang_up=False),
    )
    transport = FastAPIWebsocketTransport(
        websocket,
        FastAPIWebsocketParams(
            audio_in_enabled=True,
            audio_out_enabled=True,
            add_wav_header=False,
            serializer=serializer,
        ),
    )
    prompt = str(params.get(PARAM_SYSTEM_PROMPT) or DEFAULT_PROMPT)
    context = LLMContext(messages=[{"role": "system", "content": prompt}], tools=tools.toolset)
    sid = str(start["start"]["streamSid"])
    if "realtime" in system.components:
        brain, pair = realtime_builder()(system.components["realtime"], tools, context)
        # A hybrid (Ultravox) is judged on what it meant to say (spec 4.2); s2s on its audio.
        said = [SaidReporter(sid, TTSTextFrame)] if system.architecture == "hybrid" else []
        processors = [
            transport.input(),
            pair.user(),
            brain,
            *said,
            transport.output(),
            pair.assistant(),
        ]
    elif is_audio_llm(system):
        hearing, pair = build_audio_llm(system, context, tools, VAD_STOP_S, TURN_TIMEOUT_S)
        # build_audio_llm ends with the LLM and the TTS services.
        *hear, llm, tts = hearing
        reporter = UsageReporter(system.components, {"llm": llm, "tts": tts}, None)
        processors = [
            transport.input(),
            *hear,
            llm,
            SaidReporter(sid),
            tts,
            reporter,
            transport.output(),
            pair.assistant(),
        ]
    else:
        agent = AgentConfig.model_validate_json(params[PARAM_AGENT_CONFIG])
        domain = str(params.get(PARAM_DOMAIN) or "")
        cache = Path(system.cache_dir or Path.home() / ".cache" / "evaflow-pipecat")
        stt, llm, tts = (
            service(r, system.components[r], agent, cache, domain) for r in ("stt", "llm", "tts")
        )
        llm.register_function(None, tools.handle)
        pair = LLMContextAggregatorPair(
            context,
            user_params=LLMUserAggregatorParams(
                user_turn_strategies=UserTurnStrategies(
                    stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=TURN_TIMEOUT_S)]
                )
            ),
        )
        vad = VADProcessor(vad_analyzer=SileroVADAnalyzer(params=VADParams(stop_secs=VAD_STOP_S)))
        # Our offline STT follows the agent's own questions (a code grammar after "spell").
        listener = [AgentPromptListener(stt)] if isinstance(stt, PocketSphinxSTTService) else []
        meter = AudioMeter() if metered(system.components.get("stt")) else None
        services = {"stt": stt, "llm": llm, "tts": tts}
        processors = [
            transport.input(),
            *([meter] if meter else []),
            vad,
            stt,
            HeardReporter(sid),
            pair.user(),
            llm,
            SaidReporter(sid),
            *listener,
            tts,
            UsageReporter(system.components, services, meter),  # usage events (costs)
            transport.output(),
            pair.assistant(),
        ]
    task = PipelineWorker(
        Pipeline(processors),
        params=PipelineParams(
            audio_in_sample_rate=RATE,
            audio_out_sample_rate=RATE,
            enable_metrics=True,  # usage metrics feed the usage events (tasks/costs)
            enable_usage_metrics=True,
        ),
        # The harness ends every call (hang-up, time limit); a quiet line is not an end.
        idle_timeout_secs=None,
    )

    @transport.event_handler("on_client_connected")
    async def greet(transport: Any, client: Any) -> None:
        if "realtime" not in system.components:
            await task.queue_frames(
                [agent_text(sid, GREETING, "response"), TTSSpeakFrame(GREETING)]
            )

    @transport.event_handler("on_client_disconnected")
    async def hung_up(transport: Any, client: Any) -> None:
        await task.cancel()

    return task


def build_app(system: SystemParams) -> FastAPI:
    app = FastAPI()

    @app.websocket("/ws")
    async def call(websocket: WebSocket) -> None:
        await websocket.accept()
        start = await read_start(websocket)
        tools = BridgeTools.from_start(dict(start["start"].get("customParameters") or {}))
        try:
            await tools.load()
            task = build_task(system, websocket, start, tools)
            report_faults(task, system, start["streamSid"], websocket.send_text)
            runner = WorkerRunner(handle_sigint=False)
            await runner.add_workers(task)
            await runner.run()
        except Exception as exc:
            logger.exception("call failed")
            await report_setup_failure(start["streamSid"], exc, websocket.send_text)
            raise
        finally:
            await tools.close()

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    return app
