"""The per-attempt record: what a simulated conversation produces and every metric reads.

This is the contract between ``tasks.simulate`` (producer), ``tasks.metrics`` and
``tasks.validate`` (consumers) and ``tasks.store`` (persistence). Times are seconds
from the start of the call (``t=0`` when the caller connects), measured by the harness.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

AttemptStatus = Literal["ok", "invalid", "agent_error", "infra_error"]
EndReason = Literal[
    "goodbye",  # the caller said goodbye and sent end_call
    "transfer",  # the agent transferred the call and the caller hung up
    "max_duration",  # conversation hit the time limit (reference: time_limit_exceeded)
    "inactivity_timeout",  # nobody spoke for too long
    "agent_timeout",  # the agent did not answer a caller turn in time
    "agent_disconnected",  # the agent closed the socket mid-call
    "protocol_error",  # malformed frames / wrong media format from the agent
    "harness_error",  # our own bug or infrastructure failure
    "provider_error",  # a provider the agent depends on failed (it said so: provider_error)
]
Role = Literal["user", "assistant"]


class Segment(BaseModel):
    """One stretch of speech on the wire, found by the harness VAD."""

    model_config = ConfigDict(frozen=True)
    start_s: float = Field(description="Speech start, seconds from call start")
    end_s: float = Field(description="Speech end, seconds from call start")


class TurnRecord(BaseModel):
    """One speaker turn. Turn 0 is the agent greeting; turn n pairs user n with agent reply n."""

    turn_id: int = Field(
        description="0 = greeting; user and assistant of the same exchange share it"
    )
    role: Role
    intended_text: str = Field(description="What the speaker meant to say (its TTS input)")
    heard_text: str = Field(
        default="",
        description="What the other side heard: agent STT for user turns, harness STT of the "
        "agent audio for assistant turns (equal to intended_text in text mode)",
    )
    segments: list[Segment] = Field(default_factory=list, description="Audio segments of the turn")
    interrupted: bool = Field(default=False, description="This turn was cut off by the other side")
    interrupts: bool = Field(
        default=False, description="This turn started while the other side spoke"
    )
    latency_s: float | None = Field(
        default=None,
        description="Assistant turns: first assistant speech start minus last user speech end",
    )

    @property
    def start_s(self) -> float | None:
        return self.segments[0].start_s if self.segments else None

    @property
    def end_s(self) -> float | None:
        return self.segments[-1].end_s if self.segments else None


class ToolCallRecord(BaseModel):
    """One tool call executed by the harness-owned engine for the agent."""

    index: int = Field(description="0-based order of the call within the attempt")
    turn_id: int = Field(description="Turn during which the agent made the call")
    tool_name: str
    params: dict[str, Any] = Field(default_factory=dict)
    response: dict[str, Any] = Field(default_factory=dict)
    t_call_s: float | None = Field(default=None, description="Call time, seconds from call start")
    t_response_s: float | None = Field(default=None, description="Response time")

    @property
    def status(self) -> str:
        return str(self.response.get("status", "unknown"))

    @property
    def error_type(self) -> str | None:
        value = self.response.get("error_type")
        return str(value) if value is not None else None


class TimelineEvent(BaseModel):
    """A timestamped event on the call timeline (speech start/stop, tool call, end_call...)."""

    t_s: float
    source: Literal["caller", "agent", "harness"]
    kind: str = Field(description="e.g. speech_start, speech_end, tool_call, end_call, error")
    data: dict[str, Any] = Field(default_factory=dict)


class EntityRecord(BaseModel):
    """A key entity the caller said and whether the agent heard it right."""

    turn_id: int
    type: str = Field(description="code, employee_id, date, amount, name, phone, ...")
    expected: str
    heard: str | None = None
    correct: bool


class AudioRef(BaseModel):
    """Where one audio track of the attempt lives (a WAV file next to the store)."""

    track: Literal["caller", "caller_clean", "agent", "mixed"]
    path: str
    sample_rate: int
    duration_s: float


class AttemptRecord(BaseModel):
    """Everything one simulated conversation produced."""

    attempt_id: str = Field(description="Stable id: run/system/scenario/condition/trial/attempt")
    run_id: str
    system: str = Field(description="Name of the agent configuration under test")
    scenario_id: str
    domain: str
    condition: str = Field(default="clean", description="Perturbation condition name")
    trial: int = Field(default=0, ge=0)
    attempt: int = Field(default=1, ge=1)
    mode: Literal["text", "audio"] = "text"
    clock: Literal["none", "virtual", "realtime"] = "none"
    status: AttemptStatus = "ok"
    end_reason: EndReason = "goodbye"
    error: str | None = Field(default=None, description="Why the attempt failed, if it did")
    caller_ended: bool = Field(default=False, description="The caller hung up with end_call")
    duration_s: float = Field(default=0.0, description="Conversation length in call time")
    wall_s: float = Field(default=0.0, description="Wall-clock seconds spent simulating")
    turns: list[TurnRecord] = Field(default_factory=list)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    events: list[TimelineEvent] = Field(default_factory=list)
    entities: list[EntityRecord] = Field(default_factory=list)
    audio: list[AudioRef] = Field(default_factory=list)
    initial_db: dict[str, Any] = Field(default_factory=dict)
    final_db: dict[str, Any] = Field(default_factory=dict)
    initial_db_hash: str = ""
    final_db_hash: str = ""
    expected_db_hash: str = ""
    stage_seconds: dict[str, float] = Field(
        default_factory=dict, description="Wall time per stage: tts, stt, perturb, vad, agent"
    )

    def turns_of(self, role: Role) -> list[TurnRecord]:
        return [t for t in self.turns if t.role == role]


class MetricScore(BaseModel):
    """One metric's result for one attempt (spec 4.1)."""

    name: str
    score: float | None = None
    normalized_score: float | None = None
    passed: bool | None = Field(default=None, description="normalized_score >= threshold")
    threshold: float | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    skipped: bool = False
    version: str = "v0.1"
    judge: str | None = Field(default=None, description="Judge back-end name, for judged metrics")
    prompt_hash: str | None = None
    sub_metrics: dict[str, MetricScore] = Field(default_factory=dict)

    @property
    def value(self) -> float | None:
        """Normalized score, else raw score (spec 5.1)."""
        return self.normalized_score if self.normalized_score is not None else self.score
