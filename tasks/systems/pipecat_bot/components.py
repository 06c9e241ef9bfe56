"""What a bot's system is made of: components by role, as ``--system-json`` gives them.

Shared by the cascade pipeline (:mod:`.pipeline`) and the speech-to-speech services
(:mod:`.realtime`), which is why it lives apart from both.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

ROLES = ("stt", "llm", "tts", "realtime")


class Component(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    provider: str
    model: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)


class SystemParams(BaseModel):
    """What ``--system-json`` holds (extra keys of the SystemSpec params are ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    architecture: str = "cascade"
    components: dict[str, Component]
    cache_dir: str | None = Field(default=None, description="Offline recogniser's LM cache")

    def roles(self) -> list[str]:
        return sorted(self.components)


class ProviderError(ValueError):
    """A component names a provider the bot does not know (or lacks its key)."""
