"""Speech-to-speech components (``realtime`` role) through Pipecat's realtime services.

Providers: ``openai-realtime`` (``OpenAIRealtimeLLMService``; ``base_url`` reaches Azure
and other OpenAI-Realtime-compatible endpoints, the service appends ``?model=``),
``gemini-live`` (``GeminiLiveLLMService``; ``base_url`` goes into the google-genai
client's ``HttpOptions``; optional ``ca_file`` trusts a private gateway's certificate, the
SDK reading ``SSL_CERT_FILE``) and ``ultravox`` (``UltravoxRealtimeLLMService``, one-shot
call). API keys come from the bot's environment.

Audio: the harness speaks 8 kHz mu-law; Pipecat's ``TwilioFrameSerializer`` decodes it to
the pipeline rate, each service resamples to its API's rate (OpenAI 24 kHz, Gemini 16 kHz
in) and the serializer converts the 24 kHz answer back to 8 kHz mu-law. A provider-side
barge-in (OpenAI ``input_audio_buffer.speech_started``, Gemini ``interrupted``) becomes
Pipecat's interruption, which the serializer sends as Twilio ``clear``. Tools: the
bridge's schemas go into the context and every call runs through the bridge
(:class:`tasks.systems.pipecat_bot.tools.BridgeTools`). Usage: after every response the
service's token counts (and the audio seconds in and out since the last report) go to
the harness as a ``usage`` event, stored in the ``events`` table (docs/agent-protocol.md).
"""

from __future__ import annotations

import os
from typing import Any

from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    LLMContextFrame,
    MetricsFrame,
    OutputTransportMessageUrgentFrame,
    StartFrame,
    TTSAudioRawFrame,
)
from pipecat.metrics.metrics import LLMUsageMetricsData
from pipecat.pipeline.pipeline import Pipeline
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from tasks.costs.usage_events import llm_usage_event
from tasks.systems.pipecat_bot.components import Component, ProviderError
from tasks.systems.pipecat_bot.tools import BridgeTools

KEYS = {
    "openai-realtime": "OPENAI_API_KEY",
    "gemini-live": "GOOGLE_API_KEY",
    "ultravox": "ULTRAVOX_API_KEY",
}
PROVIDERS = sorted(KEYS)
DEFAULT_PROMPT = "You are a helpful voice assistant answering a phone call."


def _key(component: Component) -> str:
    env = KEYS[component.provider]
    key = os.environ.get(env)
    if not key:
        raise ProviderError(f"realtime provider {component.provider!r} needs ${env}")
    return key


def openai_realtime(component: Component, prompt: str) -> Any:
    from pipecat.services.openai.realtime import events
    from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService

    params = dict(component.params)
    base = str(params.pop("base_url", "wss://api.openai.com/v1")).rstrip("/")
    # Catalogue base URLs are the API root (like the SDK's); the service wants the endpoint.
    url = base if base.endswith("/realtime") else f"{base}/realtime"
    session = events.SessionProperties(
        instructions=prompt,
        audio=events.AudioConfiguration(
            input=events.AudioInput(transcription=events.InputAudioTranscription()),
        ),
    )
    settings = OpenAIRealtimeLLMService.Settings(
        model=component.model or "gpt-realtime", session_properties=session
    )
    return OpenAIRealtimeLLMService(
        api_key=_key(component), base_url=url, settings=settings, **params
    )


def gemini_live(component: Component, prompt: str) -> Any:
    from google.genai.types import HttpOptions
    from pipecat.services.google.gemini_live.llm import GeminiLiveLLMService

    params = dict(component.params)
    base = params.pop("base_url", None)
    ca_file = params.pop("ca_file", None)
    if ca_file:
        os.environ["SSL_CERT_FILE"] = str(ca_file)  # the SDK's WebSocket trust store
    settings = GeminiLiveLLMService.Settings(model=component.model or "models/gemini-live")
    return GeminiLiveLLMService(
        api_key=_key(component),
        system_instruction=prompt,
        http_options=HttpOptions(base_url=str(base)) if base else None,
        settings=settings,
        **params,
    )


def ultravox(component: Component, prompt: str, toolset: Any = None) -> Any:
    """Ultravox takes its tools when the call is created (``selectedTools``), not from the
    context. Pipecat's service creates the call at ``https://api.ultravox.ai/api/calls``,
    hard-coded; a ``base_url`` moves call creation (see :func:`hosted_ultravox`)."""
    from pipecat.services.ultravox.llm import OneShotInputParams, UltravoxRealtimeLLMService

    params = dict(component.params)
    base = params.pop("base_url", None)
    call = OneShotInputParams(
        api_key=_key(component), system_prompt=prompt, model=component.model, **params
    )
    if base:
        return hosted_ultravox(str(base).rstrip("/"), call, toolset)
    return UltravoxRealtimeLLMService(params=call, one_shot_selected_tools=toolset)


