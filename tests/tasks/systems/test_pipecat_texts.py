"""The Pipecat bot's agent_text reporters (tasks/systems/pipecat_bot/texts.py), run on
Pipecat's own frames in the bot's environment (.venv-pipecat)."""

from __future__ import annotations

from tests.bot_env import last_json_line, needs_bot_env

SCRIPT = """
import asyncio, json
from pipecat.frames.frames import (
    InterruptionFrame, LLMFullResponseEndFrame, LLMFullResponseStartFrame, LLMTextFrame,
    TranscriptionFrame, TTSTextFrame,
)
from pipecat.processors.frame_processor import FrameDirection
from tasks.systems.pipecat_bot.texts import HeardReporter, SaidReporter

async def sent(reporter, frames):
    out = []
    async def push(frame, direction=FrameDirection.DOWNSTREAM):
        message = getattr(frame, "message", None)
        if message:
            out.append([message["event"], message["kind"], message["text"]])
    reporter.push_frame = push
    for frame in frames:
        await reporter.process_frame(frame, FrameDirection.DOWNSTREAM)
    return out

def words(*said):
    frames = [TTSTextFrame(text=w, aggregated_by="word") for w in said]
    for frame in frames:
        frame.includes_inter_frame_spaces = True
    return frames

async def main():
    # Ultravox: the first word comes before the response starts (with its first audio);
    # its LLMTextFrames repeat the words and are not collected.
    ultravox = await sent(SaidReporter("s", TTSTextFrame), [
        *words("Hello!"), LLMFullResponseStartFrame(), LLMTextFrame(text="Hello!"),
        *words(" How", " can", " I"), LLMFullResponseEndFrame(),
        *words("Found"), LLMFullResponseStartFrame(), *words(" it."), InterruptionFrame(),
    ])
    cascade = await sent(SaidReporter("s"), [
        LLMFullResponseStartFrame(), LLMTextFrame(text="I can"), LLMTextFrame(text=" help."),
        LLMFullResponseEndFrame(), LLMFullResponseStartFrame(), LLMFullResponseEndFrame(),
    ])
    heard = await sent(HeardReporter("s"), [
        TranscriptionFrame(text=" yankee papa ", user_id="u", timestamp="t"),
        TranscriptionFrame(text=" ", user_id="u", timestamp="t"),
    ])
    print(json.dumps([ultravox, cascade, heard]))

asyncio.run(main())
"""


@needs_bot_env
def test_each_response_and_transcript_is_one_agent_text_with_every_word() -> None:
    ultravox, cascade, heard = last_json_line(SCRIPT)
    assert ultravox == [
        ["agent_text", "response", "Hello! How can I"],
        ["agent_text", "response", "Found it."],  # cut short by the caller: what was said
    ]
    assert cascade == [["agent_text", "response", "I can help."]]  # a tool-call turn: none
    assert heard == [["agent_text", "transcript", "yankee papa"]]
