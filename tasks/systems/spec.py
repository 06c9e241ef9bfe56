"""A system under test as the configuration names it, and the configuration's error type.

Apart from :mod:`tasks.config` so that the systems catalogue, which the configuration
reads to expand catalogue names, can build specs without importing the configuration.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class ConfigError(ValueError):
    """A configuration problem; the message names the file and the field."""


class SystemSpec(BaseModel):
    """An agent configuration under test; its name labels every stored row."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(description="Label of the system in tables and figures")
    agent: str = Field(default="reference", description="Agent registry name, or a ws:// URL")
    params: dict[str, Any] = Field(
        default_factory=dict, description="Agent parameters (STT/TTS...)"
    )

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        if not value or "/" in value or value.startswith("."):
            raise ValueError(f"system name {value!r} must be non-empty and contain no '/'")
        return value
