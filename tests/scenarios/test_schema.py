"""Agent-YAML tools to OpenAI function schemas (spec 2.1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarios.loader import load_agent_config
from scenarios.models import AgentConfig, ToolParam, ToolSpec
from scenarios.schema import (
    function_name,
    function_name_map,
    json_schema_type,
    openai_tool_schemas,
    parameter_schema,
    tool_schema,
)

JSON_SCHEMA_TYPES = {"string", "number", "integer", "boolean", "array", "object"}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("get_reservation", "get_reservation"),
        ("Get Reservation", "get_reservation"),
        ("check-room (v2)!", "checkroom_v2"),
        ("3D Print Job", "_3d_print_job"),
    ],
)
def test_function_name_normalisation(raw: str, expected: str) -> None:
    assert function_name(raw) == expected


@pytest.mark.parametrize(
    ("yaml_type", "json_type"),
    [
        ("float", "number"),
        ("int", "integer"),
        ("list", "array"),
        ("dict", "object"),
        ("str", "string"),
        ("bool", "boolean"),
        ("string", "string"),
        ("integer", "integer"),
    ],
)
def test_type_mapping(yaml_type: str, json_type: str) -> None:
    assert json_schema_type(yaml_type) == json_type


def test_array_without_items_gets_object_items() -> None:
    schema = parameter_schema(ToolParam(name="ids", type="list", description="IDs"))
    assert schema == {"type": "array", "description": "IDs", "items": {"type": "object"}}


def test_array_items_types_are_mapped_too() -> None:
    schema = parameter_schema(ToolParam(name="ids", type="array", items={"type": "str"}))
    assert schema["items"] == {"type": "string"}


def test_tool_schema_shape() -> None:
    tool = ToolSpec(
        id="rebook",
        name="Rebook Flight",
        description="Move a booking",
        required_parameters=[ToolParam(name="fare", type="float", enum=[1.0, 2.0])],
        optional_parameters=[ToolParam(name="waive", type="bool")],
    )
    schema = tool_schema(tool)
    assert schema["type"] == "function"
    function = schema["function"]
    assert function["name"] == "rebook_flight"
    assert function["description"] == "Rebook Flight: Move a booking"
    assert function["parameters"] == {
        "type": "object",
        "properties": {
            "fare": {"type": "number", "enum": [1.0, 2.0]},
            "waive": {"type": "boolean"},
        },
        "required": ["fare"],
    }


@pytest.mark.parametrize("domain", ["airline", "itsm", "medical_hr"])
def test_every_eva_tool_converts(eva_root: Path, domain: str) -> None:
    agent = load_agent_config(eva_root / "configs" / "agents" / f"{domain}_agent.yaml")
    schemas = openai_tool_schemas(agent)
    assert len(schemas) == len(agent.tools)
    for tool, schema in zip(agent.tools, schemas, strict=True):
        params = schema["function"]["parameters"]
        assert set(params["required"]) == {p.name for p in tool.required_parameters}
        assert set(params["required"]) <= set(params["properties"])
        for prop in params["properties"].values():
            assert prop["type"] in JSON_SCHEMA_TYPES
            if prop["type"] == "array":
                assert "items" in prop
    names = function_name_map(agent)
    assert sorted(names.values()) == sorted(agent.tool_names)


def test_empty_agent_has_no_schemas() -> None:
    assert openai_tool_schemas(AgentConfig(id="agent_none")) == []
