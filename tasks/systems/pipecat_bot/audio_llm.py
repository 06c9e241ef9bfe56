"""The ``audio_llm`` hybrid: an LLM that hears the caller's audio and answers in text, and a TTS.

A ``hybrid`` system with ``llm`` + ``tts`` and no ``stt`` (the catalogue's
``gemini-3-flash+gemini-3.1-flash-tts``; the reference's ``audio_llm`` pipeline, EVA spec
section on system architectures): transport in -> Silero VAD -> user aggregator (Pipecat's
turn strategies cut the caller's turn: VAD stop, then a speech timeout that does not wait
for a transcript, since there is none) -> :class:`UserAudioTurns` -> LLM -> TTS ->
transport out -> assistant aggregator.

:class:`UserAudioTurns` keeps the caller's audio of each user turn (from a short pre-roll
before the turn began, as the VAD confirms speech only after ``start_secs``) and, when the
aggregator ends the turn, adds it to the context as one audio message, Pipecat's universal
``input_audio`` content part (a WAV; the Google adapter sends it as an ``inlineData``
``audio/wav`` part, as Pipecat's ``LLMContext.create_audio_message`` does minus its
"Audio follows" text, which a model would read as the caller's words), then runs the LLM.
The answer is text: function calls go through the trial's tool bridge as in the cascade,
the TTS speaks the text. Nothing transcribes the caller on the bot's side; the harness
transcribes the agent's audio from the wire as for every system.
"""

from __future__ import annotations

import base64
from collections import deque
from pathlib import Path
from typing import cast

from pipecat.audio.utils import pcm_to_wav
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADParams
from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    LLMContextFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.processors.aggregators.llm_context import LLMContext, LLMContextMessage
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.turns.user_stop.speech_timeout_user_turn_stop_strategy import (
    SpeechTimeoutUserTurnStopStrategy,
)
from pipecat.turns.user_turn_strategies import UserTurnStrategies

from tasks.systems.pipecat_bot.components import SystemParams
from tasks.systems.pipecat_bot.pipeline import service
from tasks.systems.pipecat_bot.tools import BridgeTools

# Audio kept from before the turn's start: Silero confirms speech after its start_secs
# (0.2 s by default), so the first syllable precedes the UserStartedSpeakingFrame.
PREROLL_S = 0.5


def audio_message(frames: list[InputAudioRawFrame]) -> LLMContextMessage:
    """One user message holding the turn's audio as a WAV ``input_audio`` part."""
    first = frames[0]
    pcm = b"".join(f.audio for f in frames)
    wav = pcm_to_wav(pcm, first.sample_rate, first.num_channels)
    part = {
        "type": "input_audio",
        "input_audio": {"data": base64.b64encode(wav).decode(), "format": "wav"},
    }
    return cast(LLMContextMessage, {"role": "user", "content": [part]})


class UserAudioTurns(FrameProcessor):
    """After the user aggregator: each user turn's audio becomes a context message, and
    the turn's end runs the LLM on it."""

    def __init__(self, context: LLMContext, preroll_s: float = PREROLL_S) -> None:
        super().__init__()
        self.context = context
        self.preroll_s = preroll_s
        self.recent: deque[InputAudioRawFrame] = deque()
        self.turn: list[InputAudioRawFrame] | None = None

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InputAudioRawFrame):
            self.keep(frame)
            return  # the LLM hears the turn's audio through the context, not the stream
        if isinstance(frame, UserStartedSpeakingFrame) and direction == FrameDirection.DOWNSTREAM:
            self.turn = list(self.recent)
        elif isinstance(frame, UserStoppedSpeakingFrame) and direction == FrameDirection.DOWNSTREAM:
            await self.push_frame(frame, direction)
            await self.end_turn()
            return
        await self.push_frame(frame, direction)

    def keep(self, frame: InputAudioRawFrame) -> None:
        if self.turn is not None:
            self.turn.append(frame)
            return
        self.recent.append(frame)
        held = sum(len(f.audio) / (2 * f.num_channels * f.sample_rate) for f in self.recent)
        while self.recent and held - self._seconds(self.recent[0]) >= self.preroll_s:
            held -= self._seconds(self.recent.popleft())

    @staticmethod
    def _seconds(frame: InputAudioRawFrame) -> float:
        return len(frame.audio) / (2 * frame.num_channels * frame.sample_rate)

    async def end_turn(self) -> None:
        turn, self.turn = self.turn, None
        self.recent.clear()
        if not turn:
            return
        self.context.add_message(audio_message(turn))
        await self.push_frame(LLMContextFrame(self.context))


def build_audio_llm(
    system: SystemParams,
    context: LLMContext,
    tools: BridgeTools,
    vad_stop_s: float,
    turn_timeout_s: float,
) -> tuple[list[FrameProcessor], LLMContextAggregatorPair]:
    """The processors between transport in and out, and the context pair (its assistant
    side goes after transport out)."""
    cache = Path(system.cache_dir or Path.home() / ".cache" / "evaflow-pipecat")
    # The agent config and domain only shape an offline STT, which this system lacks.
    llm, tts = (service(r, system.components[r], None, cache) for r in ("llm", "tts"))
    llm.register_function(None, tools.handle)
    stop = SpeechTimeoutUserTurnStopStrategy(
        user_speech_timeout=turn_timeout_s, wait_for_transcript=False
    )
    pair = LLMContextAggregatorPair(
        context,
        user_params=LLMUserAggregatorParams(
            user_turn_strategies=UserTurnStrategies(stop=[stop]),
            # Every turn is "empty" of transcript here; the audio message answers it.
            empty_user_turn=None,
        ),
    )
    vad = VADProcessor(vad_analyzer=SileroVADAnalyzer(params=VADParams(stop_secs=vad_stop_s)))
    return [vad, pair.user(), UserAudioTurns(context), llm, tts], pair
