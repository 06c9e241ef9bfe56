"""Usage events as the Pipecat bot sends them: gross token counts whatever the service
reports, and the bot's reporter turning Pipecat's metrics frames into them (run in the
bot's own environment, .venv-pipecat)."""

from __future__ import annotations

import sys
from types import SimpleNamespace

from tasks.costs.usage_events import llm_usage_event, stt_usage_event, tts_usage_event
from tests.bot_env import last_json_line, needs_bot_env


def tokens(**kw: int | None) -> SimpleNamespace:
    base = {"cache_read_input_tokens": None, "cache_read_input_audio_tokens": None}
    return SimpleNamespace(**{**base, **kw})


def test_llm_input_is_gross_whether_the_service_reports_prompt_tokens_net_or_gross() -> None:
    # Anthropic: prompt_tokens net of the 300 cached; OpenAI: gross. total is gross in both.
    net = tokens(
        prompt_tokens=700, completion_tokens=50, total_tokens=1050, cache_read_input_tokens=300
    )
    gross = tokens(
        prompt_tokens=1000, completion_tokens=50, total_tokens=1050, cache_read_input_tokens=300
    )
    for usage in (net, gross):
        event = llm_usage_event("anthropic", "m", usage, "llm")
        assert (event["input_tokens"], event["cached_input_tokens"]) == (1000, 300)
        assert (event["output_tokens"], event["total_tokens"]) == (50, 1050)
    audio = tokens(
        prompt_tokens=900, completion_tokens=120, total_tokens=1020, input_audio_tokens=600,
        output_audio_tokens=100, cache_read_input_tokens=80, cache_read_input_audio_tokens=30,
    )  # fmt: skip
    event = llm_usage_event("openai-realtime", "rt", audio, "realtime")
    assert (event["cached_input_tokens"], event["cached_input_audio_tokens"]) == (50, 30)
    assert (event["input_audio_tokens"], event["output_audio_tokens"]) == (600, 100)
    assert stt_usage_event("deepgram", "nova-3", 12.34567)["stt_seconds"] == 12.346
    assert tts_usage_event("cartesia", "sonic-3", 42)["tts_characters"] == 42


BOT_SCRIPT = """
import asyncio, json, sys
from pipecat.frames.frames import InputAudioRawFrame, MetricsFrame
from pipecat.metrics.metrics import LLMTokenUsage, LLMUsageMetricsData, TTSUsageMetricsData
from pipecat.processors.frame_processor import FrameDirection
from tasks.systems.pipecat_bot.components import Component
from tasks.systems.pipecat_bot.usage import AudioMeter, UsageReporter

class Named:
    def __init__(self, name): self.name = name

components = {
    "stt": Component(provider="deepgram", model="nova-3"),
    "llm": Component(provider="openai", model="gpt-5.4"),
    "tts": Component(provider="evaflow-espeak"),
}
meter = AudioMeter()
meter.seconds = 2.5  # as if 2.5 s of caller audio had gone by
reporter = UsageReporter(components, {r: Named(r + "#0") for r in components}, meter)
usage = LLMTokenUsage(prompt_tokens=800, completion_tokens=40, total_tokens=840)
frame = MetricsFrame(data=[
    LLMUsageMetricsData(processor="llm#0", model="gpt-5.4-2026-03-05", value=usage),
    TTSUsageMetricsData(processor="tts#0", value=33),
])
print(json.dumps(reporter.events(frame)))
"""


@needs_bot_env
def test_the_bot_reports_the_cascades_metered_usage_with_the_catalogue_model() -> None:
    events = last_json_line(BOT_SCRIPT)
    assert [(e["component"], e["model"]) for e in events] == [
        ("llm", "gpt-5.4"),  # the catalogue's id (priced), not the provider's dated one
        ("stt", "nova-3"),  # the meter's seconds; the offline TTS is not reported
    ]
    assert (events[0]["input_tokens"], events[0]["output_tokens"]) == (800, 40)
    assert events[1]["stt_seconds"] == 2.5
    assert sys.executable  # the main environment never imports pipecat for this
