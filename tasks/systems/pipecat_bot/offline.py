"""evaflow's offline engines as Pipecat services (providers ``evaflow-pocketsphinx`` and
``evaflow-espeak``).

The recogniser is the agent's own: its language model is built from the domain's agent
configuration and generic vocabulary only (never the scenario's caller lines), so what the
pipeline hears is what a deployed agent of that domain could hear.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import threading
import wave
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
from pipecat.frames.frames import (
    Frame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    TranscriptionFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.services.settings import STTSettings, TTSSettings
from pipecat.services.stt_service import SegmentedSTTService
from pipecat.services.tts_service import TTSService
from pipecat.utils.time import time_now_iso8601

from perturbations.audio import Clip, VoiceSpec
from scenarios.models import AgentConfig
from tasks.voice.stt import Expectation, Recognizer, SttSpec
from tasks.voice.telephony import resample
from tasks.voice.tts import synthesize

# Pipeline audio rate: PocketSphinx's acoustic model is 16 kHz (the serializer upsamples
# the caller's 8 kHz mu-law to this, and downsamples our speech back).
RATE = 16000
# The reference cascade's agent voice (Klatt: what PocketSphinx-style callers hear best).
AGENT_VOICE = "en-us+klatt3"
STOP_FRAME_TIMEOUT_S = 15.0
# A deployed agent knows what it just asked: after "could you spell ...", the next caller
# turn is a spelled code, so the recogniser switches to its code grammar for that turn.
_SPELL_REQUEST = re.compile(r"\bspell", re.IGNORECASE)
_RECOGNIZERS: dict[str, Recognizer] = {}
_LOCK = threading.Lock()


class EspeakTTSService(TTSService):
    """eSpeak NG synthesis (``tasks.voice.tts``) as a Pipecat TTS service."""

    def __init__(self, voice: str = AGENT_VOICE, rate_wpm: int = 175, **kwargs: Any) -> None:
        settings = TTSSettings(model=None, voice=voice, language=None)
        super().__init__(
            push_start_frame=True,
            push_stop_frames=True,
            # A loaded machine can take seconds for a long answer; 3 s would drop it.
            stop_frame_timeout_s=STOP_FRAME_TIMEOUT_S,
            sample_rate=RATE,
            settings=settings,
            **kwargs,
        )
        self.voice = VoiceSpec(voice=voice, rate_wpm=rate_wpm)

    def can_generate_metrics(self) -> bool:
        return False

    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame, None]:
        clip = await asyncio.to_thread(synthesize, text, self.voice)
        pcm = resample(clip, RATE).to_int16().tobytes()

        async def chunks() -> AsyncIterator[bytes]:
            yield pcm

        async for frame in self._stream_audio_frames_from_iterator(
            chunks(), in_sample_rate=RATE, context_id=context_id
        ):
            yield frame


class PocketSphinxSTTService(SegmentedSTTService):
    """PocketSphinx (``tasks.voice.stt.Recognizer``) as a Pipecat segmented STT service:
    Pipecat's VAD cuts the caller's speech, each segment is decoded whole."""

    def __init__(self, recognizer: Recognizer, **kwargs: Any) -> None:
        settings = STTSettings(model=None, language=None)
        super().__init__(sample_rate=RATE, settings=settings, **kwargs)
        self.recognizer = recognizer
        self.expect: Expectation = None  # set by AgentPromptListener from the agent's words

    def can_generate_metrics(self) -> bool:
        return False

    async def run_stt(self, audio: bytes) -> AsyncGenerator[Frame, None]:
        with wave.open(io.BytesIO(audio)) as wav:
            rate = wav.getframerate()
            pcm = np.frombuffer(wav.readframes(wav.getnframes()), np.int16)
        clip = Clip.from_int16(pcm, rate)
        text = await asyncio.to_thread(self.recognizer.recognize, clip, self.expect)
        if text.strip():
            yield TranscriptionFrame(text, "caller", time_now_iso8601())


def expectation_after(agent_text: str) -> Expectation:
    """What the caller's next turn should hold, from what the agent itself just said."""
    return "code" if _SPELL_REQUEST.search(agent_text) else None


class AgentPromptListener(FrameProcessor):
    """Between the LLM and the TTS: reads each agent response as it passes and tells the
    STT what the caller's answer should hold (see :func:`expectation_after`)."""

    def __init__(self, stt: PocketSphinxSTTService, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.stt = stt
        self._words: list[str] = []

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMFullResponseStartFrame):
            self._words = []
        elif isinstance(frame, LLMTextFrame):
            self._words.append(frame.text)
        elif isinstance(frame, LLMFullResponseEndFrame) and self._words:
            self.stt.expect = expectation_after("".join(self._words))
        await self.push_frame(frame, direction)


def agent_side_recognizer(
    domain: str, agent: AgentConfig, params: dict[str, Any], cache_dir: Path
) -> Recognizer:
    """The agent's recogniser for one domain: evaflow's agent-side builder
    (:func:`tasks.simulate.voices.agent_recognizer_for_domain`: the domain's agent
    configuration and generic material, no scenario), one per domain and process."""
    from tasks.simulate.voices import agent_recognizer_for_domain

    spec = SttSpec.model_validate(params.get("stt") or {})
    seed = int(params.get("seed", 0))
    key = json.dumps([domain, agent.id, spec.model_dump(), seed, str(cache_dir)], sort_keys=True)
    with _LOCK:  # every call of the domain shares it (the Recognizer serialises decoding)
        if key not in _RECOGNIZERS:
            _RECOGNIZERS[key] = agent_recognizer_for_domain(domain, agent, spec, cache_dir, seed)
        return _RECOGNIZERS[key]


def warm_up() -> None:
    """Load eSpeak NG before the first call (its first sentence takes seconds)."""
    synthesize("Hello.", VoiceSpec(voice=AGENT_VOICE))
