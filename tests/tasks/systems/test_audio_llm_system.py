"""The ``audio_llm`` hybrid's user turn, in a REAL Pipecat process.

No STT anywhere in the bot: Pipecat's VAD and turn strategy cut the caller's turn and
:mod:`tasks.systems.pipecat_bot.audio_llm` puts its audio in the LLM context, which
Pipecat's ``GoogleLLMService`` sends as an ``inlineData`` WAV part. The catalogue system
``gemini-3-flash+gemini-3.1-flash-tts`` as shipped completes an EVA record end to end
against the Gemini API stand-in in ``test_rehearsal_paper_systems.py``.
"""

from __future__ import annotations

import pytest

from tasks.systems.pipecat_process import bot_python
from tests.tasks.systems.standins.pipecat_driver import run_in_pipecat

pytestmark = pytest.mark.skipif(
    not bot_python().exists(), reason="the Pipecat environment is missing: run `make pipecat-env`"
)


TURN_SCRIPT = r"""
import asyncio, base64, io, json, wave
from pipecat.frames.frames import (
    InputAudioRawFrame, LLMContextFrame, UserStartedSpeakingFrame, UserStoppedSpeakingFrame,
)
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.tests.utils import run_test
from tasks.systems.pipecat_bot.audio_llm import UserAudioTurns

def audio(seconds, level):  # 20 ms frames of a constant sample value, to tell them apart
    n = int(seconds * 50)
    return [InputAudioRawFrame(int(level).to_bytes(2, "little", signed=True) * 320, 16000, 1)
            for _ in range(n)]

async def main():
    context = LLMContext(messages=[{"role": "system", "content": "test"}])
    frames = [*audio(2.0, 1), UserStartedSpeakingFrame(), *audio(1.0, 2),
              UserStoppedSpeakingFrame(), *audio(1.0, 3)]
    down, _ = await run_test(UserAudioTurns(context), frames_to_send=frames)
    message = context.get_messages()[-1]
    part = message["content"][0]
    with wave.open(io.BytesIO(base64.b64decode(part["input_audio"]["data"]))) as wav:
        rate, pcm = wav.getframerate(), wav.readframes(wav.getnframes())
    levels = [int.from_bytes(pcm[i:i + 2], "little", signed=True) for i in range(0, len(pcm), 2)]
    print(json.dumps({
        "down": [type(f).__name__ for f in down],
        "role": message["role"], "parts": [p["type"] for p in message["content"]],
        "rate": rate, "seconds": {str(v): levels.count(v) / rate for v in sorted(set(levels))},
    }))

asyncio.run(main())
"""


def test_a_user_turns_audio_with_its_pre_roll_becomes_one_context_message() -> None:
    out = run_in_pipecat(TURN_SCRIPT, timeout=60)
    # The turn's audio and the 0.5 s before it (the VAD confirms speech late), nothing
    # after; raw audio stays out of the LLM's stream; the turn's end runs the LLM.
    assert (out["role"], out["parts"], out["rate"]) == ("user", ["input_audio"], 16000)
    assert out["seconds"] == {"1": 0.5, "2": 1.0}
    assert "InputAudioRawFrame" not in out["down"]
    assert out["down"][-2:] == ["UserStoppedSpeakingFrame", "LLMContextFrame"]
