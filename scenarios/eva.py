"""Pydantic models of the raw EVA record format (EVA spec sections 1.2-1.4).

These models validate a dataset record exactly as it is stored on disk, placeholders
unresolved. They exist to turn a malformed file into an error that names the field;
resolution into a runnable :class:`scenarios.models.Scenario` happens in
``scenarios.loader``. Fields the runtime never reads are kept optional so that records
written by other tools (or our own pack) load as long as the essentials are there.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# The date part of current_date_time becomes the DB's _current_date, so it must lead.
DATE_TIME_PATTERN = r"^\d{4}-\d{2}-\d{2}( .*)?$"


class EvaCompanion(BaseModel):
    model_config = ConfigDict(extra="allow")
    first_name: str = Field(description="Companion first name (native script or romanized)")


class EvaIdentity(BaseModel):
    """Identity values of one language used to resolve placeholders (spec 1.5)."""

    model_config = ConfigDict(extra="allow")
    first_name: str = Field(description="First name for <FIRST_NAME> / <FIRST_NAME_ROMANIZED>")
    last_name: str = Field(description="Last name for <LAST_NAME> / <LAST_NAME_ROMANIZED>")
    phone: str | None = Field(default=None, description="Phone for <PHONE> (airline only)")
    companion: EvaCompanion | None = Field(default=None, description="Travel companion, if any")


class EvaDecisionTree(BaseModel):
    """The caller's decision tree (spec 1.3); stray keys in the data are kept, not rejected."""

    model_config = ConfigDict(extra="allow")
    must_have_criteria: list[str] = Field(default_factory=list, description="Non-negotiables")
    nice_to_have_criteria: list[str] = Field(default_factory=list, description="Optional wishes")
    negotiation_behavior: list[str] = Field(default_factory=list, description="Ordered steps")
    resolution_condition: str = Field(default="", description="When the goal is met")
    failure_condition: str = Field(default="", description="When to give up")
    escalation_behavior: str = Field(default="", description="Transfer/supervisor policy")
    edge_cases: list[str] = Field(default_factory=list, description="Special situations")


class EvaUserGoal(BaseModel):
    model_config = ConfigDict(extra="allow")
    high_level_user_goal: str = Field(description="Second-person summary of what the caller wants")
    decision_tree: EvaDecisionTree = Field(description="How the caller negotiates")
    information_required: dict[str, Any] = Field(
        default_factory=dict, description="Facts the caller may disclose when asked"
    )


class EvaUserConfig(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str = Field(description="Caller name, usually '<FIRST_NAME> <LAST_NAME>'")
    gender: str | None = Field(default=None, description="'woman' or 'man'")
    user_persona_id: int | None = Field(default=None, description="1 = female, 2 = male voice")
    user_persona: str = Field(default="", description="Persona text for the simulator")


class UserUtteranceEvent(BaseModel):
    event_type: Literal["user_utterance"]
    utterance: str = Field(description="What the caller said")


class AgentUtteranceEvent(BaseModel):
    event_type: Literal["agent_utterance"]
    utterance: str = Field(description="What the agent said")


class ToolCallEvent(BaseModel):
    event_type: Literal["tool_call"]
    tool_name: str = Field(description="Tool id as in the agent YAML")
    params: dict[str, Any] = Field(default_factory=dict, description="Call parameters")


class ToolResponseEvent(BaseModel):
    event_type: Literal["tool_response"]
    tool_name: str = Field(description="Tool id as in the agent YAML")
    status: str = Field(default="", description="'success' or 'error' (copy of response.status)")
    response: dict[str, Any] = Field(description="Response as recorded in the golden trace")


TraceEvent = Annotated[
    UserUtteranceEvent | AgentUtteranceEvent | ToolCallEvent | ToolResponseEvent,
    Field(discriminator="event_type"),
]


class EvaExpectedTrace(BaseModel):
    """A golden conversation; its tool calls replay to the expected DB (spec 1.4)."""

    model_config = ConfigDict(extra="allow")
    trace: list[TraceEvent] = Field(default_factory=list, description="Ordered trace events")
    conversation_ended: bool | None = Field(default=None, description="The call was ended")
    end_reason: str | None = Field(default=None, description="goodbye / transfer / user_ended_call")
    total_events: int | None = Field(default=None, description="len(trace) as recorded")
    total_turns: int | None = Field(default=None, description="Number of turns as recorded")


class EvaGroundTruth(BaseModel):
    model_config = ConfigDict(extra="allow")
    expected_scenario_db: dict[str, Any] = Field(description="Expected final DB (unresolved)")
    expected_trace: EvaExpectedTrace | None = Field(default=None, description="Golden trace")


class EvaRecord(BaseModel):
    """One dataset record as stored in ``data/<domain>_dataset.json`` (spec 1.2)."""

    model_config = ConfigDict(extra="ignore")
    id: str = Field(min_length=1, description="Record id, e.g. '1.1.2', '17', '3.2'")
    current_date_time: str = Field(
        pattern=DATE_TIME_PATTERN, description="Simulated now, e.g. '2026-03-17 10:45 CST'"
    )
    user_goal: EvaUserGoal
    user_config: EvaUserConfig
    scenario_context: dict[str, Any] = Field(description="Premise etc.; required, never read")
    ground_truth: EvaGroundTruth
    starting_utterances: dict[str, str] = Field(description="Opening line per language")
    culture_overrides: dict[str, EvaIdentity] = Field(description="Native identity per language")
    romanized_culture_overrides: dict[str, EvaIdentity] = Field(
        default_factory=dict, description="ASCII identity per language (falls back to native)"
    )
    expected_flow: str | None = Field(default=None, description="Airline: expected agent flow")
    seed_data: dict[str, Any] | None = Field(default=None, description="DB generation seed")
    subflow_in_depth: dict[str, Any] | None = Field(default=None, description="Always {}")
    agent_override: dict[str, Any] | None = Field(default=None, description="Not in shipped data")
    category: str | None = Field(default=None, description="Optional category label")
