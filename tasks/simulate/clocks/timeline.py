"""From what the harness measured on the wire to turns (spec 4.2 turn numbering).

Turn 0 is everything before the caller's first utterance (the greeting); turn n starts
when the caller starts utterance n. Speech segments come from VAD on each track; an
assistant turn holds the agent segments that *start* inside it. Interruptions are read
from overlaps of those segments, latencies from their gaps.
"""

from __future__ import annotations

import bisect

from pydantic import BaseModel, Field

from tasks.records import Segment, TurnRecord


class UtteranceLog(BaseModel):
    """One caller utterance as the harness played it."""

    turn_id: int
    text: str = Field(description="What the caller said (its TTS input)")
    start_s: float
    end_s: float


class CallLog(BaseModel):
    """Everything the timeline is built from."""

    utterances: list[UtteranceLog] = Field(default_factory=list)
    caller_segments: list[tuple[float, float]] = Field(default_factory=list)
    agent_segments: list[tuple[float, float]] = Field(default_factory=list)
    agent_texts: list[tuple[float, str]] = Field(
        default_factory=list, description="(time, intended text) the agent reported"
    )
    agent_transcripts: list[tuple[float, str]] = Field(
        default_factory=list, description="(time, text) the agent reported hearing"
    )
    caller_heard: list[tuple[float, str]] = Field(
        default_factory=list, description="(time, text) the caller's STT of agent speech"
    )


def _turn_of(bounds: list[float], t: float) -> int:
    # Times are multiples of 20 ms computed two ways; a microsecond absorbs float error.
    return bisect.bisect_right(bounds, t + 1e-6)


def _texts(items: list[tuple[float, str]], bounds: list[float], turn: int) -> str:
    return " ".join(text for t, text in items if _turn_of(bounds, t) == turn and text).strip()


def _segments(spans: list[tuple[float, float]], bounds: list[float], turn: int) -> list[Segment]:
    return [
        Segment(start_s=round(s, 3), end_s=round(max(e, s), 3))
        for s, e in spans
        if _turn_of(bounds, s) == turn
    ]


def build_turns(log: CallLog) -> list[TurnRecord]:
    bounds = [u.start_s for u in log.utterances]
    turns: list[TurnRecord] = []
    for turn in range(len(log.utterances) + 1):
        user = log.utterances[turn - 1] if turn else None
        if user is not None:
            turns.append(
                TurnRecord(
                    turn_id=turn,
                    role="user",
                    intended_text=user.text,
                    heard_text=_texts(log.agent_transcripts, bounds, turn),
                    segments=_segments(log.caller_segments, bounds, turn),
                )
            )
        agent_segments = _segments(log.agent_segments, bounds, turn)
        intended = _texts(log.agent_texts, bounds, turn)
        if agent_segments or intended:
            turns.append(
                TurnRecord(
                    turn_id=turn,
                    role="assistant",
                    intended_text=intended,
                    heard_text=_texts(log.caller_heard, bounds, turn),
                    segments=agent_segments,
                )
            )
    mark_overlaps(turns)
    return turns


def mark_overlaps(turns: list[TurnRecord]) -> None:
    """Interruptions and latencies from segment overlaps and gaps."""
    last_agent_end: float | None = None
    user: TurnRecord | None = None
    for turn in turns:
        if turn.role == "user":
            user = turn
            if (
                turn.segments
                and last_agent_end is not None
                and turn.segments[0].start_s < (last_agent_end - 0.001)
            ):
                turn.interrupts = True
                previous = next(
                    (t for t in reversed(turns[: turns.index(turn)]) if t.role == "assistant"),
                    None,
                )
                if previous is not None:
                    previous.interrupted = True
            continue
        if turn.segments:
            last_agent_end = max(s.end_s for s in turn.segments)
        if user is None or user.turn_id != turn.turn_id or not user.segments or not turn.segments:
            continue
        user_end = max(s.end_s for s in user.segments)
        first = turn.segments[0].start_s
        turn.latency_s = round(first - user_end, 3)
        if first < user_end - 0.001:
            turn.interrupts = True
            user.interrupted = True
