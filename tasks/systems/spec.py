"""A system under test as the configuration names it, the configuration's error type, and
the one home of the mapping from a system to the pipeline it is scored as.

Apart from :mod:`tasks.config` so that the systems catalogue, which the configuration
reads to expand catalogue names, can build specs without importing the configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Architecture = Literal["cascade", "hybrid", "s2s"]
PipelineType = Literal["cascade", "audio_llm", "s2s"]
ARCHITECTURES: tuple[str, ...] = ("cascade", "hybrid", "s2s")
# EVA spec 0 / 4.2 ``PipelineType``: the catalogue's hybrid (an audio-in LLM answering in
# text, plus a TTS; Ultravox too) is what the reference calls ``audio_llm``.
PIPELINES: dict[str, PipelineType] = {"cascade": "cascade", "hybrid": "audio_llm", "s2s": "s2s"}
# Systems named by their agent alone (``--agent reference``): what that agent is. Every one
# of our in-process agents hears through a recogniser and speaks through a TTS (``text`` and
# ``echo`` are the same shapes in text mode).
AGENT_ARCHITECTURES: dict[str, str] = {
    "reference": "cascade",
    "text": "cascade",
    "llm": "cascade",
    "never_yield": "cascade",
    "echo": "cascade",
}
DEFAULT_PIPELINE: PipelineType = "cascade"


class ConfigError(ValueError):
    """A configuration problem; the message names the file and the field."""


class SystemSpec(BaseModel):
    """An agent configuration under test; its name labels every stored row.

    ``params.architecture`` (cascade, hybrid or s2s) says how the system is scored; the
    catalogue sets it for Pipecat systems, and a ``ws://`` agent's user may state it
    (unset: scored as a cascade).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(description="Label of the system in tables and figures")
    agent: str = Field(default="reference", description="Agent registry name, or a ws:// URL")
    params: dict[str, Any] = Field(
        default_factory=dict, description="Agent parameters (STT/TTS...; architecture)"
    )

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        if not value or "/" in value or value.startswith("."):
            raise ValueError(f"system name {value!r} must be non-empty and contain no '/'")
        return value

    @model_validator(mode="after")
    def _known_architecture(self) -> SystemSpec:
        stated = self.params.get("architecture")
        if stated is None:
            return self
        if stated not in ARCHITECTURES:
            raise ValueError(
                f"system {self.name!r}: unknown architecture {stated!r}; valid: "
                "cascade, hybrid (audio-in LLM + TTS, the reference's audio_llm), s2s"
            )
        known = AGENT_ARCHITECTURES.get(self.agent)
        if known is not None and stated != known:
            raise ValueError(
                f"system {self.name!r}: agent {self.agent!r} is a {known}, not {stated!r}"
            )
        return self


def architecture_of(spec: SystemSpec | Mapping[str, Any]) -> str | None:
    """cascade / hybrid / s2s of a system, or None when nobody knows (a ws:// agent that
    does not state it)."""
    data = spec.model_dump() if isinstance(spec, SystemSpec) else dict(spec)
    params = data.get("params") or {}
    arch = params.get("architecture") if isinstance(params, Mapping) else None
    if isinstance(arch, str) and arch in ARCHITECTURES:
        return arch
    return AGENT_ARCHITECTURES.get(str(data.get("agent") or ""))


def pipeline_of(spec: SystemSpec | Mapping[str, Any]) -> PipelineType:
    """The reference's pipeline type an attempt of this system is scored as (EVA spec 4.1:
    each metric runs only on the pipelines it supports; 4.2: the audio-native branches).
    A system of unknown architecture is scored as a cascade, as the reference does for a
    configuration without ``s2s`` / ``audio_llm`` keys."""
    arch = architecture_of(spec)
    return DEFAULT_PIPELINE if arch is None else PIPELINES[arch]
