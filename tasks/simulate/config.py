"""``SimulationConfig``: everything that defines one simulated conversation."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from perturbations.audio import VoiceSpec
from tasks.simulate.clocks.clock import VirtualTiming
from tasks.voice.stt import SttSpec


class SimulationConfig(BaseModel):
    """One attempt's settings (pure data; stored next to the results so a run can be rebuilt)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    run_id: str = Field(default="adhoc", description="Run the attempt belongs to")
    system: str = Field(default="reference", description="Label of the system under test")
    agent: str = Field(default="reference", description="Agent registry name (AGENTS)")
    agent_params: dict[str, Any] = Field(default_factory=dict, description="Agent parameters")
    caller: str = Field(default="scripted", description="Caller registry name (CALLERS)")
    caller_params: dict[str, Any] = Field(default_factory=dict, description="Caller parameters")
    mode: Literal["text", "audio"] = Field(default="text", description="Text or real audio")
    clock: Literal["virtual", "realtime"] = Field(
        default="virtual", description="Audio mode clock: virtual (in-process) or realtime"
    )
    condition: Any = Field(
        default="clean",
        description="Perturbation condition: a perturbations ConditionSpec or its registry name",
    )
    trial: int = Field(default=0, ge=0)
    attempt: int = Field(default=1, ge=1)
    seed: int = Field(default=0, ge=0, description="Seed of every random choice of the attempt")
    agent_stt: SttSpec = Field(
        default_factory=lambda: SttSpec(grammar="codes"),
        description="Reference agent's STT (code grammar for spelled answers)",
    )
    agent_voice: VoiceSpec = Field(
        default_factory=lambda: VoiceSpec(voice="en-us+klatt4"),
        description="Reference agent's voice",
    )
    caller_stt: SttSpec = Field(default_factory=SttSpec, description="What the caller hears with")
    caller_voice: VoiceSpec | None = Field(
        default=None, description="Caller voice; default chosen from the persona's gender"
    )
    caller_tts: str = Field(
        default="espeak",
        description="TTS engine the caller speaks with (tasks.voice.tts.TTS_ENGINES)",
    )
    max_duration_s: float = Field(default=600.0, gt=0, description="Call-time limit")
    agent_timeout_s: float = Field(
        default=15.0, gt=0, description="No agent audio this long after a caller turn ends the call"
    )
    max_turns: int = Field(default=80, ge=1, description="Caller turns before the call is cut")
    audio_dir: Path | None = Field(default=None, description="Where the attempt's WAVs go")
    noise_dir: Path | None = Field(
        default=None, description="Directory of noise WAVs for noise conditions"
    )
    sync_timeout_s: float = Field(
        default=30.0, gt=0, description="Virtual clock: wall seconds an agent may take on a tick"
    )
    virtual_timing: VirtualTiming = Field(
        default="cpu",
        description=(
            "Virtual clock: time the agent's compute by its thread CPU time (wall time for"
            " I/O such as model calls), independent of machine load; 'wall' times it by the"
            " wall clock; 'none' charges no call time for the agent's compute, so the whole"
            " timeline repeats exactly (reproducibility checks). Agents that do not meter"
            " their work are wall-timed under 'cpu'."
        ),
    )
    cache_dir: Path = Field(
        default=Path(".cache/evaflow"), description="Language models and other caches"
    )

    @property
    def condition_name(self) -> str:
        if isinstance(self.condition, str):
            return self.condition
        return str(getattr(self.condition, "name", "custom"))

    def attempt_id(self, scenario_key: str) -> str:
        return "/".join(
            [
                self.run_id,
                self.system,
                scenario_key,
                self.condition_name,
                f"trial_{self.trial}",
                f"attempt_{self.attempt}",
            ]
        )
