"""Agent-YAML tools as OpenAI function-calling schemas (EVA spec 2.1)."""

from __future__ import annotations

import re
from typing import Any

from scenarios.models import AgentConfig, ToolParam, ToolSpec

# YAML short type names -> JSON-schema types; names already in JSON-schema form pass through.
YAML_TO_JSON_TYPE = {
    "float": "number",
    "int": "integer",
    "list": "array",
    "dict": "object",
    "str": "string",
    "bool": "boolean",
}

_NOT_NAME_CHAR = re.compile(r"[^a-z0-9_]")


def function_name(tool_name: str) -> str:
    """Lower-case, spaces to underscores, other non-alphanumerics dropped, no leading digit."""
    name = _NOT_NAME_CHAR.sub("", tool_name.lower().replace(" ", "_"))
    return f"_{name}" if name[:1].isdigit() else name


def json_schema_type(yaml_type: str) -> str:
    return YAML_TO_JSON_TYPE.get(yaml_type, yaml_type)


def parameter_schema(param: ToolParam) -> dict[str, Any]:
    """JSON-schema property of one YAML parameter."""
    schema: dict[str, Any] = {"type": json_schema_type(param.type)}
    if param.description:
        schema["description"] = param.description
    if param.enum is not None:
        schema["enum"] = list(param.enum)
    if schema["type"] == "array":
        items = dict(param.items) if param.items else {"type": "object"}
        if isinstance(items.get("type"), str):
            items["type"] = json_schema_type(items["type"])
        schema["items"] = items
    return schema


def tool_schema(tool: ToolSpec) -> dict[str, Any]:
    """One tool as ``{"type": "function", "function": {name, description, parameters}}``."""
    name = tool.name or tool.id
    params = [*tool.required_parameters, *tool.optional_parameters]
    return {
        "type": "function",
        "function": {
            "name": function_name(name),
            "description": f"{name}: {tool.description}",
            "parameters": {
                "type": "object",
                "properties": {p.name: parameter_schema(p) for p in params},
                "required": [p.name for p in tool.required_parameters],
            },
        },
    }


def openai_tool_schemas(agent: AgentConfig) -> list[dict[str, Any]]:
    """Every tool of ``agent`` in OpenAI function-calling form, in YAML order."""
    return [tool_schema(tool) for tool in agent.tools]


def function_name_map(agent: AgentConfig) -> dict[str, str]:
    """Schema function name -> tool id, to route an LLM's call back to the engine."""
    return {function_name(tool.name or tool.id): tool.id for tool in agent.tools}
