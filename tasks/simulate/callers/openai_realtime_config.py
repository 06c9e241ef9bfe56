"""What the ``openai_realtime`` caller is configured with and the rules it applies on its
own: its params (defaults from spec 7.3), :class:`TurnGate` (when a response may be asked
for), the ``end_call`` tool in the Realtime API's form and the line as the model hears it.
Pure: no SDK, no socket (the session is :mod:`tasks.simulate.callers.openai_realtime`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from perturbations.audio import Clip
from tasks.simulate.config import SimulationConfig
from tasks.simulate.llm_prompts import end_call_tool
from tasks.voice.telephony import ULAW_SILENCE, WIRE_RATE, ulaw_encode

if TYPE_CHECKING:
    from tasks.config import BenchmarkConfig

ENGINE = "openai_realtime caller"


class RealtimeCallerParams(BaseModel):
    """``caller_params`` of the ``openai_realtime`` caller (defaults: spec 7.3)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    model: str = "gpt-realtime-1.5"
    female_voice: str = Field(default="marin", description="user_persona_id 1 / woman")
    male_voice: str = Field(default="cedar", description="user_persona_id 2 / man")
    base_url: str | None = Field(
        default=None,
        description="https://HOST/v1 or a ws(s):// realtime base; default $OPENAI_BASE_URL",
    )
    api_key_env: str = Field(default="OPENAI_API_KEY", description="Variable holding the key")
    transcription_model: str = "whisper-1"
    vad_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    prefix_padding_ms: int = Field(default=300, ge=0)
    silence_duration_ms: int = Field(default=500, ge=0)
    idle_timeout_ms: int | None = Field(default=15000, ge=5000)
    respond_after_silence_s: float = Field(
        default=2.0, ge=0.0, description="Agent audio quiet this long before a response"
    )
    response_timeout_s: float = Field(default=30.0, gt=0, description="A response must end")
    connect_timeout_s: float = Field(default=15.0, gt=0)


class TurnGate:
    """When a caller response may be requested: an agent transcription has arrived since
    the last request, the agent's audio has been silent ``silence_s`` and no response is
    active (spec 7.3)."""

    def __init__(self, silence_s: float) -> None:
        self.silence_s = silence_s
        self.transcribed = False
        self.agent_audio_at = 0.0  # call time the agent's audio last played
        self.active = False

    def heard(self, t: float, agent_audio: bool) -> None:
        if agent_audio:
            self.agent_audio_at = t

    def due(self, t: float) -> bool:
        quiet = t - self.agent_audio_at >= self.silence_s - 1e-9
        return self.transcribed and not self.active and quiet

    def requested(self) -> None:
        self.active, self.transcribed = True, False


def realtime_tools() -> list[dict[str, Any]]:
    """``end_call`` in the Realtime API's flat function-tool form."""
    return [{"type": "function", **end_call_tool()["function"]}]


def agent_ulaw(agent_pcm: np.ndarray, agent_audio: bool) -> bytes:
    """A tick's line as the caller's model hears it: mu-law, or mu-law silence if quiet."""
    if not agent_audio:
        return bytes([ULAW_SILENCE]) * agent_pcm.size
    return ulaw_encode(Clip(agent_pcm, WIRE_RATE).to_int16()).tobytes()


def realtime_params(config: SimulationConfig | BenchmarkConfig) -> RealtimeCallerParams:
    raw = config.caller_params if isinstance(config, SimulationConfig) else config.caller.params
    # tts / voice are the harness's caller-voice settings; this caller has its own voice.
    rest = {k: v for k, v in dict(raw or {}).items() if k not in ("tts", "voice")}
    try:
        return RealtimeCallerParams.model_validate(rest)
    except ValidationError as exc:  # fields named, input values left out (keys may be in them)
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
            for err in exc.errors(include_input=False, include_url=False)
        )
        raise ValueError(f"{ENGINE} params: {problems}") from None


def accent_problems(config: BenchmarkConfig) -> list[str]:
    from tasks.config_checks import accent_conditions

    found = accent_conditions(config)
    if not found:
        return []
    return [f"caller 'openai_realtime' cannot take an accent (condition {', '.join(found)})"]
