"""Agent configs of the pack: our role and policy text, the engines' tool signatures.

Tool ids, parameter names, required/optional split, types and enums are read from the
engines' own parameter models, so the config cannot drift from what the engine accepts;
descriptions and policy are ours (``<domain>_policy`` modules).
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evaflow_core.registry import Registry
from scenarios.engines import domain_tools
from scenarios.engines.airline import params as airline_params

ToolType = Literal["auth", "read", "write", "system"]

# The airline engine does not publish its parameter models; this is its tool table.
AIRLINE_PARAM_MODELS: dict[str, type[BaseModel]] = {
    "get_reservation": airline_params.GetReservationParams,
    "get_flight_status": airline_params.GetFlightStatusParams,
    "get_disruption_info": airline_params.GetDisruptionInfoParams,
    "search_rebooking_options": airline_params.SearchRebookingParams,
    "rebook_flight": airline_params.RebookFlightParams,
    "add_to_standby": airline_params.AddToStandbyParams,
    "assign_seat": airline_params.AssignSeatParams,
    "add_baggage_allowance": airline_params.AddBaggageParams,
    "add_meal_request": airline_params.AddMealRequestParams,
    "issue_travel_credit": airline_params.IssueTravelCreditParams,
    "issue_hotel_voucher": airline_params.IssueHotelVoucherParams,
    "issue_meal_voucher": airline_params.IssueMealVoucherParams,
    "cancel_reservation": airline_params.CancelReservationParams,
    "process_refund": airline_params.ProcessRefundParams,
    "transfer_to_agent": airline_params.TransferToAgentParams,
}
# Allowed values the engines check in a validator rather than in the type.
VALIDATED_ENUMS: dict[tuple[str, str], list[Any]] = {
    ("submit_license_extension", "extension_days"): [30, 60, 90],
    ("submit_license_request", "duration_days"): [30, 60, 90],
}
SCALAR_TYPES = {str: "string", int: "integer", float: "float", bool: "boolean"}


class ToolText(BaseModel):
    """Our words for one tool: what it does, its kind, and per-parameter descriptions."""

    model_config = ConfigDict(frozen=True)
    tool_type: ToolType = Field(description="auth / read / write / system")
    description: str = Field(description="What the tool does and when to use it")
    params: dict[str, str] = Field(default_factory=dict, description="Parameter descriptions")


class AgentText(BaseModel):
    """The written parts of one domain's agent config."""

    model_config = ConfigDict(frozen=True)
    domain: str
    name: str
    description: str
    role: str
    instructions: str
    tool_domain: str = Field(description="The 'domain' label put on every tool")
    common_params: dict[str, str] = Field(
        default_factory=dict, description="Descriptions of parameters shared by many tools"
    )
    tools: dict[str, ToolText] = Field(description="Tool id -> our text, in config order")


# A domain module of scenarios.generate (or an ``evaflow.domains`` plug-in) adds its texts.
AGENT_TEXTS: Registry[AgentText] = Registry(
    "agent config", package="scenarios.generate", entry_point_group="evaflow.domains"
)


def param_models(domain: str) -> dict[str, type[BaseModel]]:
    if domain == "airline":
        return AIRLINE_PARAM_MODELS
    module = __import__(f"scenarios.engines.{domain}", fromlist=["PARAM_MODELS"])
    return dict(module.PARAM_MODELS)


def _strip(annotation: Any) -> Any:
    """The annotation without Optional/Annotated wrappers."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(args) != 1:
                raise TypeError(f"cannot describe union {annotation!r}")
            annotation = args[0]
        else:
            return annotation


def param_schema(tool: str, name: str, annotation: Any) -> dict[str, Any]:
    """``{type, enum?, items?}`` of one engine parameter."""
    base = _strip(annotation)
    origin = typing.get_origin(base)
    if origin is Literal:
        values = list(typing.get_args(base))
        return {"type": SCALAR_TYPES[type(values[0])], "enum": values}
    if origin is list:
        item = _strip(typing.get_args(base)[0])
        return {"type": "array", "items": {"type": SCALAR_TYPES[item]}}
    schema: dict[str, Any] = {"type": SCALAR_TYPES[base]}
    if (tool, name) in VALIDATED_ENUMS:
        schema["enum"] = list(VALIDATED_ENUMS[(tool, name)])
    return schema


def tool_entry(
    tool: str, model: type[BaseModel], text: ToolText, agent: AgentText
) -> dict[str, Any]:
    required: list[dict[str, Any]] = []
    optional: list[dict[str, Any]] = []
    for name, info in model.model_fields.items():
        described = text.params.get(name, agent.common_params.get(name))
        if described is None:
            raise KeyError(f"{tool}: no description written for parameter {name!r}")
        schema = param_schema(tool, name, info.annotation)
        entry = {"name": name, "type": schema.pop("type"), "description": described}
        entry.update(schema)
        (required if info.is_required() else optional).append(entry)
    unknown = set(text.params) - set(model.model_fields)
    if unknown:
        raise KeyError(f"{tool}: descriptions for unknown parameters {sorted(unknown)}")
    out: dict[str, Any] = {
        "id": tool,
        "name": tool,
        "description": text.description,
        "tool_type": text.tool_type,
        "domain": agent.tool_domain,
        "required_parameters": required,
    }
    if optional:
        out["optional_parameters"] = optional
    return out


def agent_config(text: AgentText) -> dict[str, Any]:
    """The ``<domain>_agent.yaml`` content; every engine tool must have our text."""
    models = param_models(text.domain)
    engine_tools = set(domain_tools(text.domain))
    missing = sorted(engine_tools - set(text.tools))
    extra = sorted(set(text.tools) - engine_tools)
    if missing or extra:
        raise KeyError(f"{text.domain} tool texts: missing {missing}, not in the engine {extra}")
    return {
        "id": f"agent_{text.domain}",
        "name": text.name,
        "description": text.description,
        "role": text.role,
        "instructions": text.instructions,
        "tool_module_path": f"scenarios.engines.{text.domain}",
        "tools": [
            tool_entry(tool, models[tool], tool_text, text)
            for tool, tool_text in text.tools.items()
        ],
    }


def tool_text(tool_type: ToolType, description: str, **params: str) -> ToolText:
    """Shorthand used by the policy modules; unnamed parameters use the common texts."""
    return ToolText(tool_type=tool_type, description=description, params=params)
