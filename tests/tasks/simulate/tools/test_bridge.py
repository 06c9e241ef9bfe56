"""The tool bridge: HTTP JSON + MCP endpoints over one trial's engine, scoped by a token."""

from __future__ import annotations

import asyncio
import copy
import itertools
from pathlib import Path
from typing import Any

import httpx
import pytest

from scenarios.dbhash import db_hash
from scenarios.executor import ToolEngine
from scenarios.loader import load_eva_scenarios
from scenarios.models import Scenario
from scenarios.schema import function_name, openai_tool_schemas
from tasks.simulate.tools.bridge import BridgeConfig, BridgeEndpoint, serve_tool_bridge
from tasks.simulate.tools.bridge_client import (
    BridgeParametersError,
    HttpToolGateway,
    fetch_scenario,
)
from tasks.simulate.tools.gateway import EngineGateway


@pytest.fixture(scope="module")
def scenario(eva_root: Path) -> Scenario:
    return load_eva_scenarios(eva_root, record_ids=["airline/1.1.2"])[0]


def first_call(scenario: Scenario) -> tuple[str, dict[str, Any]]:
    event = next(e for e in scenario.expected_trace if e.get("event_type") == "tool_call")
    return str(event["tool_name"]), dict(event["params"])


def gateway_for(scenario: Scenario) -> EngineGateway:
    ticks = itertools.count()
    engine = ToolEngine(scenario.domain, scenario.initial_db, scenario.agent.tool_names)
    return EngineGateway(engine, now=lambda: float(next(ticks)))


def auth(endpoint: BridgeEndpoint, token: str | None = None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token or endpoint.token}"}


def test_http_lists_schemas_and_calls_the_engine(scenario: Scenario) -> None:
    gateway = gateway_for(scenario)
    name, params = first_call(scenario)
    expected = ToolEngine(scenario.domain, scenario.initial_db).execute(name, copy.deepcopy(params))

    async def run() -> tuple[Any, Any, Any]:
        async with (
            serve_tool_bridge(gateway, scenario.agent, BridgeConfig(mcp=False)) as bridge,
            httpx.AsyncClient(headers=auth(bridge)) as client,
        ):
            assert bridge.base_url.startswith("http://127.0.0.1:")
            listed = (await client.get(bridge.tools_url)).json()
            by_id = (await client.post(f"{bridge.tools_url}/{name}", json=params)).json()
            by_fn = await client.post(f"{bridge.tools_url}/{function_name(name)}", json=params)
            return listed, by_id, by_fn.json()

    listed, by_id, by_fn = asyncio.run(run())
    assert listed == openai_tool_schemas(scenario.agent)
    assert by_id == expected
    assert by_fn == expected
    assert [c.tool_name for c in gateway.calls] == [name, name]
    assert gateway.calls[0].params == params
    assert gateway.calls[0].response == expected
    # Times come from the harness clock the gateway was given, never from the agent.
    assert [(c.t_call_s, c.t_response_s) for c in gateway.calls] == [(0.0, 1.0), (2.0, 3.0)]


def test_requests_without_or_with_another_trials_token_are_refused(scenario: Scenario) -> None:
    mine, theirs = gateway_for(scenario), gateway_for(scenario)
    write = next(e for e in scenario.expected_trace if e.get("tool_name") == "rebook_flight")

    async def run() -> list[int]:
        config = BridgeConfig(mcp=False)
        async with (
            serve_tool_bridge(mine, scenario.agent, config) as bridge,
            serve_tool_bridge(theirs, scenario.agent, config) as other,
            httpx.AsyncClient() as client,
        ):
            url = f"{other.tools_url}/rebook_flight"
            body = write["params"]
            return [
                (await client.get(other.tools_url)).status_code,
                (await client.post(url, json=body)).status_code,
                (await client.post(url, json=body, headers=auth(bridge))).status_code,
                (await client.get(f"{other.base_url}/scenario", headers=auth(bridge))).status_code,
                (
                    await client.post(url, json=body, headers={"Authorization": "Basic x"})
                ).status_code,
            ]

    assert asyncio.run(run()) == [401, 401, 403, 403, 401]
    assert theirs.calls == [] and mine.calls == []
    assert db_hash(theirs.engine.db) == db_hash(scenario.initial_db)


