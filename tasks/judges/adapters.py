"""Build judge inputs from a metric context (``tasks.metrics.context.MetricContext``).

Duck-typed on the context's attributes so that ``tasks.judges`` does not import
``tasks.metrics`` (the metrics import the judges, not the other way round).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from tasks.judges.base import AudioInput, JudgeTask
from tasks.judges.inputs import (
    BehaviorInput,
    ConcisenessInput,
    ConversationInput,
    EntityUnit,
    KeyEntityInput,
    SpeechFidelityInput,
    TraceItem,
    TurnTextInput,
    trace_from_context,
)

Role = Literal["user", "assistant"]
Variant = Literal["agent_entities", "user", "tts"]

# Which AudioRef track holds each speaker: the caller's unperturbed track is what the
# caller simulator produced (spec 4.5: user speech fidelity listens to the clean copy).
TRACKS = {"assistant": ("agent",), "user": ("caller_clean", "caller")}


def trace_of(ctx: Any) -> list[TraceItem]:
    return trace_from_context(list(ctx.trace))


def _tools(ctx: Any) -> list[dict[str, Any]]:
    return [t.model_dump() for t in ctx.agent.tools]


def conversation_input(ctx: Any) -> ConversationInput:
    return ConversationInput(
        trace=trace_of(ctx),
        role=ctx.agent.role,
        instructions=ctx.agent.instructions,
        tools=_tools(ctx),
        current_date_time=ctx.scenario.current_date_time,
        pipeline=ctx.pipeline,
        language=ctx.language,
    )


def conciseness_input(ctx: Any) -> ConcisenessInput:
    return ConcisenessInput(trace=trace_of(ctx), pipeline=ctx.pipeline)


def speakability_input(ctx: Any) -> TurnTextInput:
    turns = {t: text for t, text in ctx.intended_assistant_turns.items() if text.strip()}
    return TurnTextInput(turns=turns)


def key_entity_input(ctx: Any) -> KeyEntityInput:
    """Cascade: caller turns with both an intended and a transcribed text; audio-native
    pipelines: the tool calls (spec 4.6)."""
    if ctx.is_audio_native:
        return KeyEntityInput(mode="tool_calls", trace=trace_of(ctx))
    units = [
        EntityUnit(unit_id=turn, expected=text, transcribed=ctx.transcribed_user_turns[turn])
        for turn, text in sorted(ctx.intended_user_turns.items())
        if text.strip() and ctx.transcribed_user_turns.get(turn, "").strip()
    ]
    return KeyEntityInput(mode="turns", units=units)


def audio_input(ctx: Any, role: str) -> AudioInput | None:
    """The speaker's track and its per-turn segments; None when the attempt has no audio."""
    refs = {ref.track: ref for ref in ctx.record.audio}
    track = next((refs[name] for name in TRACKS[role] if name in refs), None)
    if track is None:
        return None
    segments = ctx.audio_segments_assistant if role == "assistant" else ctx.audio_segments_user
    return AudioInput(path=Path(track.path), segments={t: list(s) for t, s in segments.items()})


def speech_input(ctx: Any, role: Role, variant: Variant) -> SpeechFidelityInput:
    """Each turn's text, and for agent speech fidelity which entities to judge: audio-native
    pipelines use the reference's rule (entities of the caller turns and tool responses the
    agent says, EVA spec 4.3); an s2s agent's turn without reported text falls back to the
    caller side's transcript of its audio (spec 4.2: S2S assistant entries are transcribed)."""
    source = ctx.intended_assistant_turns if role == "assistant" else ctx.intended_user_turns
    turns = {t: text for t, text in source.items() if text.strip()}
    audio_native = variant == "agent_entities" and ctx.is_audio_native
    transcribed: dict[int, str] = {}
    if audio_native and ctx.is_s2s:
        heard = ctx.transcribed_assistant_turns.items()
        transcribed = {t: s for t, s in heard if s.strip() and t not in turns}
    return SpeechFidelityInput(
        role=role,
        turns=dict(sorted({**turns, **transcribed}.items())),
        trace=trace_of(ctx),
        language=ctx.language,
        variant=variant,
        entities_from="context" if audio_native else "turn",
        transcribed_turns=sorted(transcribed),
    )


def write_tool_names(ctx: Any) -> list[str]:
    return [t.id for t in ctx.agent.tools if t.tool_type == "write"]


def behavior_input(ctx: Any) -> BehaviorInput:
    return BehaviorInput(
        trace=trace_of(ctx),
        intended_user_turns={t: s for t, s in ctx.intended_user_turns.items() if s.strip()},
        user_goal=dict(ctx.user_goal),
        user_persona=ctx.user_persona,
        end_reason=str(ctx.end_reason),
        caller_ended=bool(ctx.record.caller_ended),
        write_tools=write_tool_names(ctx),
        language=ctx.language,
        pipeline=ctx.pipeline,
    )


def speech_task(ctx: Any, metric: str, role: Role, variant: Variant) -> JudgeTask | None:
    """The judge task of a speech-fidelity metric, or None when the attempt has no audio."""
    audio = audio_input(ctx, role)
    if audio is None:
        return None
    return JudgeTask(metric=metric, inputs=speech_input(ctx, role, variant), audio=audio)
