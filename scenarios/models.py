"""Scenario models: the resolved, ready-to-run form every other package consumes.

The raw EVA record models and the loader live in ``scenarios.eva`` / ``scenarios.loader``;
everything downstream (simulation, metrics, store) only sees :class:`Scenario`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class ToolParam(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    type: str = "str"
    description: str = ""
    enum: list[Any] | None = None
    items: dict[str, Any] | None = None


class ToolSpec(BaseModel):
    """One tool as declared in an agent config (spec 2.1)."""

    model_config = ConfigDict(extra="allow")
    id: str
    name: str = ""
    description: str = ""
    tool_type: Literal["auth", "read", "write", "system"] = "read"
    domain: str | None = None
    required_parameters: list[ToolParam] = Field(default_factory=list)
    optional_parameters: list[ToolParam] = Field(default_factory=list)


class AgentConfig(BaseModel):
    """Per-domain agent definition: role, policy instructions and tool schemas."""

    model_config = ConfigDict(extra="allow")
    id: str
    name: str = ""
    description: str = ""
    role: str = ""
    instructions: str = ""
    tool_module_path: str | None = None
    tools: list[ToolSpec] = Field(default_factory=list)

    def tool(self, name: str) -> ToolSpec | None:
        return next((t for t in self.tools if t.id == name), None)

    @property
    def tool_names(self) -> list[str]:
        return [t.id for t in self.tools]


class Scenario(BaseModel):
    """A scenario record with every placeholder resolved for one language."""

    id: str = Field(
        description="Record id, e.g. '1.1.2' (airline), '17' (itsm), '3.2' (medical_hr)"
    )
    domain: Literal["airline", "itsm", "medical_hr"]
    source: str = Field(default="builtin", description="'builtin' or the EVA root it came from")
    language: str = "en"
    current_date_time: str = Field(description="Simulated 'now', e.g. '2026-03-17 10:45 CST'")
    user_goal: dict[str, Any] = Field(
        description="Resolved user_goal incl. decision_tree, information_required, starting_utterance"
    )
    user_config: dict[str, Any] = Field(description="Resolved name, gender, persona")
    scenario_context: dict[str, Any] = Field(default_factory=dict)
    initial_db: dict[str, Any] = Field(description="Resolved initial DB (aliases, _current_date)")
    expected_db: dict[str, Any] = Field(description="Resolved expected final DB")
    expected_trace: list[dict[str, Any]] = Field(
        default_factory=list, description="Resolved golden trace events (spec 1.4)"
    )
    expected_end_reason: str | None = None
    agent: AgentConfig

    @property
    def key(self) -> str:
        return f"{self.domain}/{self.id}"