def test_bad_bodies_are_refused_and_unknown_tools_are_engine_errors(scenario: Scenario) -> None:
    gateway = gateway_for(scenario)

    async def run() -> list[httpx.Response]:
        async with (
            serve_tool_bridge(gateway, scenario.agent, BridgeConfig(mcp=False)) as bridge,
            httpx.AsyncClient(headers=auth(bridge)) as client,
        ):
            url = bridge.tools_url
            return [
                await client.post(f"{url}/get_reservation", content=b"{not json"),
                await client.post(f"{url}/get_reservation", json=[1, 2]),
                await client.post(f"{url}/no_such_tool", json={}),
            ]

    bad_json, not_object, unknown = asyncio.run(run())
    assert bad_json.status_code == 400 and "not JSON" in bad_json.json()["message"]
    assert not_object.status_code == 400 and "JSON object" in not_object.json()["message"]
    assert unknown.status_code == 200
    assert unknown.json()["error_type"] == "tool_not_found"
    assert [c.tool_name for c in gateway.calls] == ["no_such_tool"]


def test_mcp_client_lists_and_calls_tools(scenario: Scenario) -> None:
    mcp = pytest.importorskip("mcp")
    from mcp.client.streamable_http import streamable_http_client

    httpx2 = pytest.importorskip("httpx2")
    gateway = gateway_for(scenario)
    name, params = first_call(scenario)

    async def run() -> tuple[Any, Any]:
        async with serve_tool_bridge(gateway, scenario.agent) as bridge:
            assert bridge.mcp_url is not None
            http = httpx2.AsyncClient(headers=auth(bridge))
            async with (
                http,
                streamable_http_client(bridge.mcp_url, http_client=http) as (read, write),
                mcp.ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await session.list_tools(), await session.call_tool(name, params)

    listed, result = asyncio.run(run())
    assert [t.name for t in listed.tools] == [
        s["function"]["name"] for s in openai_tool_schemas(scenario.agent)
    ]
    assert result.structured_content == gateway.calls[0].response
    assert result.is_error is (gateway.calls[0].response["status"] == "error")
    assert [c.tool_name for c in gateway.calls] == [name]


def test_mcp_endpoint_requires_the_token(scenario: Scenario) -> None:
    pytest.importorskip("mcp")
    gateway = gateway_for(scenario)
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}

    async def run() -> list[int]:
        async with serve_tool_bridge(gateway, scenario.agent) as bridge:
            assert bridge.mcp_url is not None
            async with httpx.AsyncClient(headers=headers) as client:
                return [
                    (await client.post(bridge.mcp_url, json=request)).status_code,
                    (
                        await client.post(
                            bridge.mcp_url, json=request, headers=auth(bridge, "x" * 43)
                        )
                    ).status_code,
                ]

    assert asyncio.run(run()) == [401, 403]


def test_scenario_is_shared_only_on_request(scenario: Scenario) -> None:
    async def run(share: bool) -> tuple[BridgeEndpoint, int, Scenario | None]:
        config = BridgeConfig(mcp=False, share_scenario=share)
        async with serve_tool_bridge(gateway_for(scenario), scenario.agent, config, scenario) as b:
            async with httpx.AsyncClient(headers=auth(b)) as client:
                status = (await client.get(f"{b.base_url}/scenario")).status_code
            shared = None
            if share:
                shared = await asyncio.to_thread(fetch_scenario, b.start_parameters())
            return b, status, shared

    hidden, status, _ = asyncio.run(run(False))
    assert status == 404 and "scenario_url" not in hidden.start_parameters()
    with pytest.raises(BridgeParametersError, match="share_scenario"):
        fetch_scenario(hidden.start_parameters())
    _, status, shared = asyncio.run(run(True))
    assert status == 200 and shared == scenario


def test_http_gateway_from_a_worker_thread(scenario: Scenario) -> None:
    gateway = gateway_for(scenario)
    name, params = first_call(scenario)

    async def run() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        async with serve_tool_bridge(gateway, scenario.agent, BridgeConfig(mcp=False)) as b:
            client = HttpToolGateway.from_start_parameters(b.start_parameters())
            try:
                response = await asyncio.to_thread(client.call, name, params)
                schemas = await asyncio.to_thread(client.schemas)
            finally:
                client.close()
            return response, schemas

    response, schemas = asyncio.run(run())
    assert response == gateway.calls[0].response
    assert schemas == openai_tool_schemas(scenario.agent)
    with pytest.raises(BridgeParametersError, match="tools_url"):
        HttpToolGateway.from_start_parameters({"tools_token": "t"})


def test_http_gateway_reports_an_unreachable_bridge_as_data() -> None:
    client = HttpToolGateway("http://127.0.0.1:9/tools", "token", timeout_s=1.0)
    response = client.call("get_reservation", {})
    client.close()
    assert response["status"] == "error"
    assert response["error_type"] == "bridge_unreachable"