def hosted_ultravox(base_url: str, call: Any, toolset: Any) -> Any:
    """Pipecat's Ultravox service joining a call created at ``base_url``: when the pipeline
    starts, the bot sends Pipecat's own creation request there (:func:`ultravox_call_body`)
    and gives the service the call's ``joinUrl`` through its public ``JoinUrlInputParams``;
    building it sends nothing. Everything after the join is Pipecat's code, unchanged."""
    from pipecat.services.llm_service import LLMService
    from pipecat.services.ultravox.llm import JoinUrlInputParams, UltravoxRealtimeLLMService

    join = JoinUrlInputParams(join_url=f"{base_url}/api/calls")  # the real one at start

    class HostedUltravoxService(UltravoxRealtimeLLMService):
        async def start(self, frame: Any) -> None:
            try:
                join.join_url = await create_ultravox_call(base_url, call, toolset)
            except Exception as exc:
                await LLMService.start(self, frame)
                await self.push_error(
                    f"Failed to create the Ultravox call: {exc}", exc, force_treat_as_permanent=True
                )
                return
            await super().start(frame)

    return HostedUltravoxService(params=join)


def ultravox_call_body(call: Any, toolset: Any, rate: int = 48000) -> dict[str, Any]:
    """The body Pipecat's ``_start_one_shot_call`` posts
    (https://docs.ultravox.ai/api-reference/calls/calls-post); ``rate`` is the service's fixed
    48 kHz, both ways."""
    tools = [
        {
            "temporaryTool": {
                "modelToolName": tool.name,
                "description": tool.description,
                "dynamicParameters": [
                    {
                        "name": name,
                        "location": "PARAMETER_LOCATION_BODY",
                        "schema": schema,
                        "required": name in tool.required,
                    }
                    for name, schema in tool.properties.items()
                ],
                "client": {},
            }
        }
        for tool in (toolset.standard_tools if toolset is not None else [])
    ]
    body = {
        "systemPrompt": call.system_prompt,
        "temperature": call.temperature,
        "model": call.model,
        "voice": str(call.voice) if call.voice else None,
        "metadata": call.metadata,
        "maxDuration": f"{call.max_duration.total_seconds():3f}s",
        "selectedTools": tools,
        "medium": {"serverWebSocket": {"inputSampleRate": rate}},
    }
    if call.output_medium:
        body["initialOutputMedium"] = f"MESSAGE_MEDIUM_{call.output_medium.upper()}"
    return body | call.extra


async def create_ultravox_call(base_url: str, call: Any, toolset: Any) -> str:
    """``POST {base_url}/api/calls`` as Pipecat sends it; the ``joinUrl``."""
    import aiohttp

    async with (
        aiohttp.ClientSession() as session,
        session.post(
            f"{base_url}/api/calls",
            headers={"X-Api-Key": call.api_key},
            json=ultravox_call_body(call, toolset),
        ) as response,
    ):
        if response.status != 201:
            raise ProviderError(f"Ultravox API error {response.status}: {await response.text()}")
        return str((await response.json())["joinUrl"])


BUILDERS = {"openai-realtime": openai_realtime, "gemini-live": gemini_live, "ultravox": ultravox}


class Kickoff(FrameProcessor):
    """Hands the service its context right after start, so the agent greets first."""

    def __init__(self, context: LLMContext) -> None:
        super().__init__()
        self.context = context

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        await self.push_frame(frame, direction)
        if isinstance(frame, StartFrame):
            await self.push_frame(LLMContextFrame(self.context))


class UsageReporter(FrameProcessor):
    """The service's usage metrics (and audio seconds) as ``usage`` events to the harness."""

    def __init__(self, component: Component) -> None:
        super().__init__()
        self.component = component
        self.audio_in_s = 0.0
        self.audio_out_s = 0.0

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InputAudioRawFrame):
            self.audio_in_s += len(frame.audio) / 2 / frame.sample_rate
        elif isinstance(frame, TTSAudioRawFrame):
            self.audio_out_s += len(frame.audio) / 2 / frame.sample_rate
        elif isinstance(frame, MetricsFrame):
            for data in frame.data:
                if isinstance(data, LLMUsageMetricsData):
                    await self.push_frame(OutputTransportMessageUrgentFrame(self.event(data)))
        await self.push_frame(frame, direction)

    def event(self, data: LLMUsageMetricsData) -> dict[str, Any]:
        # Gross token counts (tasks.costs.usage_events), priced by the costs view.
        component = self.component
        event = {
            **llm_usage_event(component.provider, component.model, data.value, "realtime"),
            "input_audio_s": round(self.audio_in_s, 3),
            "output_audio_s": round(self.audio_out_s, 3),
        }
        self.audio_in_s = self.audio_out_s = 0.0
        return event


def build_realtime(
    component: Component, tools: BridgeTools, context: LLMContext | None = None
) -> tuple[Pipeline, LLMContextAggregatorPair]:
    """The ``realtime`` component as (processor between transport in and out, context pair)."""
    if component.provider not in BUILDERS:
        raise ProviderError(f"unknown realtime provider {component.provider!r}; valid: {PROVIDERS}")
    if context is None:
        context = LLMContext(messages=[{"role": "system", "content": DEFAULT_PROMPT}])
    if tools.toolset is not None:
        context.set_tools(tools.toolset)
    prompt = next(
        (str(m.get("content")) for m in context.get_messages() if m.get("role") == "system"),
        DEFAULT_PROMPT,
    )
    extra = {"toolset": tools.toolset} if component.provider == "ultravox" else {}
    service = BUILDERS[component.provider](component, prompt, **extra)
    service.register_function(None, tools.handle)
    pair = LLMContextAggregatorPair(context)
    return Pipeline([Kickoff(context), service, UsageReporter(component)]), pair
