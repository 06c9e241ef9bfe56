"""Run in ``.venv-pipecat``: each Pipecat service the catalogue uses, pointed at a closed
loopback port, inside a pipeline watched by the bot's fault reporter
(:mod:`tasks.systems.pipecat_bot.faults`); prints, as one JSON line, what the harness
would receive from each (the ``provider_error`` messages) and how long it took.

``python -m tests.tasks.systems.fault_probe URL`` (``URL`` = ``http://127.0.0.1:PORT``, a
port nothing listens on). The services are built by the bot's own
:func:`tasks.systems.pipecat_bot.pipeline.pipecat_service` (the realtime ones by
:data:`tasks.systems.pipecat_bot.realtime.BUILDERS`) with the base-URL parameter each
one's constructor takes; Anthropic's takes none (its ``client`` carries it). Ultravox is
missing: Pipecat's service posts to ``https://api.ultravox.ai`` whatever it is given.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import warnings
from typing import Any
from urllib.parse import urlsplit

from loguru import logger
from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    LLMContextFrame,
    TTSSpeakFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.workers.runner import WorkerRunner

from tasks.systems.pipecat_bot.components import Component, SystemParams
from tasks.systems.pipecat_bot.faults import report_faults
from tasks.systems.pipecat_bot.pipeline import pipecat_service
from tasks.systems.pipecat_bot.realtime import BUILDERS

RATE = 16000
WAIT_S = 25.0


def cases(url: str) -> list[tuple[str, str, str | None, dict[str, Any]]]:
    """(role, provider, model, constructor params pointing the service at ``url``)."""
    host = urlsplit(url).netloc
    ws = url.replace("http://", "ws://")
    return [
        ("stt", "deepgram", "nova-3", {"base_url": ws}),
        ("stt", "cartesia", "ink-whisper", {"base_url": ws}),
        ("stt", "elevenlabs", "scribe_v2_realtime", {"base_url": host}),
        ("stt", "assemblyai", None, {"api_endpoint_base_url": f"{ws}/v3/ws"}),
        ("stt", "openai", "gpt-4o-transcribe", {"base_url": f"{url}/v1"}),
        ("llm", "openai", "gpt-5.4", {"base_url": f"{url}/v1"}),
        ("llm", "anthropic", "claude-haiku-4-5", {}),
        ("llm", "google", "gemini-3-flash", {"http_options": {"base_url": url}}),
        ("tts", "deepgram", "aura-2-thalia-en", {"base_url": ws}),
        ("tts", "cartesia", "sonic-3", {"url": f"{ws}/tts/websocket", "voice_id": "v"}),
        ("tts", "elevenlabs", "eleven_flash_v2_5", {"url": ws, "voice_id": "v"}),
        ("tts", "openai", "gpt-4o-mini-tts", {"base_url": f"{url}/v1"}),
        ("tts", "google", "gemini-3.1-flash-tts", {"http_options": {"base_url": url}}),
        ("realtime", "openai-realtime", "gpt-realtime-1.5", {"base_url": f"{ws}/v1"}),
        ("realtime", "gemini-live", "gemini-3.1-flash-live", {"base_url": url}),
    ]


def build(role: str, component: Component, url: str) -> Any:
    if role == "realtime":  # the bot's own builders (tasks.systems.pipecat_bot.realtime)
        return BUILDERS[component.provider](component, "You answer the phone.")
    if component.provider == "anthropic":
        from anthropic import AsyncAnthropic
        from pipecat.services.anthropic.llm import AnthropicLLMService

        client = AsyncAnthropic(api_key="placeholder", base_url=url)
        settings = AnthropicLLMService.Settings(model=component.model)
        return AnthropicLLMService(api_key="placeholder", client=client, settings=settings)
    params = dict(component.params)
    if "http_options" in params:  # google-genai's options object, not JSON
        from google.genai.types import HttpOptions

        params["http_options"] = HttpOptions(**params["http_options"])
    return pipecat_service(role, component.model_copy(update={"params": params}))


def triggers(role: str) -> list[Frame]:
    """What makes each kind of service call its provider (websocket services connect at
    start anyway)."""
    if role in ("llm", "realtime"):
        messages = [{"role": "user", "content": "Hello?"}]
        return [LLMContextFrame(LLMContext(messages=messages))]  # type: ignore[arg-type]
    if role == "tts":
        return [TTSSpeakFrame("Hello, how can I help you today?")]
    speech = [InputAudioRawFrame(audio=bytes(640), sample_rate=RATE, num_channels=1)] * 25
    return [VADUserStartedSpeakingFrame(), *speech, VADUserStoppedSpeakingFrame()]


async def probe(
    role: str, provider: str, model: str | None, params: dict[str, Any], url: str
) -> Any:
    component = Component(provider=provider, model=model, params=params)
    system = SystemParams(components={role: component})
    sent: list[dict[str, Any]] = []

    async def send(text: str) -> None:
        sent.append(json.loads(text))

    started = time.perf_counter()
    try:
        service = build(role, component, url)
    except Exception as exc:  # noqa: BLE001 - reported: the test names the service
        return {"role": role, "provider": provider, "build_error": repr(exc)}
    worker = PipelineWorker(
        Pipeline([service]),
        params=PipelineParams(audio_in_sample_rate=RATE, audio_out_sample_rate=RATE),
        idle_timeout_secs=None,
    )
    reporter = report_faults(worker, system, "MZprobe", send)
    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    running = asyncio.create_task(runner.run())
    await worker.queue_frames(triggers(role))
    while not reporter.done and time.perf_counter() - started < WAIT_S and not running.done():
        await asyncio.sleep(0.05)
    seconds = round(time.perf_counter() - started, 2)
    await worker.cancel()
    try:
        await asyncio.wait_for(running, 10)
    except Exception:  # noqa: BLE001 - a service that fails to stop changes nothing here
        running.cancel()
    return {"role": role, "provider": provider, "events": sent, "seconds": seconds}


async def main(url: str) -> None:
    results = [await probe(*case, url) for case in cases(url)]
    print(json.dumps(results))


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    logger.remove()
    logger.add(sys.stderr, level="ERROR")
    asyncio.run(main(sys.argv[1]))
